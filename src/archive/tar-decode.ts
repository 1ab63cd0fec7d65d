// A streaming tar decoder for reading backups: bytes in (as gunzip hands them over), whole entries out, synchronously.
import { KfuError } from '../errors/index.ts';
// The restore's preflight reads two entries per archived object; through tar-stream's extract() each entry was a
// stream of its own, consumed by async iteration, which cost about as much CPU as the rest of reading the archive
// (docs/performance.md). It understands what archives of this format contain, Velero's and foreign ones: ustar and GNU
// headers, pax extended headers (path, linkpath, size) and GNU long names. Anything it cannot read exactly is a
// TarFormatError, never a guess: every byte it accepts is checked again against the manifest by the reader.

const BLOCK = 512;
/** pax and GNU long-name records are a few hundred bytes; anything this large is not one */
const MAX_META_BYTES = 1024 * 1024;

export class TarFormatError extends KfuError {
  static override readonly errorId = 'TarFormatError';
  constructor(sentence: string) {
    super(sentence, { kind: 'corrupt' });
  }
}

export interface DecodedEntry {
  name: string;
  /** as tar-stream names them: file, directory, symlink, link, character-device, block-device, fifo, contiguous-file, … */
  type: string;
  size: number;
  /** the whole body of a file no larger than the decoder's limit; undefined otherwise (the bytes were passed over) */
  body: Buffer | undefined;
}

const TYPES: Record<number, string> = {
  0: 'file', 0x30: 'file', 0x31: 'link', 0x32: 'symlink', 0x33: 'character-device', 0x34: 'block-device',
  0x35: 'directory', 0x36: 'fifo', 0x37: 'contiguous-file', 0x4b: 'gnu-long-link-path', 0x4c: 'gnu-long-path',
  0x78: 'pax-header', 0x67: 'pax-global-header', 0x44: 'gnu-dumpdir', 0x4d: 'gnu-multivol', 0x4e: 'gnu-names',
  0x53: 'gnu-sparse', 0x56: 'gnu-volume-label',
};

/** Types whose size field says nothing about a body: they have none (as Go's archive/tar, which wrote Velero's, reads them). */
const HEADER_ONLY = new Set(['link', 'symlink', 'character-device', 'block-device', 'directory', 'fifo']);

function isZeroBlock(block: Buffer): boolean {
  // The checksum field does not count, as in tar-stream: a block that is zero elsewhere ends the archive.
  for (let i = 0; i < BLOCK; i++) if (block[i] !== 0 && (i < 148 || i >= 156)) return false;
  return true;
}

/** The sum of the header's bytes with its checksum field counted as eight spaces. */
function checksumOf(block: Buffer): number {
  let sum = 8 * 0x20;
  for (let i = 0; i < 148; i++) sum += block[i]!;
  for (let i = 156; i < BLOCK; i++) sum += block[i]!;
  return sum;
}

/** An octal field: optional leading spaces or NULs, octal digits, then NULs or spaces to the end. */
function octal(block: Buffer, offset: number, length: number, field: string): number {
  let i = offset;
  const end = offset + length;
  while (i < end && (block[i] === 0x20 || block[i] === 0)) i++;
  let value = 0;
  let digits = 0;
  for (; i < end && block[i]! >= 0x30 && block[i]! <= 0x37; i++, digits++) value = value * 8 + (block[i]! - 0x30);
  for (; i < end; i++) {
    if (block[i] !== 0 && block[i] !== 0x20) throw new TarFormatError(`A tar header has an unreadable ${field} field.`);
  }
  if (digits === 0 && field === 'checksum') throw new TarFormatError('A tar header has no checksum.');
  return value;
}

/** The size field: octal, or base-256 (first byte 0x80) for large sizes as GNU tar and Go write them. */
function sizeOf(block: Buffer): number {
  const first = block[124]!;
  if (first & 0x80) {
    if (first !== 0x80) throw new TarFormatError('A tar header has a negative or oversized size.');
    let value = 0;
    for (let i = 125; i < 136; i++) value = value * 256 + block[i]!;
    if (!Number.isSafeInteger(value)) throw new TarFormatError('A tar header has a size beyond what can be read.');
    return value;
  }
  return octal(block, 124, 12, 'size');
}

/** A NUL-terminated text field (or record), as UTF-8. */
function text(bytes: Buffer, offset: number, length: number): string {
  const end = bytes.indexOf(0, offset);
  return bytes.toString('utf8', offset, end === -1 || end > offset + length ? offset + length : end);
}

/** pax records: "<length> <key>=<value>\n", where length counts the whole record in bytes. */
function paxRecords(body: Buffer): Map<string, string> {
  const records = new Map<string, string>();
  let at = 0;
  while (at < body.length) {
    // GNU tar pads the last block of some pax headers with NULs
    if (body[at] === 0) break;
    const space = body.indexOf(0x20, at);
    const length = space === -1 ? Number.NaN : Number(body.toString('latin1', at, space));
    if (!Number.isSafeInteger(length) || length <= space - at + 1 || at + length > body.length || body[at + length - 1] !== 0x0a) {
      throw new TarFormatError('A pax header of the tarball is malformed.');
    }
    const record = body.toString('utf8', space + 1, at + length - 1);
    const equals = record.indexOf('=');
    if (equals <= 0) throw new TarFormatError('A pax header of the tarball is malformed.');
    records.set(record.slice(0, equals), record.slice(equals + 1));
    at += length;
  }
  return records;
}

interface Header {
  name: string;
  type: string;
  size: number;
}

