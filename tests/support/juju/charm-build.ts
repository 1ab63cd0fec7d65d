// The unpacked charm the dispatch tests run: built once per test run, and again only when a source changed.
// Nothing upstream is simulated here: it is our own build (scripts/build.ts) of the charm Juju would unpack.
//
// `npm test` runs test files in several mocha worker processes at once, and each of them may ask for the charm. The
// build swaps build/charm out and in whole (scripts/build.ts), so two builds at once could pull the charm away from
// under a dispatch another worker is running. One process builds, holding a lock directory beside the charm; the
// others wait for it to go and then find the build fresh.
import { mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { buildCharm, defaultCharmDir, isBuildFresh } from '../../../scripts/build.ts';

let building: Promise<string> | undefined;

export function ensureCharmBuilt(): Promise<string> {
  building ??= buildOnce({
    lockDir: `${defaultCharmDir}.lock`,
    isFresh: () => isBuildFresh(defaultCharmDir),
    build: () => buildCharm({ outDir: defaultCharmDir }),
  }).then(() => defaultCharmDir);
  return building;
}

export interface BuildOnceOptions {
  /** made (atomically) by the one process that builds, removed when it is done */
  lockDir: string;
  isFresh: () => boolean;
  build: () => Promise<unknown>;
}

/** Builds unless fresh, while no other process (or caller) builds: the others wait and then find it fresh. */
export async function buildOnce({ lockDir, isFresh, build }: BuildOnceOptions): Promise<void> {
  for (;;) {
    if (isFresh()) return;
    if (takeLock(lockDir)) {
      try {
        // Another process may have finished its build between our check and our lock.
        if (!isFresh()) await build();
        return;
      } finally {
        rmSync(lockDir, { recursive: true, force: true });
      }
    }
    await sleep(100);
  }
}

/** mkdir is atomic: exactly one caller creates the lock. A lock whose owner died (a killed run) is removed. */
function takeLock(lockDir: string): boolean {
  mkdirSync(dirname(lockDir), { recursive: true });
  try {
    mkdirSync(lockDir);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    if (!ownerAlive(lockDir)) rmSync(lockDir, { recursive: true, force: true });
    return false;
  }
  writeFileSync(join(lockDir, 'pid'), String(process.pid));
  return true;
}

function ownerAlive(lockDir: string): boolean {
  let pid: number;
  try {
    pid = Number(readFileSync(join(lockDir, 'pid'), 'utf8'));
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
