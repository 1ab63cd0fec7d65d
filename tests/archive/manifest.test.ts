import { expect } from 'chai';
import fc from 'fast-check';
import { parseManifest } from '../../src/archive/manifest.ts';
import { splitEntries } from '../../src/archive/manifest-entries.ts';
import { decodeManifest } from '../../src/archive/reader.ts';
import { Readable } from 'node:stream';

const digest = (c: string) => c.repeat(64);
function manifestWith(entries: unknown, more: Record<string, unknown> = {}): Buffer {
  return Buffer.from(JSON.stringify({
    formatVersion: 1, veleroFormatVersion: '1.1.0', tool: { name: 'kubeflow-upgrader', version: '0.1.0' }, backupId: 'kf-1',
    created: '2026-11-30T00:00:00.000Z', completed: '2026-11-30T00:00:01.000Z', scope: { action: 'backup-state' },
    counts: {}, objects: 0, bytes: 0, checksums: { algorithm: 'sha256', tarball: digest('a'), entries }, encryption: null, ...more,
  }));
}

describe('archive manifest: the checksum entries', () => {
  it('are kept exactly as stored, every path with its digest in its order, in an index apart from the manifest', () => {
    const entries = { 'metadata/version': digest('b'), 'resources/notebooks.kubeflow.org/namespaces/alice/nb.json': digest('c'), __proto__x: digest('d') };
    const check = parseManifest(manifestWith(entries));
    if (!check.ok) throw new Error(check.reason);
    expect([...check.checksums.entries()]).to.deep.equal(Object.entries(entries));
    expect(check.checksums.get('resources/notebooks.kubeflow.org/namespaces/alice/nb.json')).to.equal(digest('c'));
    expect(check.checksums.get('resources/none.json')).to.equal(undefined);
    expect(check.manifest.checksums).to.deep.equal({ algorithm: 'sha256', tarball: digest('a'), files: {} });
  });

  it('refuse a manifest naming the first entry whose digest is not a sha256, and one whose entries are not an object', () => {
    const bad = parseManifest(manifestWith({ 'metadata/version': digest('b'), 'resources/x/cluster/y.json': 'not-a-digest' }));
    expect(bad).to.deep.equal({ ok: false, reason: 'field checksums.entries.resources/x/cluster/y.json must be a sha256 hex digest' });
    for (const entries of [null, ['a'], 'x', undefined]) {
      const check = parseManifest(manifestWith(entries));
      expect(check.ok, JSON.stringify(entries)).to.equal(false);
      if (!check.ok) expect(check.reason).to.match(/^field checksums\.entries /);
    }
  });
});

describe('archive manifest: the typed extras', () => {
  const entry = { part: 'kfp-db', database: 'mlpipeline', key: 'backups/kf-1/control-plane/mysql/mlpipeline.sql.gz', bytes: 10, sha256: digest('e'), tool: 'mysqldump', rclone: 'v1.60' };

  it('reads each section in its own shape, fills its defaults, and keeps keys it does not know', () => {
    const check = parseManifest(manifestWith({}, { extras: { controlPlane: { entries: [entry] }, controllerPodDefaults: { alice: ['access-ml-pipeline'] }, fromTheFuture: { x: 1 } } }));
    if (!check.ok) throw new Error(check.reason);
    expect(check.manifest.extras.controlPlane).to.deep.equal({ copied: [], notCovered: [], empty: [], entries: [entry] });
    expect(check.manifest.extras.controllerPodDefaults).to.deep.equal({ alice: ['access-ml-pipeline'] });
    expect(check.manifest.extras.fromTheFuture).to.deep.equal({ x: 1 });
  });

  it('reads a malformed section as absent instead of refusing the backup its items prove', () => {
    const check = parseManifest(manifestWith({}, { extras: { controlPlane: { entries: [{ part: 'kfp-db' }] }, leftOutNamespaces: 'alice', skipped: { generated: 3 } } }));
    if (!check.ok) throw new Error(check.reason);
    expect(check.manifest.extras.controlPlane).to.equal(undefined);
    expect(check.manifest.extras.leftOutNamespaces).to.equal(undefined);
    expect(check.manifest.extras.skipped).to.deep.equal({ generated: 3 });
  });
});

