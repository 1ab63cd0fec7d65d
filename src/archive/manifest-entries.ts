// The manifest's checksums.entries read straight from its bytes into the packed ChecksumIndex. The entries are two
// paths per archived object, nearly all of the manifest: parsed as JSON they were, with the text, the largest thing a
// restore held at once (the text, an object of 2×N members, its Object.entries and the index, side by side). Here the
// entries' bytes are read member by member into the index, and JSON.parse only reads the rest of the document, with
// `{}` in their place.
// Only the manifests this tool writes take this path, and only when reading them here cannot differ from JSON.parse:
// one root `checksums` member holding one `entries` member, keys without escapes, no key that is an array index
// (JSON orders those first), every value a lowercase sha256 hex. Anything else is left to the full JSON.parse, whose
// answer (and whose refusal) is the reference.
import { ChecksumIndex } from './checksum-index.ts';

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_OBJECT = 0x7b;
const CLOSE_OBJECT = 0x7d;
const OPEN_ARRAY = 0x5b;
const CLOSE_ARRAY = 0x5d;
const COLON = 0x3a;
const COMMA = 0x2c;
const DIGEST_CHARS = 64;
const DIGEST_BYTES = 32;

const isSpace = (c: number | undefined) => c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;

function skipSpace(b: Buffer, i: number): number {
  while (i < b.length && isSpace(b[i])) i++;
  return i;
}

/** `i` is at a quote: the index after the closing quote, or -1 */
function stringEnd(b: Buffer, i: number): number {
  for (let j = i + 1; j < b.length; j++) {
    const c = b[j];
    if (c === BACKSLASH) j++;
    else if (c === QUOTE) return j + 1;
  }
  return -1;
}

/** The end of the value at `i`, found without judging it (JSON.parse judges everything but the entries), or -1. */
function valueEnd(b: Buffer, i: number): number {
  const c = b[i];
  if (c === QUOTE) return stringEnd(b, i);
  if (c === OPEN_OBJECT || c === OPEN_ARRAY) {
    let depth = 0;
    for (let j = i; j < b.length; j++) {
      const d = b[j];
      if (d === QUOTE) {
        j = stringEnd(b, j);
        if (j < 0) return -1;
        j--;
      } else if (d === OPEN_OBJECT || d === OPEN_ARRAY) depth++;
      else if (d === CLOSE_OBJECT || d === CLOSE_ARRAY) {
        depth--;
        if (depth === 0) return j + 1;
      }
    }
    return -1;
  }
  let j = i;
  while (j < b.length && b[j] !== COMMA && b[j] !== CLOSE_OBJECT && b[j] !== CLOSE_ARRAY && !isSpace(b[j])) j++;
  return j > i ? j : -1;
}

/**
 * Walks the members of the object at `i`: `value(keyStart, keyEnd, valueStart)` reads the value (the key with its
 * quotes) and returns the index after it, or -1 to stop. The index after the object, or -1 when it is not one.
 */
function members(b: Buffer, i: number, value: (ks: number, ke: number, vs: number) => number): number {
  if (b[i] !== OPEN_OBJECT) return -1;
  i = skipSpace(b, i + 1);
  if (b[i] === CLOSE_OBJECT) return i + 1;
  for (;;) {
    if (b[i] !== QUOTE) return -1;
    const ke = stringEnd(b, i);
    if (ke < 0) return -1;
    const colon = skipSpace(b, ke);
    if (b[colon] !== COLON) return -1;
    const ve = value(i, ke, skipSpace(b, colon + 1));
    if (ve < 0) return -1;
    const next = skipSpace(b, ve);
    if (b[next] === COMMA) i = skipSpace(b, next + 1);
    else if (b[next] === CLOSE_OBJECT) return next + 1;
    else return -1;
  }
}

/** a key of printable ASCII without escapes, and not an array index: its text is its bytes */
function plainKey(b: Buffer, ks: number, ke: number): boolean {
  let digits = true;
  for (let j = ks + 1; j < ke - 1; j++) {
    const c = b[j]!;
    if (c < 0x20 || c > 0x7e || c === BACKSLASH) return false;
    if (c < 0x30 || c > 0x39) digits = false;
  }
  return !digits;
}

