// A streaming upload whose parts are written straight into buffers of the part size, reused from one part (and one
// upload) to the next. lib-storage's Upload gathers a stream's chunks, joins them into a new buffer per part and keeps
// that whole buffer alive through the next part (the remainder is a slice of it): about three part sizes of array
// buffers per upload, each part new garbage that only a full GC returns. At a large backup's commit that was the peak
// memory (docs/performance.md). Here one upload holds at most queueSize + 1 part buffers, and a finished upload hands
// its buffers to the next one (the manifest reuses the tarball's).
// The S3 calls are lib-storage's: one PutObject when the whole body fits in one part, else CreateMultipartUpload,
// UploadPart numbered in order with at most queueSize in flight, CompleteMultipartUpload, and AbortMultipartUpload when anything
// fails, so no half object and no orphan upload remains (aws/aws-sdk-js-v3 lib/lib-storage/src/Upload.ts).
import {
  AbortMultipartUploadCommand,
  ChecksumAlgorithm,
  CompleteMultipartUploadCommand,
  CreateMultipartUploadCommand,
  PutObjectCommand,
  UploadPartCommand,
  type CompletedPart,
  type S3Client,
  type StorageClass,
} from '@aws-sdk/client-s3';
import type { Readable } from 'node:stream';
import { lockedWriteParams, type WriteLock } from './lock-params.ts';

export interface PartUploadTarget {
  Bucket: string;
  Key: string;
  ContentType?: string;
  StorageClass?: StorageClass;
  /** Object Lock retention for the object: asked for at its creation, every request with its Content-MD5 (object-lock.ts) */
  lock?: WriteLock;
}

/**
 * Spare part buffers of one size, kept between uploads. A buffer is only ever sent up to the bytes written into it
 * since it was taken, so what an earlier upload left in it never leaves the process.
 */
export class PartBuffers {
  private readonly spare: Buffer[] = [];
  constructor(readonly partSize: number, private readonly keep: number) {}

  /** buffers kept for the next part */
  get spares(): number {
    return this.spare.length;
  }

  take(): Buffer {
    return this.spare.pop() ?? Buffer.allocUnsafeSlow(this.partSize);
  }

  give(buffer: Buffer): void {
    if (this.spare.length < this.keep) this.spare.push(buffer);
  }
}

class Aborted extends Error {
  constructor() {
    super('The upload was cancelled.');
    this.name = 'AbortError';
  }
}

/**
 * Uploads `body` to `target`; resolves once the object exists. `signal` cancels it: the body is destroyed, the parts in
 * flight settle, the multipart upload is aborted and the promise rejects with an AbortError. On any other failure the
 * body is no longer read and the multipart upload is aborted too.
 */