describe('archive manifest: how a volume was read', () => {
  const volume = { namespace: 'alice', pvc: 'ws', key: 'backups/kf-1/volumes/alice/ws', files: 1, bytes: 2 };

  it('keeps a volume entry\'s copy (snapshot at a time, or live and why), and reads an entry of an older backup without one', () => {
    const snapshot = { from: 'snapshot', pointInTime: true, takenAt: '2026-12-08T00:00:00.000Z', volumeSnapshotClass: 'csi-snapclass' };
    const live = { from: 'live', pointInTime: false, reason: 'no VolumeSnapshotClass has driver nfs.csi.k8s.io' };
    const check = parseManifest(manifestWith({}, { volumes: [{ ...volume, copy: snapshot }, { ...volume, pvc: 'b', copy: live }, { ...volume, pvc: 'old' }] }));
    if (!check.ok) throw new Error(check.reason);
    expect(check.manifest.volumes.map((v) => v.copy)).to.deep.equal([snapshot, live, undefined]);
  });

  it('refuses a copy that says neither snapshot nor live', () => {
    expect(parseManifest(manifestWith({}, { volumes: [{ ...volume, copy: { from: 'clone', pointInTime: true } }] })).ok).to.equal(false);
  });
});

describe('archive manifest: the entries read from the bytes', () => {
  // The string is read by JSON.parse whole: the reference the bytes' path (manifest-entries.ts) must match exactly.
  const both = (text: string) => {
    const view = (check: ReturnType<typeof parseManifest>) => (check.ok ? { manifest: check.manifest, entries: [...check.checksums.entries()] } : check);
    return { fromBytes: view(parseManifest(Buffer.from(text))), fromText: view(parseManifest(text)) };
  };
  const document = (entriesText: string, extra = '') =>
    `{"formatVersion":1,"veleroFormatVersion":"1.1.0","tool":{"name":"kubeflow-upgrader","version":"0.1.0"},"backupId":"kf-1",` +
    `"created":"2026-11-30T00:00:00.000Z","completed":"2026-11-30T00:00:01.000Z","scope":{"action":"backup-state"},"counts":{},` +
    `"objects":0,"bytes":0,"checksums":{"algorithm":"sha256","tarball":"${digest('a')}","entries":${entriesText}},"encryption":null${extra}}`;

  it('give what JSON.parse of the whole text gives, for the manifests the writer makes and for odd ones', () => {
    const written = JSON.parse(manifestWith({ 'metadata/version': digest('b'), 'resources/x/namespaces/ä/y.json': digest('c') }).toString());
    const cases = [
      JSON.stringify(written, null, 1),
      JSON.stringify(written),
      document('{}'),
      document(` {\n "a/b.json" : "${digest('1')}" ,\r\n\t"c.json":"${digest('2')}"} `),
      document(`{"a\\"b.json":"${digest('1')}","\\u0061.json":"${digest('2')}"}`),
      document(`{"a.json":"${digest('1')}","a.json":"${digest('2')}","b.json":"${digest('3')}"}`),
      document(`{"z.json":"${digest('1')}","7":"${digest('2')}"}`),
      document(`{"a.json":"${digest('A')}"}`),
      document(`{"a.json":"${digest('1')}",}`),
      document(`{"a.json":"${digest('1')}"`),
      document(`{"a\u0001.json":"${digest('1')}"}`),
      document(`{"a.json":${JSON.stringify(digest('1'))}, "b.json": 5}`),
      document('[]'),
      document(`{"a.json":"${digest('1')}"}`, `,"extras":{"checksums":{"entries":{"x":"y"}}}`),
      document(`{"a.json":"${digest('1')}"}`, `,"checksums":{"algorithm":"sha256","tarball":"${digest('a')}","entries":{}}`),
      document(`{"a.json":"${digest('1')}"}`, `,"\\u0063hecksums":{"algorithm":"sha256","tarball":"${digest('a')}","entries":{}}`),
      `\ufeff${document('{}')}`,
      `${document(`{"a.json":"${digest('1')}"}`)} x`,
      `${document(`{"a.json":"${digest('1')}"}`)}\n`,
    ];
    for (const text of cases) {
      const { fromBytes, fromText } = both(text);
      expect(fromBytes, text).to.deep.equal(fromText);
    }
  });

  it('give what JSON.parse gives for any entries object: duplicates, odd keys, odd digests and odd spacing', () => {
    // keys from a small alphabet so that duplicates, array-index keys and escapes come often; digests mostly good
    const key = fc.oneof(
      { weight: 12, arbitrary: fc.stringMatching(/^[a-c/.][a-c0-9/.]{0,3}$/) },
      { weight: 1, arbitrary: fc.stringMatching(/^[0-9]{0,2}$/) },
      { weight: 1, arbitrary: fc.constantFrom('01', 'a\\"b', 'x\\u0041', 'ü.json', '__proto__', 'tab\\t') },
    );
    const hex = fc.stringMatching(/^[0-9a-f]{64}$/);
    const value = fc.oneof({ weight: 40, arbitrary: hex.map((h) => JSON.stringify(h)) }, { weight: 1, arbitrary: fc.constantFrom(
      JSON.stringify('A'.repeat(64)), JSON.stringify('a'.repeat(63)), JSON.stringify('a'.repeat(65)), '5', 'null', `"${'b'.repeat(64)}" `,
    ) });
    const space = fc.constantFrom('', ' ', '\n', '\r\n\t ');
    const member = fc.tuple(key, value, space, space).map(([k, v, a, b]) => `${a}"${k}"${b}:${a}${v}${b}`);
    fc.assert(fc.property(fc.array(member, { maxLength: 12 }), space, (members, around) => {
      const { fromBytes, fromText } = both(document(`${around}{${members.join(',')}}${around}`));
      expect(fromBytes).to.deep.equal(fromText);
    }), { numRuns: 500 });
  });

  it('take the manifests the writer makes without JSON.parse of their entries, and leave the others to it', () => {
    const written = manifestWith({ 'metadata/version': digest('b'), 'resources/x/cluster/y.json': digest('c') });
    const split = splitEntries(Buffer.from(JSON.stringify(JSON.parse(written.toString()), null, 1)));
    expect(split?.checksums.size).to.equal(2);
    expect(JSON.parse(split!.rest).checksums.entries).to.deep.equal({});
    expect(splitEntries(Buffer.from(document(`{"a\\"b.json":"${digest('1')}"}`)))).to.equal(undefined);
    expect(splitEntries(Buffer.from(document(`{"a.json":"${digest('A')}"}`)))).to.equal(undefined);
  });
});

