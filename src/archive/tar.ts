// A minimal tar (ustar, plus pax for long names) encoder that writes headers, bodies and padding straight into
// large buffers. The backup writes two regular-file entries per object; tar-stream spent most of the backup's CPU
// on a stream object, callbacks and small chunks per entry (docs/performance.md). The bytes are the same as
// tar-stream's pack() for the entries we write (regular files, uid/gid 0, no user names): tests compare them.

import { hash } from 'node:crypto';

const BLOCK = 512;
const ZEROS = Buffer.alloc(2 * BLOCK);
const TYPE_FILE = 0x30; // '0'
const TYPE_PAX = 0x78; // 'x'

export interface TarEntry {
  name: string;
  mode: number;
  /** whole seconds since the epoch */
  mtimeSeconds: number;
}

/** `n` octal digits, zero-padded, then a space (tar-stream's encodeOct: an overlong value becomes all sevens). */
function writeOctal(buf: Buffer, offset: number, value: number, digits: number): void {
  const text = value.toString(8);
  const field = text.length > digits ? '7'.repeat(digits) : '0'.repeat(digits - text.length) + text;
  buf.write(`${field} `, offset, 'latin1');
}

function writeSize(buf: Buffer, offset: number, size: number): void {
  if (size.toString(8).length > 11) {
    // base-256 for sizes of 8 GiB and more, as tar-stream and GNU tar do
    buf[offset] = 0x80;
    let n = size;
    for (let i = 11; i > 0; i--) {
      buf[offset + i] = n & 0xff;
      n = Math.floor(n / 0x100);
    }
  } else writeOctal(buf, offset, size, 11);
}

function isAscii(s: string): boolean {
  for (let i = 0; i < s.length; i++) if (s.charCodeAt(i) > 0x7f) return false;
  return true;
}

/** ustar splits a name of more than 100 bytes at a '/' into prefix (≤ 155) and name (≤ 100); undefined if it cannot. */
function splitName(name: string): { prefix: string; name: string } | undefined {
  if (Buffer.byteLength(name) !== name.length) return undefined; // not ASCII: a pax header carries it
  let prefix = '';
  let rest = name;
  while (rest.length > 100) {
    const i = rest.indexOf('/');
    if (i === -1) return undefined;
    prefix += prefix ? `/${rest.slice(0, i)}` : rest.slice(0, i);
    rest = rest.slice(i + 1);
  }
  return prefix.length > 155 ? undefined : { prefix, name: rest };
}

/** Writes one 512-byte header at `offset` of `buf` (which must be zero there). */
function writeHeader(buf: Buffer, offset: number, name: { prefix: string; name: string }, size: number, mode: number, mtimeSeconds: number, type: number): void {
  buf.write(name.name, offset, 'latin1');
  writeOctal(buf, offset + 100, mode & 0o7777, 6);
  writeOctal(buf, offset + 108, 0, 6); // uid
  writeOctal(buf, offset + 116, 0, 6); // gid
  writeSize(buf, offset + 124, size);
  writeOctal(buf, offset + 136, mtimeSeconds | 0, 11);
  buf[offset + 156] = type;
  buf.write('ustar\u000000', offset + 257, 'latin1'); // magic "ustar\0" and version "00"
  writeOctal(buf, offset + 329, 0, 6); // devmajor
  writeOctal(buf, offset + 337, 0, 6); // devminor
  if (name.prefix) buf.write(name.prefix, offset + 345, 'latin1');
  writeChecksum(buf, offset);
}

/** The checksum counts its own field as eight spaces. */
function writeChecksum(buf: Buffer, offset: number): void {
  let sum = 8 * 32;
  for (let i = offset; i < offset + 148; i++) sum += buf[i]!;
  for (let i = offset + 156; i < offset + BLOCK; i++) sum += buf[i]!;
  writeOctal(buf, offset + 148, sum, 6);
}

/**
 * The common case, fast: every entry of a backup shares mode, mtime and type, so those fields are copied from a
 * template whose byte sum is known, and only the name, prefix, size and checksum are written per entry, byte by
 * byte (one Buffer.write per field cost more than the rest of the header). Same bytes as writeHeader.
 */
class HeaderTemplate {
  readonly bytes = Buffer.alloc(BLOCK);
  readonly sum: number;
  constructor(readonly mode: number, readonly mtimeSeconds: number) {
    writeHeader(this.bytes, 0, { prefix: '', name: '' }, 0, mode, mtimeSeconds, TYPE_FILE);
    this.bytes.fill(0, 148, 156);
    this.bytes.fill(0, 124, 136);
    let sum = 8 * 32;
    for (let i = 0; i < BLOCK; i++) sum += this.bytes[i]!;
    this.sum = sum;
  }

  /** false when the size needs more than 11 octal digits (the slow path handles it) */
  write(buf: Buffer, offset: number, name: string, nameOffset: number, nameEnd: number, prefixEnd: number, size: number): boolean {
    if (size > 0o77777777777) return false;
    this.bytes.copy(buf, offset);
    let sum = this.sum;
    // name: name[nameOffset, nameEnd) at 0; prefix: name[0, prefixEnd) at 345 (ASCII only: callers check)
    for (let i = nameOffset, o = offset; i < nameEnd; i++, o++) {
      const c = name.charCodeAt(i);
      buf[o] = c;
      sum += c;
    }
    for (let i = 0, o = offset + 345; i < prefixEnd; i++, o++) {
      const c = name.charCodeAt(i);
      buf[o] = c;
      sum += c;
    }
    sum += writeOctalBytes(buf, offset + 124, size, 11);
    writeOctalBytes(buf, offset + 148, sum, 6);
    return true;
  }
}