function keyIs(b: Buffer, ks: number, ke: number, name: string): boolean {
  return ke - ks === name.length + 2 && b.toString('latin1', ks + 1, ke - 1) === name;
}

/** a lowercase hex digit's value by its byte, 255 for any other byte (an uppercase digit sends the document to JSON.parse) */
const NIBBLE = new Uint8Array(256).fill(255);
for (let c = 0x30; c <= 0x39; c++) NIBBLE[c] = c - 0x30;
for (let c = 0x61; c <= 0x66; c++) NIBBLE[c] = c - 0x61 + 10;

/** The entries object read as it is checked, in one pass: its paths, and their digests packed 32 bytes each. */
class EntriesReader {
  paths: string[] = [];
  digests = Buffer.allocUnsafe(DIGEST_BYTES * 1024);

  /** `vs` is at the entries object: the index after it, or -1 when a member is not a plain key with a sha256 hex */
  read(b: Buffer, vs: number): number {
    return members(b, vs, (ks, ke, ds) => {
      if (!plainKey(b, ks, ke) || b[ds] !== QUOTE || b[ds + DIGEST_CHARS + 1] !== QUOTE) return -1;
      const at = this.paths.length * DIGEST_BYTES;
      if (at + DIGEST_BYTES > this.digests.length) {
        const bigger = Buffer.allocUnsafe(this.digests.length * 2);
        this.digests.copy(bigger, 0, 0, at);
        this.digests = bigger;
      }
      for (let j = 0; j < DIGEST_BYTES; j++) {
        const high = NIBBLE[b[ds + 1 + 2 * j]!]!;
        const low = NIBBLE[b[ds + 2 + 2 * j]!]!;
        if (high === 255 || low === 255) return -1;
        this.digests[at + j] = (high << 4) | low;
      }
      this.paths.push(b.toString('latin1', ks + 1, ke - 1));
      return ds + DIGEST_CHARS + 2;
    });
  }
}

/**
 * The one checksums.entries object read into an index, and where it lies, when the document is one this path reads
 * exactly: every other value is only skipped over here (JSON.parse judges it).
 */
function readEntries(b: Buffer): { from: number; to: number; checksums: ChecksumIndex } | undefined {
  let regular = true;
  let span: [number, number] | undefined;
  let reader: EntriesReader | undefined;
  let checksumsSeen = 0;
  let entriesSeen = 0;
  const entriesIn = (ks: number, ke: number, vs: number): number => {
    if (!plainKey(b, ks, ke)) return (regular = false), -1;
    if (!keyIs(b, ks, ke, 'entries')) return valueEnd(b, vs);
    if (++entriesSeen > 1) return -1;
    reader = new EntriesReader();
    const ve = reader.read(b, vs);
    if (ve >= 0) span = [vs, ve];
    return ve;
  };
  const start = skipSpace(b, 0);
  const end = members(b, start, (ks, ke, vs) => {
    if (!plainKey(b, ks, ke)) return (regular = false), -1;
    if (!keyIs(b, ks, ke, 'checksums')) return valueEnd(b, vs);
    if (++checksumsSeen > 1) return -1;
    return members(b, vs, entriesIn);
  });
  if (!regular || end < 0 || skipSpace(b, end) !== b.length || checksumsSeen !== 1 || entriesSeen !== 1 || !span || !reader) return undefined;
  const { paths, digests } = reader;
  return { from: span[0], to: span[1], checksums: ChecksumIndex.fromPacked(paths, digests.subarray(0, paths.length * DIGEST_BYTES)) };
}

/**
 * The manifest's text with `{}` for its entries, and the entries as the index; undefined when the document is not
 * one this path reads exactly (then JSON.parse reads it whole, as before).
 */
export function splitEntries(bytes: Buffer): { rest: string; checksums: ChecksumIndex } | undefined {
  const read = readEntries(bytes);
  if (!read) return undefined;
  const { from, to, checksums } = read;
  // the span starts and ends at ASCII braces, so decoding the two sides apart equals decoding the whole
  return { rest: `${bytes.toString('utf8', 0, from)}{}${bytes.toString('utf8', to)}`, checksums };
}
