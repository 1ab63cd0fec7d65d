// The unpacked charm the dispatch tests run: built once per test run, and again only when a source changed.
//
// `npm test` runs test files in several mocha worker processes at once, and each of them may ask for the charm. The
// build swaps build/charm out and in whole (scripts/build.ts), so two builds at once could pull the charm away from
// under a dispatch another worker is running. One process builds, holding a lock directory beside the charm; the
// others wait for it to go and then find the build fresh.
import { mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { buildCharm, defaultCharmDir, isBuildFresh } from '../../../scripts/build.ts';

const lockDir = `${defaultCharmDir}.lock`;
const ownerFile = join(lockDir, 'pid');

let building: Promise<string> | undefined;

export function ensureCharmBuilt(): Promise<string> {
  building ??= buildOnceAcrossProcesses();
  return building;
}

async function buildOnceAcrossProcesses(): Promise<string> {
  for (;;) {
    if (isBuildFresh(defaultCharmDir)) return defaultCharmDir;
    if (takeLock()) {
      try {
        // Another process may have finished its build between our check and our lock.
        return isBuildFresh(defaultCharmDir) ? defaultCharmDir : await buildCharm({ outDir: defaultCharmDir });
      } finally {
        rmSync(lockDir, { recursive: true, force: true });
      }
    }
    await sleep(100);
  }
}

/** mkdir is atomic: exactly one process creates the lock. A lock whose owner died (a killed run) is taken over. */
function takeLock(): boolean {
  mkdirSync(dirname(defaultCharmDir), { recursive: true });
  try {
    mkdirSync(lockDir);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    if (ownerAlive()) return false;
    rmSync(lockDir, { recursive: true, force: true });
    return false;
  }
  writeFileSync(ownerFile, String(process.pid));
  return true;
}

function ownerAlive(): boolean {
  let pid: number;
  try {
    pid = Number(readFileSync(ownerFile, 'utf8'));
  } catch {
    // The owner made the directory and is about to write its pid, unless it died in between long ago.
    try {
      return Date.now() - statSync(lockDir).mtimeMs < 10_000;
    } catch {
      return false;
    }
  }
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}
