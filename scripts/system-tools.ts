// Checks, before the demo, the bench, the soak or the test suite start anything, that the programs they run from
// Debian packages are installed, and names the command that installs the missing ones. The table is
// scripts/system-tools.json, shared with scripts/setup.mjs.
import { accessSync, constants } from 'node:fs';
import { delimiter, join } from 'node:path';
import table from './system-tools.json' with { type: 'json' };

export type ToolUser = 'demo' | 'test' | 'bench' | 'soak';

const NEEDS: Record<ToolUser, string> = { demo: 'The demo needs', test: 'The tests need', bench: 'The bench needs', soak: 'The soak needs' };

export function executable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

function installed(tool: { command: string; paths?: string[] }, path: string): boolean {
  return path.split(delimiter).some((folder) => folder !== '' && executable(join(folder, tool.command))) || (tool.paths ?? []).some(executable);
}

const listed = (words: string[]) => (words.length < 2 ? words.join('') : `${words.slice(0, -1).join(', ')} and ${words.at(-1)}`);

/** One sentence that names what `user` needs and lacks, and how to install it; undefined when nothing is missing. */
export function missingToolsSentence(user: ToolUser, path = process.env.PATH ?? ''): string | undefined {
  const missing = table.tools.filter((tool) => tool.neededBy.includes(user) && !installed(tool, path));
  if (missing.length === 0) return undefined;
  const commands = missing.map((tool) => tool.command);
  const packages = [...new Set(missing.map((tool) => tool.package))];
  const they = commands.length === 1 ? 'which is' : 'which are';
  return `${NEEDS[user]} ${listed(commands)}, ${they} not installed: run \`npm run setup\` (it installs the Debian package${packages.length === 1 ? '' : 's'} ${listed(packages)}) or \`sudo apt-get install ${packages.join(' ')}\`.`;
}

/** For the entry points (demo, bench, soak): stops the process with the sentence when something is missing. */
export function requireSystemTools(user: ToolUser): void {
  const sentence = missingToolsSentence(user);
  if (sentence === undefined) return;
  process.stderr.write(`${sentence}\n`);
  process.exit(1);
}
