// Hostile and damaged archives: every bit flip and truncation of the tarball and the checksummed files is found by
// verify-backup, and random or mutated bytes and manifests are refused in words, never with an exception.
import { expect } from 'chai';
import { startWriter } from '../support/backup-store.ts';
import fc from 'fast-check';
import { readItems, verifyBackup } from '../../src/catalog/index.ts';
import { parseManifest } from '../../src/archive/manifest.ts';
import { backupKeys } from '../../src/store/layout.ts';
import { CONFIGMAPS, NOTEBOOKS, PROFILES, SECRETS, notebook, profile, secret } from '../archive/sample-objects.ts';
import { MemoryBackupStore } from '../../src/store/backup-store.ts';
import { MemoryObjects } from '../../src/store/memory-objects.ts';

const ID = 'kf-20250601-120000-abcdef';

async function writeBackup(): Promise<MemoryObjects> {
  const store = new MemoryObjects({ prefix: 'fuzz' });
  const writer = await startWriter(new MemoryBackupStore(store), { id: ID, toolVersion: 'fuzz', scope: { action: 'backup-state', namespaces: ['alice'], profiles: ['alice'], includeVolumes: false, includeControlPlane: false } });
  await writer.addItem(PROFILES, profile('alice'));
  for (let i = 0; i < 4; i++) await writer.addItem(NOTEBOOKS, notebook('alice', `nb-${i}`, 40));
  await writer.addItem(SECRETS, secret('alice', 'creds', { token: 'not-a-real-token' }));
  await writer.addItem(CONFIGMAPS, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'cm', namespace: 'alice' }, data: { a: 'b' } });
  await writer.commit();
  return store;
}

describe('fuzz: archives', function () {
  this.timeout(60_000);
  let pristine: MemoryObjects;
  const keys = backupKeys(ID);
  const checksummed = [keys.tarball, keys.resourceList, keys.logs, keys.results];

  before(async () => {
    pristine = await writeBackup();
    expect((await verifyBackup(new MemoryBackupStore(pristine), ID)).status).to.equal('ok');
  });

  function positions(length: number, count: number): number[] {
    // Every byte of small files; evenly spread over larger ones, always including the first and last bytes.
    if (length <= count) return Array.from({ length }, (_, i) => i);
    return Array.from({ length: count }, (_, i) => Math.floor((i * (length - 1)) / (count - 1)));
  }

  for (const which of ['tarball', 'resourceList', 'logs', 'results'] as const) {
    it(`finds every single-bit flip and every truncation of the ${which}`, async () => {
      const key = keys[which];
      const bytes = pristine.bytesOf(key)!;
      let cases = 0;
      for (const at of positions(bytes.length, which === 'tarball' ? 500 : 150)) {
        for (const [label, damaged] of [
          [`bit ${at * 8 + (at % 8)} flipped`, Buffer.from(bytes).fill(bytes[at]! ^ (1 << (at % 8)), at, at + 1)],
          [`truncated to ${at} bytes`, bytes.subarray(0, at)],
        ] as const) {
          const store = pristine.clone();
          await store.put(key, damaged);
          const report = await verifyBackup(new MemoryBackupStore(store), ID);
          expect(report.status, `${which} ${label}`).to.equal('corrupt');
          cases++;
        }
      }
      // Small files are damaged at every byte; the tarball at 500 spread positions (1000 cases).
      expect(cases).to.equal(2 * Math.min(bytes.length, which === 'tarball' ? 500 : 150));
    });
  }

  it('random and mutated tarballs (1000 cases): verify reports corrupt, a restore read throws only ArchiveError', async () => {
    const tarball = pristine.bytesOf(keys.tarball)!;
    const mutated = fc.tuple(fc.array(fc.tuple(fc.nat(), fc.integer({ min: 0, max: 255 })), { minLength: 1, maxLength: 8 }), fc.boolean()).map(([edits, cut]) => {
      const b = Buffer.from(tarball);
      for (const [at, value] of edits) b[at % b.length] = value;
      return cut ? b.subarray(0, edits[0]![0] % b.length) : b;
    });
    const bytes = fc.oneof(fc.uint8Array({ maxLength: 2048 }).map((a) => Buffer.from(a)), mutated);
    await fc.assert(fc.asyncProperty(bytes, async (damaged) => {
      if (damaged.equals(tarball)) return;
      const store = pristine.clone();
      await store.put(keys.tarball, damaged);
      const report = await verifyBackup(new MemoryBackupStore(store), ID);
      expect(report.status).to.equal('corrupt');
      for (const p of report.problems) expect(p.message).not.to.match(/\n\s+at /);
      const manifest = parseManifest(store.bytesOf(keys.manifest)!);
      try {
        for await (const _ of readItems(new MemoryBackupStore(store), ID, { expected: manifest.ok ? manifest : null })) void _;
        expect.fail('a damaged tarball was read through');
      } catch (error) {
        expect((error as Error).name).to.equal('ArchiveError');
      }
    }), { numRuns: 1000 });
  });

  it('manifest JSON, random or mutated (2000 cases): parsed or refused with a reason, never thrown', () => {
    const text = pristine.bytesOf(keys.manifest)!.toString();
    const mutatedText = fc.tuple(fc.nat(), fc.nat({ max: 20 }), fc.string({ maxLength: 6 })).map(([at, del, insert]) => {
      const i = at % text.length;
      return text.slice(0, i) + insert + text.slice(i + del);
    });
    fc.assert(fc.property(fc.oneof(mutatedText, fc.json(), fc.string()), (candidate) => {
      const result = parseManifest(Buffer.from(candidate));
      if (!result.ok) expect(result.reason).to.be.a('string').and.not.match(/\n/);
    }), { numRuns: 1000 });
    fc.assert(fc.property(fc.anything(), (value) => {
      let json: string | undefined;
      try { json = JSON.stringify(value); } catch { return; }
      const result = parseManifest(Buffer.from(json ?? 'undefined'));
      expect(result.ok).to.equal(false);
    }), { numRuns: 1000 });
  });
});
