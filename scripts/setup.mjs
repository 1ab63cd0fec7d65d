// npm run setup: makes a fresh machine ready for the demo and the tests. It installs the Debian packages listed in
// scripts/system-tools.json that are missing (with apt-get, as root or through sudo), then runs `npm ci`, which also
// brings the project's own Node.js 24. Plain JavaScript with no dependencies, so the machine's own Node (20 or newer)
// runs it before anything is installed.
import { spawnSync } from 'node:child_process';
import { accessSync, constants, readFileSync } from 'node:fs';
import { delimiter, join } from 'node:path';

const table = JSON.parse(readFileSync(new URL('./system-tools.json', import.meta.url), 'utf8'));

function onPath(command) {
  for (const folder of (process.env.PATH ?? '').split(delimiter)) {
    try {
      accessSync(join(folder, command), constants.X_OK);
      return true;
    } catch { /* not in this folder */ }
  }
  return false;
}

const present = (tool) => onPath(tool.command) || (tool.paths ?? []).some((path) => {
  try { accessSync(path, constants.X_OK); return true; } catch { return false; }
});

function stop(sentence) {
  process.stderr.write(`setup: ${sentence}\n`);
  process.exit(1);
}

function run(command, args, env = process.env) {
  const result = spawnSync(command, args, { stdio: 'inherit', env });
  return result.status === 0;
}

// apt-get and dpkg print hundreds of progress lines; they are shown only when the install fails.
function runQuietly(command, args, env) {
  const result = spawnSync(command, args, { env, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
  if (result.status !== 0) process.stderr.write(`${result.stdout ?? ''}${result.stderr ?? ''}`.split('\n').slice(-25).join('\n'));
  return result.status === 0;
}

const missing = [...new Set(table.tools.filter((tool) => !present(tool)).map((tool) => tool.package))];
if (missing.length > 0) {
  const list = missing.join(' ');
  const why = missing.map((name) => `${name} (${table.packages[name]})`).join('; ');
  if (!onPath('apt-get')) stop(`this machine has no apt-get; install the same packages (rclone, and the MariaDB server and client) with its own package manager, then run npm run setup again.`);
  const asRoot = process.getuid?.() === 0;
  if (!asRoot && !onPath('sudo')) stop(`installing ${list} needs root and there is no sudo; run \`apt-get install ${list}\` as root, then npm run setup again.`);
  process.stdout.write(`setup: installing the Debian package(s) ${list} with apt-get: ${why}.\n`);
  const [command, prefix] = asRoot ? ['apt-get', []] : ['sudo', ['apt-get']];
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  if (!runQuietly(command, [...prefix, 'update', '-qq'], env) || !runQuietly(command, [...prefix, 'install', '-y', '-qq', '--no-install-recommends', ...missing], env)) {
    stop(`apt-get could not install ${list} (see its output above); install them by hand, then run npm run setup again.`);
  }
  const still = table.tools.filter((tool) => !present(tool)).map((tool) => tool.command);
  if (still.length > 0) stop(`after installing ${list}, ${still.join(' and ')} is still not found on PATH.`);
}

// --loglevel=error: npm runs on the machine's Node (20 or newer), so it warns EBADENGINE for dependencies that want a
// newer one; they never run on it, since every script runs on the Node.js 24 that this very install brings.
if (!run('npm', ['ci', '--no-audit', '--no-fund', '--loglevel=error'])) stop('npm ci failed (see its output above).');
