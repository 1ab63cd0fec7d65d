import { expect } from 'chai';
import fc from 'fast-check';
import tar from 'tar-stream';
import { TarDecoder, TarFormatError, type DecodedEntry } from '../../src/archive/tar-decode.ts';

interface PackEntry {
  name: string;
  type?: 'file' | 'directory' | 'symlink' | 'link';
  body?: Buffer;
  linkname?: string;
}

/** The tarball tar-stream's pack() writes for the entries (ustar, pax headers for names ustar cannot hold). */
async function packed(entries: PackEntry[]): Promise<Buffer> {
  const pack = tar.pack();
  const chunks: Buffer[] = [];
  pack.on('data', (c) => chunks.push(c as Buffer));
  const ended = new Promise<void>((resolve) => pack.on('end', () => resolve()));
  for (const entry of entries) {
    const body = entry.type === undefined || entry.type === 'file' ? (entry.body ?? Buffer.alloc(0)) : undefined;
    const headers = { name: entry.name, type: entry.type ?? 'file', ...(body ? { size: body.length } : {}), ...(entry.linkname ? { linkname: entry.linkname } : {}) };
    await new Promise<void>((resolve, reject) => {
      const done = (e?: Error | null) => (e ? reject(e) : resolve());
      if (body) pack.entry(headers, body, done);
      else pack.entry(headers, done).end(Buffer.alloc(0));
    });
  }
  pack.finalize();
  await ended;
  return Buffer.concat(chunks);
}

/** Feeds `bytes` in chunks of the given sizes (cycled), then ends. */
function decode(bytes: Buffer, chunkSizes: number[] = [bytes.length || 1], maxBodyBytes = 16 * 1024 * 1024): DecodedEntry[] {
  const decoder = new TarDecoder({ maxBodyBytes });
  const out: DecodedEntry[] = [];
  let i = 0;
  for (let at = 0; at < bytes.length; i++) {
    const size = Math.max(1, chunkSizes[i % chunkSizes.length]!);
    out.push(...decoder.push(bytes.subarray(at, at + size)));
    at += size;
  }
  decoder.end();
  return out;
}

/** One raw 512-byte header, checksummed, for the forms tar-stream never writes (GNU magic, long names, pax size). */
function header(name: string, typeflag: string, size: number, magic: 'ustar' | 'gnu' = 'ustar'): Buffer {
  const block = Buffer.alloc(512);
  block.write(name, 0, 'utf8');
  block.write('0000644 \0', 100, 'latin1');
  block.write('0000000 \0', 108, 'latin1');
  block.write('0000000 \0', 116, 'latin1');
  block.write(`${size.toString(8).padStart(11, '0')} `, 124, 'latin1');
  block.write('14526053400 ', 136, 'latin1');
  block.write(typeflag, 156, 'latin1');
  block.write(magic === 'ustar' ? 'ustar\u000000' : 'ustar  \u0000', 257, 'latin1');
  let sum = 8 * 32;
  for (let i = 0; i < 512; i++) if (i < 148 || i >= 156) sum += block[i]!;
  block.write(`${sum.toString(8).padStart(6, '0')}\0 `, 148, 'latin1');
  return block;
}

function padded(body: Buffer): Buffer {
  return Buffer.concat([body, Buffer.alloc((512 - (body.length % 512)) % 512)]);
}

function paxBody(records: Record<string, string>): Buffer {
  return Buffer.concat(Object.entries(records).map(([key, value]) => {
    const rest = ` ${key}=${value}\n`;
    let length = Buffer.byteLength(rest) + 1;
    while (String(length).length + Buffer.byteLength(rest) !== length) length++;
    return Buffer.from(`${length}${rest}`);
  }));
}

const END = Buffer.alloc(1024);
const simplified = (entries: DecodedEntry[]) => entries.map((e) => ({ name: e.name, type: e.type, body: e.body?.toString('latin1') }));