describe('archive manifest: read from a stream in pieces', () => {
  const marker = { state: 'absent' } as const;
  /** the manifest's bytes cut at the given points */
  const pieces = (bytes: Buffer, cuts: number[]) => {
    const at = [...new Set(cuts.map((c) => c % (bytes.length + 1)))].sort((a, b) => a - b);
    const out: Buffer[] = [];
    let from = 0;
    for (const to of [...at, bytes.length]) {
      if (to > from) out.push(bytes.subarray(from, to));
      from = Math.max(from, to);
    }
    return out;
  };

  it('gives what the whole bytes give, whatever the pieces and whether the length the store announced is right, short, long or missing', async () => {
    const entries = Object.fromEntries(Array.from({ length: 40 }, (_, i) => [`resources/configmaps/namespaces/ns-${i}/cm-${i}.json`, digest('0123456789abcdef'[i % 16]!)]));
    const bytes = manifestWith(entries, { backupId: 'kf-1' });
    const expected = parseManifest(bytes);
    if (!expected.ok) throw new Error(expected.reason);
    await fc.assert(fc.asyncProperty(
      fc.array(fc.nat(), { maxLength: 12 }),
      fc.constantFrom<'exact' | 'short' | 'long' | 'none'>('exact', 'short', 'long', 'none'),
      async (cuts, announced) => {
        const size = announced === 'exact' ? bytes.length : announced === 'short' ? Math.floor(bytes.length / 3) : announced === 'long' ? bytes.length + 100 : undefined;
        const read = await decodeManifest(Readable.from(pieces(bytes, cuts)), 'kf-1', marker, undefined, size);
        if (read.state !== 'present') throw new Error(`read as ${read.state}`);
        expect(read.manifest).to.deep.equal(expected.manifest);
        expect([...read.checksums.entries()]).to.deep.equal(Object.entries(entries));
      },
    ), { numRuns: 60 });
  });
});
