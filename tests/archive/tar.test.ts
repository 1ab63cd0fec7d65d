import { expect } from 'chai';
import { createHash } from 'node:crypto';
import fc from 'fast-check';
import tar from 'tar-stream';
import { TarEncoder, type TarEntry } from '../../src/archive/tar.ts';

/** What tar-stream's pack() makes of the same entries: the bytes the archive had before TarEncoder. */
async function packed(entries: Array<[TarEntry, Buffer]>): Promise<Buffer> {
  const pack = tar.pack();
  const chunks: Buffer[] = [];
  pack.on('data', (c) => chunks.push(c as Buffer));
  const ended = new Promise<void>((resolve) => pack.on('end', () => resolve()));
  for (const [entry, body] of entries) {
    await new Promise<void>((resolve, reject) =>
      pack.entry({ name: entry.name, size: body.length, mode: entry.mode, mtime: new Date(entry.mtimeSeconds * 1000) }, body, (e) => (e ? reject(e) : resolve())),
    );
  }
  pack.finalize();
  await ended;
  return Buffer.concat(chunks);
}

function encoded(entries: Array<[TarEntry, Buffer]>, chunkBytes: number): { bytes: Buffer; chunks: number } {
  const chunks: Buffer[] = [];
  const encoder = new TarEncoder(chunkBytes, (c) => chunks.push(Buffer.from(c)));
  for (const [entry, body] of entries) encoder.add(entry, body);
  encoder.finish();
  return { bytes: Buffer.concat(chunks), chunks: chunks.length };
}

async function extracted(bytes: Buffer): Promise<Array<{ name: string; mode: number; mtime: number; body: Buffer }>> {
  const out: Array<{ name: string; mode: number; mtime: number; body: Buffer }> = [];
  const extract = tar.extract();
  extract.on('entry', (header, stream, next) => {
    const parts: Buffer[] = [];
    stream.on('data', (c) => parts.push(c as Buffer));
    stream.on('end', () => {
      out.push({ name: header.name, mode: header.mode ?? 0, mtime: header.mtime!.getTime() / 1000, body: Buffer.concat(parts) });
      next();
    });
  });
  const done = new Promise((resolve, reject) => {
    extract.on('finish', () => resolve(undefined));
    extract.on('error', reject);
  });
  extract.end(bytes);
  await done;
  return out;
}

const mtimeSeconds = 1_790_000_000;
const file = (name: string, body: string | Buffer): [TarEntry, Buffer] => [{ name, mode: 0o755, mtimeSeconds }, Buffer.isBuffer(body) ? body : Buffer.from(body)];

describe('archive/tar: TarEncoder', () => {
  it('writes the same bytes as tar-stream for the archive entries: short, prefix-split and pax names, every body size class', async () => {
    const long = `resources/configmaps/namespaces/${'n'.repeat(63)}/${'c'.repeat(200)}.json`; // no split fits: pax
    const entries = [
      file('metadata/version', '1.1.0\n'),
      file('resources/profiles.kubeflow.org/cluster/alice.json', '{"kind":"Profile"}'),
      file(`resources/notebooks.kubeflow.org/v1-preferredversion/namespaces/${'a'.repeat(60)}/${'b'.repeat(60)}.json`, '{}'),
      file(long, 'x'.repeat(513)),
      file('resources/configmaps/namespaces/ä/x.json', 'utf-8 name'),
      file('resources/secrets/namespaces/a/empty.json', ''),
      file('resources/secrets/namespaces/a/block.json', 'y'.repeat(512)),
      file('resources/configmaps/namespaces/a/big.json', Buffer.alloc(900 * 1024, 7)),
    ];
    const expected = await packed(entries);
    for (const chunkBytes of [1024, 4096, 256 * 1024]) {
      const { bytes } = encoded(entries, chunkBytes);
      expect(bytes.equals(expected), `chunk size ${chunkBytes}`).to.equal(true);
    }
  });

  it('round-trips any set of entries through tar-stream extract, byte for byte like pack()', async () => {
    const segment = fc.stringMatching(/^[a-z0-9][a-z0-9.-]{0,120}$/);
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.tuple(fc.array(segment, { minLength: 1, maxLength: 4 }), fc.uint8Array({ maxLength: 3000 })), { minLength: 1, maxLength: 8 }),
        fc.integer({ min: 2, max: 64 }),
        async (raw, kib) => {
          const entries = raw.map(([parts, body], i) => file(`${parts.join('/')}-${i}.json`, Buffer.from(body)));
          const { bytes } = encoded(entries, kib * 512);
          expect(bytes.equals(await packed(entries))).to.equal(true);
          const back = await extracted(bytes);
          expect(back.map((e) => e.name)).to.deep.equal(entries.map(([e]) => e.name));
          back.forEach((e, i) => {
            expect(e.body.equals(entries[i]![1])).to.equal(true);
            expect(e.mode).to.equal(0o755);
            expect(e.mtime).to.equal(mtimeSeconds);
          });
        },
      ),
      { numRuns: 200 },
    );
  });

  it('gathers small entries into chunks of the given size instead of one write per header and body', () => {
    const entries = Array.from({ length: 1000 }, (_, i) => file(`resources/configmaps/namespaces/a/c-${i}.json`, 'z'.repeat(300)));
    const { chunks, bytes } = encoded(entries, 256 * 1024);
    expect(bytes.length).to.equal(1000 * 1024 + 1024);
    expect(chunks).to.equal(Math.ceil(bytes.length / (256 * 1024)));
  });

  it('addText writes the same bytes as add of the encoded text at each path, and returns its sha256', () => {
    const text = fc.oneof(fc.string({ unit: 'grapheme', maxLength: 400 }), fc.string({ unit: 'binary', maxLength: 3000 }), fc.nat(9000).map((n) => 'j'.repeat(n)));
    const name = fc.constantFrom('a.json', `${'d'.repeat(80)}/${'n'.repeat(90)}.json`, 'ünïcødé/x.json', `${'p'.repeat(130)}.json`);
    fc.assert(
      fc.property(fc.array(fc.tuple(text, name, name), { minLength: 1, maxLength: 20 }), fc.constantFrom(1024, 4096, 8192), (items, chunkBytes) => {
        const viaAdd = encoded(items.flatMap(([t, a, b]) => [file(a, t), file(b, t)]), chunkBytes).bytes;
        const chunks: Buffer[] = [];
        const encoder = new TarEncoder(chunkBytes, (c) => chunks.push(Buffer.from(c)));
        for (const [t, a, b] of items) {
          const digest = encoder.addText([file(a, '')[0], file(b, '')[0]], t);
          expect(digest.toString('hex')).to.equal(createHash('sha256').update(t).digest('hex'));
        }
        encoder.finish();
        expect(Buffer.concat(chunks).equals(viaAdd)).to.equal(true);
      }),
      { numRuns: 200 },
    );
  });
});