/** writeOctal without a string: `digits` octal digits and a space; returns the byte sum written. */
function writeOctalBytes(buf: Buffer, offset: number, value: number, digits: number): number {
  let sum = 0x20;
  buf[offset + digits] = 0x20;
  let n = value;
  for (let i = digits - 1; i >= 0; i--) {
    const c = 0x30 + (n % 8);
    buf[offset + i] = c;
    sum += c;
    n = Math.floor(n / 8);
  }
  return sum;
}

/** A pax record "<len> key=value\n", where len counts itself. */
function paxRecord(key: string, value: string): string {
  const body = ` ${key}=${value}\n`;
  const len = Buffer.byteLength(body);
  let digits = String(len).length;
  if (len + digits >= 10 ** digits) digits++;
  return `${len + digits}${body}`;
}

/**
 * Gathers tar entries into chunks of about `chunkBytes` and hands each full chunk to `emit`. Bodies larger than a
 * chunk are emitted as they are, without a copy.
 */
export class TarEncoder {
  private chunk: Buffer;
  private used = 0;

  constructor(private readonly chunkBytes: number, private readonly emit: (chunk: Buffer) => void) {
    this.chunk = Buffer.alloc(chunkBytes);
  }

  /** Room for `bytes` more in the current chunk, emitting it first when it is too full. */
  private reserve(bytes: number): void {
    if (this.used + bytes > this.chunk.length) {
      this.flush();
      if (bytes > this.chunk.length) this.chunk = Buffer.alloc(bytes);
    }
  }

  private template: HeaderTemplate | undefined;

  private header(name: string, size: number, mode: number, mtimeSeconds: number): void {
    const template = this.template?.mode === mode && this.template.mtimeSeconds === mtimeSeconds ? this.template : (this.template = new HeaderTemplate(mode, mtimeSeconds));
    if (name.length <= 100 && isAscii(name)) {
      this.reserve(BLOCK);
      if (template.write(this.chunk, this.used, name, 0, name.length, 0, size)) {
        this.used += BLOCK;
        return;
      }
    }
    const split = splitName(name);
    if (split) {
      this.reserve(BLOCK);
      writeHeader(this.chunk, this.used, split, size, mode, mtimeSeconds, TYPE_FILE);
      this.used += BLOCK;
      return;
    }
    // tar-stream's fallback: a pax header named PaxHeader carrying the path, then the entry under the same name
    const pax = Buffer.from(paxRecord('path', name));
    const padded = Math.ceil(pax.length / BLOCK) * BLOCK;
    this.reserve(BLOCK + padded + BLOCK);
    const paxName = { prefix: '', name: 'PaxHeader' };
    writeHeader(this.chunk, this.used, paxName, pax.length, mode, mtimeSeconds, TYPE_PAX);
    pax.copy(this.chunk, this.used + BLOCK);
    this.used += BLOCK + padded;
    writeHeader(this.chunk, this.used, paxName, size, mode, mtimeSeconds, TYPE_FILE);
    this.used += BLOCK;
  }

  /** One regular file: header, body, zero padding to the next 512 bytes. */
  add(entry: TarEntry, body: Buffer): void {
    this.header(entry.name, body.length, entry.mode, entry.mtimeSeconds);
    const padded = Math.ceil(body.length / BLOCK) * BLOCK;
    if (padded > this.chunkBytes) {
      // a big item goes out as it is; only its padding is copied
      this.flush();
      this.emit(body);
      this.reserve(padded - body.length);
      this.used += padded - body.length;
      return;
    }
    this.reserve(padded);
    body.copy(this.chunk, this.used);
    this.used += padded;
  }

  /**
   * Regular files that share one body given as text (the backup writes each object at two paths): the text is
   * encoded straight into the chunk, instead of into a Buffer of its own first, and copied from there for the later
   * entries. Same bytes as `add` of Buffer.from(text) for each entry. Returns the sha256 of the body.
   */
  addText(entries: readonly TarEntry[], text: string): Buffer {
    const size = Buffer.byteLength(text);
    const padded = Math.ceil(size / BLOCK) * BLOCK;
    if (padded > this.chunkBytes) {
      const body = Buffer.from(text);
      for (const entry of entries) this.add(entry, body);
      return hash('sha256', body, 'buffer');
    }
    // The first copy stays valid where it is: a flushed chunk belongs to the consumer and is never written again.
    let first: Buffer | undefined;
    for (const entry of entries) {
      this.header(entry.name, size, entry.mode, entry.mtimeSeconds);
      this.reserve(padded);
      if (first === undefined) {
        this.chunk.write(text, this.used, size, 'utf8');
        first = this.chunk.subarray(this.used, this.used + size);
      } else first.copy(this.chunk, this.used);
      this.used += padded;
    }
    return hash('sha256', first ?? Buffer.from(text), 'buffer');
  }

  /** The end-of-archive marker (two zero blocks) and the last chunk. */
  finish(): void {
    this.reserve(ZEROS.length);
    this.used += ZEROS.length;
    this.flush();
  }

  /** Emits what is gathered so far (the rest of the chunk is not sent). */
  flush(): void {
    if (this.used === 0) return;
    this.emit(this.chunk.subarray(0, this.used));
    // a fresh zeroed chunk: the emitted one now belongs to the consumer, and headers and padding rely on zeros
    this.chunk = Buffer.alloc(this.chunkBytes);
    this.used = 0;
  }
}