export async function uploadStream(
  client: S3Client,
  target: PartUploadTarget,
  body: Readable,
  options: { buffers: PartBuffers; queueSize: number; signal: AbortSignal },
): Promise<void> {
  const { buffers, queueSize, signal } = options;
  const partSize = buffers.partSize;
  const cancel = () => body.destroy();
  signal.addEventListener('abort', cancel, { once: true });
  let uploadId: string | undefined;
  let creating: Promise<string> | undefined;
  const completed: CompletedPart[] = [];
  const inFlight = new Set<Promise<void>>();
  let failure: { error: unknown } | undefined;
  let partNumber = 0;
  let part: Buffer | undefined;
  let filled = 0;
  const { lock, ...plain } = target;
  // the object's retention goes on its creation (CreateMultipartUpload or the one PutObject)
  const creation = { ...plain, ...(lock ? { ObjectLockMode: lock.mode, ObjectLockRetainUntilDate: lock.until } : {}) };
  try {
    // lib-storage's rule: when the client checksums every request it can, the upload declares CRC32 at its creation
    const checksummed = (await client.config.requestChecksumCalculation()) === 'WHEN_SUPPORTED';
    const create = (): Promise<string> =>
      (creating ??= client
        .send(new CreateMultipartUploadCommand({ ...creation, ...(checksummed ? { ChecksumAlgorithm: ChecksumAlgorithm.CRC32 } : {}) }))
        .then((answer) => {
          if (!answer.UploadId) throw new Error('the object store started a multipart upload without an upload id');
          return (uploadId = answer.UploadId);
        }));
    const check = () => {
      if (signal.aborted) throw new Aborted();
      if (failure) throw failure.error;
    };
    const sendPart = async (buffer: Buffer, length: number): Promise<void> => {
      while (inFlight.size >= queueSize) await Promise.race(inFlight);
      check();
      const number = ++partNumber;
      const sent = (async () => {
        try {
          const UploadId = await create();
          const answer = await client.send(new UploadPartCommand({ Bucket: target.Bucket, Key: target.Key, UploadId, PartNumber: number, Body: buffer.subarray(0, length), ...(lock ? { ContentMD5: lockedWriteParams(buffer.subarray(0, length), lock).ContentMD5 } : {}) }));
          if (!answer.ETag) throw new Error(`the object store answered part ${number} without an ETag`);
          completed.push({
            PartNumber: number,
            ETag: answer.ETag,
            ...(answer.ChecksumCRC32 ? { ChecksumCRC32: answer.ChecksumCRC32 } : {}),
            ...(answer.ChecksumCRC32C ? { ChecksumCRC32C: answer.ChecksumCRC32C } : {}),
            ...(answer.ChecksumCRC64NVME ? { ChecksumCRC64NVME: answer.ChecksumCRC64NVME } : {}),
            ...(answer.ChecksumSHA1 ? { ChecksumSHA1: answer.ChecksumSHA1 } : {}),
            ...(answer.ChecksumSHA256 ? { ChecksumSHA256: answer.ChecksumSHA256 } : {}),
          });
          // the part's request is over, its retries too: the buffer can take another part
          buffers.give(buffer);
        } catch (error) {
          failure ??= { error };
        }
      })();
      inFlight.add(sent);
      void sent.then(() => inFlight.delete(sent));
    };

    for await (const chunk of body as AsyncIterable<Buffer | string>) {
      const bytes = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
      for (let offset = 0; offset < bytes.length; ) {
        check();
        if (part !== undefined && filled === partSize) {
          // more bytes after a full part: it is not the only one, so it goes up as a part of a multipart upload
          await sendPart(part, filled);
          part = undefined;
        }
        if (part === undefined) {
          part = buffers.take();
          filled = 0;
        }
        const copied = bytes.copy(part, filled, offset);
        filled += copied;
        offset += copied;
      }
    }
    check();
    if (partNumber === 0) {
      // the whole body fits one part: one PUT, as lib-storage does
      const whole = part === undefined ? Buffer.alloc(0) : part.subarray(0, filled);
      await client.send(new PutObjectCommand({ ...plain, Body: whole, ...lockedWriteParams(whole, lock) }));
    } else {
      if (part !== undefined && filled > 0) await sendPart(part, filled);
      else if (part !== undefined) buffers.give(part);
      part = undefined;
      while (inFlight.size > 0) await Promise.race(inFlight);
      check();
      completed.sort((a, b) => a.PartNumber! - b.PartNumber!);
      await client.send(new CompleteMultipartUploadCommand({ Bucket: target.Bucket, Key: target.Key, UploadId: uploadId!, MultipartUpload: { Parts: completed } }));
    }
    if (part !== undefined) buffers.give(part);
  } catch (error) {
    // Parts still in flight settle first, then the upload is aborted: S3 drops its parts, no half object remains.
    await Promise.allSettled(inFlight);
    if (creating) await creating.catch(() => undefined);
    if (uploadId !== undefined) {
      await client.send(new AbortMultipartUploadCommand({ Bucket: target.Bucket, Key: target.Key, UploadId: uploadId })).catch(() => undefined);
    }
    throw signal.aborted ? new Aborted() : error;
  } finally {
    signal.removeEventListener('abort', cancel);
  }
}
