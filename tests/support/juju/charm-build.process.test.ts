// The charm is built once however many mocha workers ask for it at the same time (tests/support/juju/charm-build.ts).
// Nothing upstream is simulated here: the build is our own (scripts/build.ts).
import { expect } from 'chai';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { buildOnce } from './charm-build.ts';

describe('tests/support/juju/charm-build: one build at a time', function () {
  let work: string;
  let lockDir: string;
  beforeEach(() => {
    work = mkdtempSync(join(tmpdir(), 'charm-build-lock-'));
    lockDir = join(work, 'charm.lock');
  });
  afterEach(() => rmSync(work, { recursive: true, force: true }));

  /** A build that takes a while and leaves a fresh result, counting how often it ran and how many ran at once. */
  function slowBuild() {
    const counts = { builds: 0, running: 0, mostAtOnce: 0 };
    let fresh = false;
    return {
      counts,
      options: {
        lockDir,
        isFresh: () => fresh,
        build: async () => {
          counts.builds++;
          counts.mostAtOnce = Math.max(counts.mostAtOnce, ++counts.running);
          await sleep(300);
          counts.running--;
          fresh = true;
        },
      },
    };
  }

  it('callers that ask at once get one build, and the lock is gone afterwards', async () => {
    const { counts, options } = slowBuild();
    await Promise.all([buildOnce(options), buildOnce(options), buildOnce(options)]);
    expect(counts).to.deep.equal({ builds: 1, running: 0, mostAtOnce: 1 });
    expect(existsSync(lockDir)).to.equal(false);
  });

  it('waits while a live process holds the lock, then finds the build fresh and builds nothing', async () => {
    mkdirSync(lockDir);
    writeFileSync(join(lockDir, 'pid'), String(process.pid));
    const { counts, options } = slowBuild();
    let fresh = false;
    const waiting = buildOnce({ ...options, isFresh: () => fresh });
    await sleep(400);
    expect(counts.builds, 'built while another held the lock').to.equal(0);
    fresh = true;
    rmSync(lockDir, { recursive: true });
    await waiting;
    expect(counts.builds).to.equal(0);
  });

  it('takes over the lock of a process that died holding it', async () => {
    const dead = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], { encoding: 'utf8' });
    mkdirSync(lockDir);
    writeFileSync(join(lockDir, 'pid'), dead.stdout);
    const { counts, options } = slowBuild();
    await buildOnce(options);
    expect(counts.builds).to.equal(1);
    expect(existsSync(lockDir)).to.equal(false);
  });

  it('a failed build releases the lock, so the next caller can build', async () => {
    await buildOnce({ lockDir, isFresh: () => false, build: () => Promise.reject(new Error('esbuild failed')) }).then(
      () => expect.fail('the failed build should reject'),
      (error: Error) => expect(error.message).to.equal('esbuild failed'),
    );
    expect(existsSync(lockDir)).to.equal(false);
    const { counts, options } = slowBuild();
    await buildOnce(options);
    expect(counts.builds).to.equal(1);
  });
});
