// The CLI as a function: argv in, exit code out, with the streams and environment handed in (tests run it in a child
// process through main.ts; nothing here exits the process).
import { parseArgs, type ParseArgsConfig } from 'node:util';
import { backupCommand } from './commands/backup.ts';
import { checkCommand } from './commands/check.ts';
import { listCommand } from './commands/list.ts';
import { recoverCommand } from './commands/recover.ts';
import { pruneCommand } from './commands/prune.ts';
import { restoreCommand } from './commands/restore.ts';
import { snapshotProfilesCommand } from './commands/snapshot-profiles.ts';
import { verifyCommand } from './commands/verify.ts';
import { commandHelp, EXIT_CODES, programHelp, usageLine } from './help.ts';
import { Output } from './output.ts';
import { optionsOf, UsageError, type Command, type Values } from './usage.ts';
import { describe } from '../errors/index.ts';

export const commands: readonly Command[] = [backupCommand, restoreCommand, listCommand, verifyCommand, checkCommand, snapshotProfilesCommand, pruneCommand, recoverCommand];

export interface CliIo {
  stdout: NodeJS.WritableStream & { isTTY?: boolean };
  stderr: NodeJS.WritableStream & { isTTY?: boolean; columns?: number };
  env: NodeJS.ProcessEnv;
}

/** node:util's messages are long and name internals; the user gets the flag and the fix. */
function usageMessage(error: unknown): string {
  const e = error as { code?: string; message?: string };
  const message = e.message ?? String(error);
  const flag = /'(-{1,2}[^'\s]+)/.exec(message)?.[1];
  switch (e.code) {
    case 'ERR_PARSE_ARGS_UNKNOWN_OPTION':
      return `unknown option ${flag ?? ''}`.trim();
    case 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE':
      return /argument missing/.test(message) ? `option ${flag ?? ''} needs a value` : `option ${flag ?? ''} takes no value`;
    case 'ERR_PARSE_ARGS_UNEXPECTED_POSITIONAL':
      return `unexpected argument ${/'([^']+)'/.exec(message)?.[1] ?? ''}`.trim();
    default:
      return message.split('\n')[0]!;
  }
}

export async function runCli(argv: readonly string[], io: CliIo): Promise<number> {
  const [name, ...rest] = argv;
  if (name === undefined || name === '--help' || name === '-h' || name === 'help') {
    io.stdout.write(programHelp(commands));
    return name === undefined ? EXIT_CODES.usage : EXIT_CODES.ok;
  }
  if (name === '--version' || name === '-V') {
    const { TOOL_VERSION } = await import('./version.ts');
    io.stdout.write(`${TOOL_VERSION}\n`);
    return EXIT_CODES.ok;
  }
  const command = commands.find((c) => c.name === name);
  if (!command) {
    io.stderr.write(`kubeflow-upgrader: unknown command "${name}"; ${usageLine(undefined)}\n`);
    return EXIT_CODES.usage;
  }
  let values: Values;
  let positionals: string[];
  try {
    const options = optionsOf(command);
    const config: ParseArgsConfig = {
      args: [...rest],
      strict: true,
      allowPositionals: command.positionals.length > 0,
      options: Object.fromEntries(Object.entries(options).map(([flag, spec]) => [flag, { type: spec.type, ...(spec.short ? { short: spec.short } : {}) }])),
    };
    const parsed = parseArgs(config);
    values = parsed.values as Values;
    positionals = parsed.positionals;
    if (positionals.length > command.positionals.length) throw new UsageError(`unexpected argument ${positionals[command.positionals.length]}`);
  } catch (error) {
    io.stderr.write(`kubeflow-upgrader ${command.name}: ${usageMessage(error)}; ${usageLine(command)}\n`);
    return EXIT_CODES.usage;
  }
  if (values.help === true) {
    io.stdout.write(commandHelp(command));
    return EXIT_CODES.ok;
  }
  const out = new Output({
    json: values.json === true,
    tty: io.stderr.isTTY === true && io.env.TERM !== 'dumb',
    stdout: io.stdout,
    stderr: io.stderr,
    ...(io.stderr.columns ? { columns: io.stderr.columns } : {}),
  });
  try {
    return await command.run({ values, positionals, env: io.env, out });
  } catch (error) {
    if (error instanceof UsageError) {
      out.error(`${command.name}: ${error.message.replace(/\.$/, '')}; ${usageLine(command)}`);
      return EXIT_CODES.usage;
    }
    out.error(`${command.name} failed: ${describe(error)}`);
    return EXIT_CODES.failed;
  }
}
