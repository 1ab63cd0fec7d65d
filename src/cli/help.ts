// --help text, generated from the same option tables the parser uses, so the two cannot disagree.
import type { Command, OptionSpec } from './usage.ts';

export const PROGRAM = 'kubeflow-upgrader';

export const EXIT_CODES = { ok: 0, failed: 1, usage: 2 } as const;

function flagText(name: string, spec: OptionSpec): string {
  const short = spec.short ? `-${spec.short}, ` : '';
  return `${short}--${name}${spec.placeholder ? ` ${spec.placeholder}` : ''}`;
}

function wrap(text: string, width: number, indent: number): string[] {
  const words = text.split(/\s+/);
  const lines: string[] = [];
  let line = '';
  for (const word of words) {
    if (line && line.length + word.length + 1 > width - indent) {
      lines.push(line);
      line = word;
    } else line = line ? `${line} ${word}` : word;
  }
  if (line) lines.push(line);
  return lines;
}

/** The one-line usage shown after a usage error. */
export function usageLine(command: Command | undefined): string {
  if (!command) return `usage: ${PROGRAM} <backup|restore|list|verify|check|snapshot-profiles> [options]  (try ${PROGRAM} --help)`;
  return `usage: ${command.synopsis}  (try ${PROGRAM} ${command.name} --help)`;
}

export function commandHelp(command: Command): string {
  const out: string[] = [`${PROGRAM} ${command.name} — ${command.summary}`, '', `Usage: ${command.synopsis}`, ''];
  out.push(...wrap(command.description, 100, 0), '');
  if (command.positionals.length) {
    out.push('Arguments:');
    for (const p of command.positionals) out.push(`  ${p.name.padEnd(30)} ${p.description}${p.required ? ' (required)' : ''}`);
    out.push('');
  }
  for (const group of command.groups) {
    out.push(`${group.title}:`);
    for (const [name, spec] of Object.entries(group.options)) {
      const flag = flagText(name, spec);
      const details = [spec.description];
      if (spec.default !== undefined) details.push(`(default: ${spec.default})`);
      if (spec.env?.length) details.push(`[env: ${spec.env.join(', ')}]`);
      const lines = wrap(details.join(' '), 100, 34);
      out.push(`  ${flag.padEnd(30)}  ${lines[0] ?? ''}`);
      for (const more of lines.slice(1)) out.push(`${' '.repeat(34)}${more}`);
    }
    out.push('');
  }
  out.push('Exit codes:', `  0  ${command.exitCodes.ok}`, `  1  ${command.exitCodes.failed}`, '  2  usage error: an unknown or malformed flag or a missing setting; nothing was changed', '');
  out.push('Examples:');
  for (const example of command.examples) out.push(`  ${example}`);
  return `${out.join('\n')}\n`;
}

export function programHelp(commands: readonly Command[]): string {
  const width = Math.max(...commands.map((c) => c.name.length));
  return [
    `${PROGRAM} — reversible Charmed Kubeflow upgrades: back up Kubeflow state to S3, restore it, check before a refresh.`,
    '',
    `Usage: ${PROGRAM} <command> [options]`,
    `       ${PROGRAM} <command> --help`,
    '',
    'Commands:',
    ...commands.map((c) => `  ${c.name.padEnd(width)}  ${c.summary}`),
    '',
    'Common settings:',
    '  Kubernetes   --kubeconfig, --context, KUBECONFIG (as kubectl)',
    '  S3           --s3-url s3://<bucket>/<prefix>, --endpoint, --region, --uri-style, --ca-file;',
    '               credentials only from AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY;',
    '               AWS_REGION, AWS_ENDPOINT_URL_S3 / AWS_ENDPOINT_URL, KFU_S3_URL',
    '  Secrets      --encryption-key-file <path> or KFU_ENCRYPTION_KEY',
    '  Output       --json for machines; a progress bar on a terminal, plain lines otherwise (stderr)',
    '',
    'Exit codes: 0 ok, 1 the operation failed (or found a problem), 2 usage error (nothing was changed).',
    '',
    'The same engine runs as the kubeflow-upgrader Juju charm; see docs/cli.md and README.md.',
    '',
  ].join('\n');
}
