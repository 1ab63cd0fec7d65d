// The manifest's checksums.entries as the program holds them: every tar entry's path and the sha256 of its bytes, in
// the order the manifest lists them, read-only. Two paths per archived object make this one of the largest things a
// backup or restore holds, so it is packed: a map from path to position and one buffer of raw 32-byte digests,
// instead of an object with a 64-character hex string per member.
const DIGEST_BYTES = 32;

export class ChecksumIndex {
  private constructor(
    private readonly positions: ReadonlyMap<string, number>,
    private readonly digests: Buffer,
  ) {}

  static readonly empty = new ChecksumIndex(new Map(), Buffer.alloc(0));

  /**
   * From `[path, sha256 hex]` pairs, each hex already checked (64 lowercase digits); `count`, when known, sizes the
   * buffer once. A path given twice keeps its first position and its last digest, as a JSON object's member would.
   */
  static fromPairs(pairs: Iterable<readonly [string, string]>, count?: number): ChecksumIndex {
    const positions = new Map<string, number>();
    let digests = Buffer.allocUnsafe(DIGEST_BYTES * Math.max(count ?? 1024, 1));
    for (const [path, hex] of pairs) {
      let at = positions.get(path);
      if (at === undefined) {
        at = positions.size;
        positions.set(path, at);
      }
      if ((at + 1) * DIGEST_BYTES > digests.length) {
        const bigger = Buffer.allocUnsafe(digests.length * 2);
        digests.copy(bigger);
        digests = bigger;
      }
      digests.write(hex, at * DIGEST_BYTES, DIGEST_BYTES, 'hex');
    }
    return new ChecksumIndex(positions, digests.subarray(0, positions.size * DIGEST_BYTES));
  }

  /**
   * From paths and their raw digests, 32 bytes each in the same order (`digests` is taken, not copied). A path given
   * twice keeps its first position and its last digest, as a JSON object's member would.
   */
  static fromPacked(paths: readonly string[], digests: Buffer): ChecksumIndex {
    const positions = new Map<string, number>();
    for (let i = 0; i < paths.length; i++) {
      const at = positions.get(paths[i]!);
      if (at === undefined) {
        positions.set(paths[i]!, positions.size);
        if (positions.size - 1 !== i) digests.copy(digests, (positions.size - 1) * DIGEST_BYTES, i * DIGEST_BYTES, (i + 1) * DIGEST_BYTES);
      } else digests.copy(digests, at * DIGEST_BYTES, i * DIGEST_BYTES, (i + 1) * DIGEST_BYTES);
    }
    return new ChecksumIndex(positions, digests.subarray(0, positions.size * DIGEST_BYTES));
  }

  /** From the entries of a parsed manifest document. */
  static fromRecord(entries: Readonly<Record<string, string>>): ChecksumIndex {
    const paths = Object.keys(entries);
    return ChecksumIndex.fromPairs((function* () {
      for (const path of paths) yield [path, entries[path]!] as const;
    })(), paths.length);
  }

  get size(): number {
    return this.positions.size;
  }

  /** The path's position (0 … size-1), or undefined when the manifest does not list it. */
  positionOf(path: string): number | undefined {
    return this.positions.get(path);
  }

  /**
   * A lookup for paths met in about the manifest's order, as a tarball's entries are: a path equal to the next one the
   * manifest lists costs a string comparison instead of hashing it for the map; any other path goes to the map.
   */
  orderedLookup(): (path: string) => number | undefined {
    const keys = this.positions.keys();
    let next = keys.next();
    let position = 0;
    return (path) => {
      if (!next.done && next.value === path) {
        next = keys.next();
        return position++;
      }
      return this.positions.get(path);
    };
  }

  /** The sha256 hex recorded at a position. */
  digestAt(position: number): string {
    return this.digests.toString('hex', position * DIGEST_BYTES, (position + 1) * DIGEST_BYTES);
  }

  /** The sha256 hex recorded for a path, or undefined. */
  get(path: string): string | undefined {
    const at = this.positions.get(path);
    return at === undefined ? undefined : this.digestAt(at);
  }

  /** Every path, in the manifest's order. */
  paths(): IterableIterator<string> {
    return this.positions.keys();
  }

  /** `[path, sha256 hex]` in the manifest's order. */
  *entries(): Generator<[string, string]> {
    for (const [path, at] of this.positions) yield [path, this.digestAt(at)];
  }

  /** As the manifest's JSON holds them; for tests and small archives only (it is the 2×N-member object). */
  toRecord(): Record<string, string> {
    const record: Record<string, string> = {};
    for (const [path, digest] of this.entries()) record[path] = digest;
    return record;
  }
}
