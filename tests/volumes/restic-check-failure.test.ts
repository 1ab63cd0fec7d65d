// What a failed restic check found, as one clause: a table over restic 0.14's own error lines (restic/restic
// internal/checker/checker.go, internal/restic/lock.go, cmd/restic/cmd_check.go at v0.14.0), one row per case. The
// cases a real repository produces on s3rver are also run for real in restic-check.test.ts.
import { expect } from 'chai';
import { judgeCheckFailure } from '../../src/volumes/restic/check.ts';
import { charmWording } from '../../src/charm/remedy-wording.ts';

const A = 'a'.repeat(64);
const B = 'b'.repeat(64);
const pinned = [{ pvc: 'workspace', snapshot: A }, { pvc: 'datasets', snapshot: B }];

const rows: Array<{ name: string; stderr: string; status: 'damaged' | 'not-checked'; problem: string }> = [
  {
    name: 'a pack whose sha256 is not its name',
    stderr: `Pack ID does not match, want ${'1'.repeat(64)}, got ${'2'.repeat(64)}\nFatal: repository contains errors`,
    status: 'damaged', problem: 'pack 11111111 does not match its hash (its bytes were changed or damaged in the bucket)',
  },
  {
    name: 'a pack of another size than its index says',
    stderr: `pack ${'3'.repeat(64)}: unexpected file size: got 10, expected 20\nFatal: repository contains errors`,
    status: 'damaged', problem: 'pack 33333333 has another size than its index records',
  },
  {
    name: 'a pack whose blobs fail their MAC',
    stderr: `pack ${'4'.repeat(64)} contains 1 errors: [blob ${'5'.repeat(64)}: ciphertext verification failed]\nFatal: repository contains errors`,
    status: 'damaged', problem: 'pack 44444444 holds blobs that fail their authentication (MAC)',
  },
  {
    name: 'a tree that cannot be read, after a missing pack: both named, the pinned snapshot first',
    stderr: `pack ${'6'.repeat(64)}: does not exist\nerror for tree 77777777:\n  ReadFull(<data/6666666666>): not found\nkfu-pinned-snapshot-missing ${B}\nFatal: repository contains errors`,
    status: 'damaged', problem: 'the snapshot pinned for PVC datasets (bbbbbbbb) is not in the repository; pack 66666666 is missing, and 1 more problem',
  },
  {
    name: 'two pinned snapshots missing',
    stderr: `kfu-pinned-snapshot-missing ${A}\nkfu-pinned-snapshot-missing ${B}`,
    status: 'damaged', problem: 'the snapshots pinned for PVCs workspace (aaaaaaaa), datasets (bbbbbbbb) are not in the repository',
  },
  {
    name: 'locked by a backup',
    stderr: 'unable to create lock in backend: repository is already locked by PID 7 on mover by jovyan (UID 1000, GID 100)\nlock was created at 2026-12-02 01:00:00 (1m0s ago)',
    status: 'not-checked', problem: 'the repository is locked by another restic (a backup or a prune of this location is running): run verify-backup again once it has ended',
  },
  {
    name: 'another key',
    stderr: 'Fatal: wrong password or no key found',
    status: 'not-checked', problem: 'the repository does not open with the password of this encryption-key: its data was written under another key',
  },
  {
    name: 'a pack that cannot be downloaded is not damage: restic\'s line, the S3 key masked',
    stderr: `pack ${'8'.repeat(64)} failed to download: Get "https://s3/bucket?X-Amz-Credential=SECRETKEY1234": connection reset\nFatal: repository contains errors`,
    status: 'not-checked', problem: `restic could not check it: pack ${'8'.repeat(64)} failed to download: Get "https://s3/bucket?X-Amz-Credential=***": connection reset`,
  },
];

describe('volumes: what a failed restic check found', () => {
  for (const row of rows) {
    it(`${row.name} → ${row.status}`, () => {
      expect(judgeCheckFailure(row.stderr, pinned, ['SECRETKEY1234'], charmWording)).to.deep.equal({ status: row.status, problem: row.problem });
    });
  }
  it('another key, when none was given: the sentence says a key is needed, not that it is the wrong one', () => {
    expect(judgeCheckFailure('Fatal: wrong password or no key found', pinned, [], charmWording, false)).to.deep.equal({
      status: 'not-checked', problem: 'the repository does not open without an encryption-key: its data was written under a key, which verify needs to read it',
    });
  });
});