export class TarDecoder {
  private readonly maxBodyBytes: number;
  private readonly headerBlock = Buffer.alloc(BLOCK);
  private headerFill = 0;
  /** the entry whose body is being read, or undefined between entries */
  private current: Header | undefined;
  private bodyLeft = 0;
  private keep = false;
  private parts: Buffer[] = [];
  private paddingLeft = 0;
  /** from a pax header or GNU long name, for the next entry */
  private nextPath: string | undefined;
  private nextSize: number | undefined;
  private nextLinkSeen = false;

  constructor(options: { maxBodyBytes: number }) {
    this.maxBodyBytes = options.maxBodyBytes;
  }

  /** Takes the next bytes of the tarball; returns the entries they complete, in order. */
  push(chunk: Buffer): DecodedEntry[] {
    const out: DecodedEntry[] = [];
    let offset = 0;
    while (offset < chunk.length) {
      if (this.paddingLeft > 0) {
        const skip = Math.min(this.paddingLeft, chunk.length - offset);
        this.paddingLeft -= skip;
        offset += skip;
      } else if (this.current) {
        const take = Math.min(this.bodyLeft, chunk.length - offset);
        if (this.keep) this.parts.push(chunk.subarray(offset, offset + take));
        this.bodyLeft -= take;
        offset += take;
        if (this.bodyLeft === 0) this.finishEntry(out);
      } else if (this.headerFill === 0 && chunk.length - offset >= BLOCK) {
        this.header(chunk.subarray(offset, offset + BLOCK), out);
        offset += BLOCK;
      } else {
        const take = Math.min(BLOCK - this.headerFill, chunk.length - offset);
        chunk.copy(this.headerBlock, this.headerFill, offset, offset + take);
        this.headerFill += take;
        offset += take;
        if (this.headerFill === BLOCK) {
          this.headerFill = 0;
          this.header(this.headerBlock, out);
        }
      }
    }
    return out;
  }

  /** Call once the tarball has ended: throws if it ended inside an entry. */
  end(): void {
    if (this.headerFill > 0 || this.current || this.paddingLeft > 0) throw new TarFormatError('The tarball ends in the middle of an entry.');
    if (this.nextPath !== undefined || this.nextSize !== undefined || this.nextLinkSeen) {
      throw new TarFormatError('The tarball ends after an extended header, before the entry it describes.');
    }
  }

  private header(block: Buffer, out: DecodedEntry[]): void {
    if (isZeroBlock(block)) return;
    if (checksumOf(block) !== octal(block, 148, 8, 'checksum')) throw new TarFormatError('A tar header does not match its checksum.');
    const ustar = block.toString('latin1', 257, 265);
    const isUstar = ustar === 'ustar\u000000';
    if (!isUstar && ustar !== 'ustar  \u0000') throw new TarFormatError('A tar header is in an unknown format (neither ustar nor GNU).');
    const typeflag = block[156]!;
    let name = text(block, 0, 100);
    const prefix = isUstar ? text(block, 345, 155) : '';
    if (prefix) name = `${prefix}/${name}`;
    let type = TYPES[typeflag] ?? `unknown-${typeflag}`;
    if (type === 'file' && name.endsWith('/')) type = 'directory';
    const declared = sizeOf(block);
    const size = HEADER_ONLY.has(type) ? 0 : declared;
    const header: Header = { name, type, size };
    if (type === 'pax-header' || type === 'pax-global-header' || type === 'gnu-long-path' || type === 'gnu-long-link-path') {
      if (size > MAX_META_BYTES) throw new TarFormatError(`A ${type} entry of ${size} bytes is too large to be one.`);
      this.begin(header, true);
    } else {
      if (this.nextPath !== undefined) header.name = this.nextPath;
      if (this.nextSize !== undefined && !HEADER_ONLY.has(type)) header.size = this.nextSize;
      this.nextPath = undefined;
      this.nextSize = undefined;
      this.nextLinkSeen = false;
      this.begin(header, type === 'file' && header.size <= this.maxBodyBytes);
    }
    if (this.current && this.bodyLeft === 0) this.finishEntry(out);
  }

  private begin(header: Header, keep: boolean): void {
    this.current = header;
    this.bodyLeft = header.size;
    this.keep = keep;
    this.parts = [];
    this.paddingLeft = 0;
  }

  private finishEntry(out: DecodedEntry[]): void {
    const header = this.current!;
    this.current = undefined;
    this.paddingLeft = (BLOCK - (header.size % BLOCK)) % BLOCK;
    // copied: the parts are views of the caller's chunks
    const body = this.keep ? Buffer.concat(this.parts, header.size) : undefined;
    this.parts = [];
    switch (header.type) {
      case 'pax-header': {
        const records = paxRecords(body!);
        const path = records.get('path');
        if (path !== undefined) this.nextPath = path;
        const size = records.get('size');
        if (size !== undefined) {
          if (!/^\d+$/.test(size) || !Number.isSafeInteger(Number(size))) throw new TarFormatError('A pax header gives an unreadable size.');
          this.nextSize = Number(size);
        }
        if (records.has('linkpath')) this.nextLinkSeen = true;
        return;
      }
      case 'pax-global-header':
        // defaults for every later entry; no archive of this format relies on one, and none of its keys is honoured
        paxRecords(body!);
        return;
      case 'gnu-long-path':
        this.nextPath = text(body!, 0, body!.length);
        return;
      case 'gnu-long-link-path':
        this.nextLinkSeen = true;
        return;
      default:
        out.push({ name: header.name, type: header.type, size: header.size, body });
    }
  }
}