describe('archive/tar-decode: TarDecoder', () => {
  it('decodes what tar-stream packs, whatever the chunking: names of every length, unicode, bodies of every size class', async () => {
    const name = fc.oneof(
      fc.stringMatching(/^[a-z0-9._-]{1,20}(\/[a-z0-9._-]{1,40}){0,8}$/),
      fc.constantFrom('resources/notebooks.kubeflow.org/namespaces/kubeflow-user-ünïcødé/nb-é.json', `${'d'.repeat(90)}/${'f'.repeat(99)}`, `${'x'.repeat(120)}.json`),
    );
    const size = fc.oneof(fc.constantFrom(0, 1, 511, 512, 513, 1024, 70_000), fc.integer({ min: 0, max: 3000 }));
    const entry = fc.record({ name, size, seed: fc.integer({ min: 0, max: 255 }) });
    await fc.assert(
      fc.asyncProperty(fc.array(entry, { minLength: 1, maxLength: 12 }), fc.array(fc.integer({ min: 1, max: 2000 }), { minLength: 1, maxLength: 5 }), async (raw, chunkSizes) => {
        const entries = raw.map((e) => ({ name: e.name, body: Buffer.alloc(e.size, e.seed) }));
        const bytes = await packed(entries);
        const expected = entries.map((e) => ({ name: e.name, type: 'file', body: e.body.toString('latin1') }));
        expect(simplified(decode(bytes, chunkSizes))).to.deep.equal(expected);
        expect(simplified(decode(bytes))).to.deep.equal(expected);
      }),
      { numRuns: 150 },
    );
  });

  it('names directories, symlinks and hard links by type and gives them no body', async () => {
    const bytes = await packed([
      { name: 'resources/', type: 'directory' },
      { name: 'resources/x.json', type: 'symlink', linkname: '/etc/passwd' },
      { name: 'resources/y.json', type: 'link', linkname: 'resources/z.json' },
      { name: 'resources/z.json', body: Buffer.from('{}') },
    ]);
    expect(simplified(decode(bytes, [100]))).to.deep.equal([
      { name: 'resources/', type: 'directory', body: undefined },
      { name: 'resources/x.json', type: 'symlink', body: undefined },
      { name: 'resources/y.json', type: 'link', body: undefined },
      { name: 'resources/z.json', type: 'file', body: '{}' },
    ]);
  });

  it('reads GNU headers, GNU long names and pax paths and sizes, as Go and GNU tar write them', () => {
    const longName = `resources/configmaps/namespaces/${'n'.repeat(200)}/cm.json`;
    const pax = paxBody({ path: 'resources/über/ünïcødé.json', size: '3', mtime: '1790000000.5' });
    const bytes = Buffer.concat([
      header('././@LongLink', 'L', longName.length + 1, 'gnu'), padded(Buffer.from(`${longName}\0`)),
      header(longName.slice(0, 100), '0', 2, 'gnu'), padded(Buffer.from('{}')),
      header('PaxHeader/x', 'x', pax.length), padded(pax),
      // the pax size wins over the header's
      header('resources/ueber/x.json', '0', 0), padded(Buffer.from('abc')),
      header('pax_global_header', 'g', paxBody({ comment: 'made by hand' }).length), padded(paxBody({ comment: 'made by hand' })),
      header('dir-by-slash/', '0', 0),
      END,
    ]);
    for (const chunks of [[bytes.length], [1], [511, 2], [7, 1000]]) {
      expect(simplified(decode(bytes, chunks))).to.deep.equal([
        { name: longName, type: 'file', body: '{}' },
        { name: 'resources/über/ünïcødé.json', type: 'file', body: 'abc' },
        { name: 'dir-by-slash/', type: 'directory', body: undefined },
      ]);
    }
  });

  it('passes over a body larger than its limit without keeping it, and reads on', async () => {
    const bytes = await packed([{ name: 'big.json', body: Buffer.alloc(5000, 1) }, { name: 'small.json', body: Buffer.from('{}') }]);
    expect(simplified(decode(bytes, [777], 4096))).to.deep.equal([
      { name: 'big.json', type: 'file', body: undefined },
      { name: 'small.json', type: 'file', body: '{}' },
    ]);
    expect(decode(bytes, [777], 4096)[0]!.size).to.equal(5000);
  });

  it('refuses what it cannot read exactly: a bad checksum, an unknown format, a truncation, a broken pax header', async () => {
    const good = await packed([{ name: 'a.json', body: Buffer.from('{"a":1}') }]);
    const refusal = (bytes: Buffer, chunkSizes?: number[]) => {
      try {
        decode(bytes, chunkSizes);
      } catch (error) {
        expect(error).to.be.instanceOf(TarFormatError);
        return (error as Error).message;
      }
      throw new Error('expected a TarFormatError');
    };
    const flipped = Buffer.from(good);
    flipped[3] = flipped[3]! ^ 0x01;
    expect(refusal(flipped)).to.match(/checksum/);
    const v7 = header('a.json', '0', 0);
    v7.fill(0, 257, 265);
    expect(refusal(Buffer.concat([v7, END]))).to.match(/checksum|unknown format/);
    for (const cut of [100, 512, 515, 1023]) expect(refusal(good.subarray(0, cut), [50])).to.match(/ends in the middle/);
    const badPax = Buffer.from('99 path=x\n');
    expect(refusal(Buffer.concat([header('PaxHeader/x', 'x', badPax.length), padded(badPax), END]))).to.match(/pax header/);
    const dangling = paxBody({ path: 'x.json' });
    expect(refusal(Buffer.concat([header('PaxHeader/x', 'x', dangling.length), padded(dangling)]))).to.match(/extended header/);
    const badSize = header('a.json', '0', 0);
    badSize.write('12345678x12 ', 124, 'latin1');
    expect(refusal(Buffer.concat([badSize, END]))).to.match(/checksum|size/);
  });

  it('never throws anything but TarFormatError on arbitrary bytes (2000 cases)', async () => {
    const base = await packed([{ name: 'a.json', body: Buffer.from('{"a":1}') }, { name: `${'y'.repeat(130)}.json`, body: Buffer.alloc(700, 2) }]);
    fc.assert(
      fc.property(fc.array(fc.tuple(fc.nat(base.length - 1), fc.integer({ min: 0, max: 255 })), { maxLength: 8 }), fc.nat(base.length), fc.integer({ min: 1, max: 600 }), (edits, cut, chunk) => {
        const bytes = Buffer.from(base.subarray(0, cut));
        for (const [at, value] of edits) if (at < bytes.length) bytes[at] = value;
        try {
          decode(bytes, [chunk]);
        } catch (error) {
          if (!(error instanceof TarFormatError)) throw error;
        }
      }),
      { numRuns: 2000 },
    );
  });
});
