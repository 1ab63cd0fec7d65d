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
 * Walks the members of the object at `i`: `visit(keyStart, keyEnd, valueStart, valueEnd)`, the key with its quotes.
 * The index after the object, or -1 when it is not one (or `visit` says stop).
 */
function members(b: Buffer, i: number, visit: (ks: number, ke: number, vs: number, ve: number) => boolean): number {
  if (b[i] !== OPEN_OBJECT) return -1;
  i = skipSpace(b, i + 1);
  if (b[i] === CLOSE_OBJECT) return i + 1;
  for (;;) {
    if (b[i] !== QUOTE) return -1;
    const ke = stringEnd(b, i);
    if (ke < 0) return -1;
    const colon = skipSpace(b, ke);
    if (b[colon] !== COLON) return -1;
    const vs = skipSpace(b, colon + 1);
    const ve = valueEnd(b, vs);
    if (ve < 0 || !visit(i, ke, vs, ve)) return -1;
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

function isDigest(b: Buffer, vs: number, ve: number): boolean {
  if (ve - vs !== DIGEST_CHARS + 2 || b[vs] !== QUOTE || b[ve - 1] !== QUOTE) return false;
  for (let j = vs + 1; j < ve - 1; j++) {
    const c = b[j]!;
    if (!((c >= 0x30 && c <= 0x39) || (c >= 0x61 && c <= 0x66))) return false;
  }
  return true;
}

/** where the one checksums.entries object lies, when the document is one this path reads exactly */
function entriesSpan(b: Buffer): [number, number] | undefined {
  let regular = true;
  const only = (name: string, found: Array<[number, number]>) => (ks: number, ke: number, vs: number, ve: number) => {
    if (!plainKey(b, ks, ke)) regular = false;
    else if (keyIs(b, ks, ke, name)) found.push([vs, ve]);
    return regular;
  };
  const checksums: Array<[number, number]> = [];
  const start = skipSpace(b, 0);
  const end = members(b, start, only('checksums', checksums));
  if (end < 0 || skipSpace(b, end) !== b.length || checksums.length !== 1) return undefined;
  const entries: Array<[number, number]> = [];
  if (members(b, checksums[0]![0], only('entries', entries)) < 0 || entries.length !== 1) return undefined;
  // every member of entries a plain key and a digest
  const [from, to] = entries[0]!;
  const end2 = members(b, from, (ks, ke, vs, ve) => plainKey(b, ks, ke) && isDigest(b, vs, ve));
  return end2 === to ? [from, to] : undefined;
}

/** the members of an entries object `entriesSpan` has checked, decoded one at a time as the index takes them */
function* entryPairs(b: Buffer, from: number): Generator<readonly [string, string]> {
  let i = skipSpace(b, from + 1);
  while (b[i] === QUOTE) {
    const ke = stringEnd(b, i);
    const vs = skipSpace(b, skipSpace(b, ke) + 1);
    yield [b.toString('latin1', i + 1, ke - 1), b.toString('latin1', vs + 1, vs + 1 + DIGEST_CHARS)];
    const next = skipSpace(b, vs + DIGEST_CHARS + 2);
    i = b[next] === COMMA ? skipSpace(b, next + 1) : next;
  }
}

/**
 * The manifest's text with `{}` for its entries, and the entries as the index; undefined when the document is not
 * one this path reads exactly (then JSON.parse reads it whole, as before).
 */
export function splitEntries(bytes: Buffer): { rest: string; checksums: ChecksumIndex } | undefined {
  const span = entriesSpan(bytes);
  if (!span) return undefined;
  const [from, to] = span;
  let count = 0;
  members(bytes, from, () => ++count > 0);
  const checksums = ChecksumIndex.fromPairs(entryPairs(bytes, from), count);
  // the span starts and ends at ASCII braces, so decoding the two sides apart equals decoding the whole
  return { rest: `${bytes.toString('utf8', 0, from)}{}${bytes.toString('utf8', to)}`, checksums };
}
