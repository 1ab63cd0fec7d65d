// A pass-through stage that hashes and counts what flows through it: between gzip and the tarball upload, and between
// the manifest's text and its upload (bench/archive-upload times the first).
import { createHash } from 'node:crypto';
import { Transform, type TransformCallback } from 'node:stream';

export class Digest extends Transform {
  readonly hash = createHash('sha256');
  bytes = 0;
  /** `also` sees every byte too (the manifest's HMAC, computed in the same pass) */
  constructor(private readonly also?: { update(chunk: Buffer): void }) {
    super();
  }
  override _transform(chunk: Buffer, _enc: BufferEncoding, done: TransformCallback) {
    this.hash.update(chunk);
    this.also?.update(chunk);
    this.bytes += chunk.length;
    done(null, chunk);
  }
}
