// Upstream (github.com/awsdocs, the S3 API reference): AWS S3 "Signature Calculations for the Authorization Header: Transferring Payload in Multiple Chunks".
// The body of an `aws-chunked` upload, decoded as S3 decodes it. s3rver stores such a body as it arrives, chunk framing
// and all (it only checks that x-amz-content-sha256 names a known mode, s3rver lib/middleware/authentication.js), so a
// client that streams its signature (minio-go over plain HTTP, restic's S3 client) would read back bytes it never
// wrote. Followed: AWS's Signature Version 4 streaming specification, "Signature Calculations for the Authorization
// Header: Transferring Payload in Multiple Chunks" and "... Including Trailing Headers" (Amazon S3 API Reference,
// sigv4-streaming.html and sigv4-streaming-trailers.html), and minio-go's writer of the same format
// (minio/minio-go pkg/signer/request-signature-streaming.go, request-signature-streaming-unsigned-trailer.go):
// - STREAMING-AWS4-HMAC-SHA256-PAYLOAD: `<hex size>;chunk-signature=<sig>\r\n<data>\r\n` ... ending in a chunk of size 0;
//   each signature is HMAC-SHA256 with the request's signing key over "AWS4-HMAC-SHA256-PAYLOAD", the request time, the
//   credential scope, the previous signature (the Authorization header's for the first chunk), the hash of the empty
//   string and the hash of the chunk's data.
// - STREAMING-AWS4-HMAC-SHA256-PAYLOAD-TRAILER: the same, then trailing headers and `x-amz-trailer-signature:<sig>`,
//   signed over "AWS4-HMAC-SHA256-TRAILER" and the hash of the trailing headers (each `name:value\n`).
// - STREAMING-UNSIGNED-PAYLOAD-TRAILER: `<hex size>\r\n<data>\r\n` ... `0\r\n`, then trailing headers, then `\r\n`.
// The decoded length must equal x-amz-decoded-content-length, and a trailing x-amz-checksum-* must match the data.
import { createHash, createHmac } from 'node:crypto';
import { crc32 } from 'node:zlib';

export type StreamingMode = 'STREAMING-AWS4-HMAC-SHA256-PAYLOAD' | 'STREAMING-AWS4-HMAC-SHA256-PAYLOAD-TRAILER' | 'STREAMING-UNSIGNED-PAYLOAD-TRAILER';
export const STREAMING_MODES: readonly StreamingMode[] = ['STREAMING-AWS4-HMAC-SHA256-PAYLOAD', 'STREAMING-AWS4-HMAC-SHA256-PAYLOAD-TRAILER', 'STREAMING-UNSIGNED-PAYLOAD-TRAILER'];

/** A refusal with S3's error code for it. */
export class ChunkedBodyError extends Error {
  constructor(readonly code: 'SignatureDoesNotMatch' | 'IncompleteBody' | 'InvalidRequest' | 'BadDigest', message: string) {
    super(message);
  }
}

/** What the chunk signatures are checked against: the request's signing key, time, scope and seed signature. */
export interface ChunkSigning {
  signingKey: Buffer;
  /** x-amz-date */
  timestamp: string;
  /** `<date>/<region>/<service>/aws4_request` */
  scope: string;
  /** the Authorization header's signature */
  seedSignature: string;
}

export interface DecodedBody {
  payload: Buffer;
  trailers: Record<string, string>;
}

const EMPTY_SHA256 = createHash('sha256').update('').digest('hex');
const sha256Hex = (data: Buffer | string) => createHash('sha256').update(data).digest('hex');

/** AWS's derived signing key: HMAC chain over the date, region, service and "aws4_request". */
export function signingKey(secretAccessKey: string, date: string, region: string, service: string): Buffer {
  const dateKey = createHmac('sha256', `AWS4${secretAccessKey}`).update(date).digest();
  const regionKey = createHmac('sha256', dateKey).update(region).digest();
  const serviceKey = createHmac('sha256', regionKey).update(service).digest();
  return createHmac('sha256', serviceKey).update('aws4_request').digest();
}

export function chunkSignature(signing: Omit<ChunkSigning, 'seedSignature'>, previous: string, data: Buffer): string {
  const toSign = ['AWS4-HMAC-SHA256-PAYLOAD', signing.timestamp, signing.scope, previous, EMPTY_SHA256, sha256Hex(data)].join('\n');
  return createHmac('sha256', signing.signingKey).update(toSign).digest('hex');
}

export function trailerSignature(signing: Omit<ChunkSigning, 'seedSignature'>, previous: string, trailerText: string): string {
  const toSign = ['AWS4-HMAC-SHA256-TRAILER', signing.timestamp, signing.scope, previous, sha256Hex(trailerText)].join('\n');
  return createHmac('sha256', signing.signingKey).update(toSign).digest('hex');
}

/** Finds `\r\n` from `at`; the line before it and where the next one starts. */
function line(body: Buffer, at: number): { text: string; next: number } {
  const end = body.indexOf('\r\n', at);
  if (end < 0) throw new ChunkedBodyError('IncompleteBody', 'The aws-chunked body ends inside a chunk header.');
  return { text: body.subarray(at, end).toString('latin1'), next: end + 2 };
}

// Castagnoli CRC (x-amz-checksum-crc32c), reflected polynomial 0x82F63B78.
const CRC32C_TABLE = (() => {
  const table = new Uint32Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? (c >>> 1) ^ 0x82f63b78 : c >>> 1;
    table[n] = c >>> 0;
  }
  return table;
})();

function crc32c(data: Buffer): number {
  let crc = 0xffffffff;
  for (const byte of data) crc = CRC32C_TABLE[(crc ^ byte) & 0xff]! ^ (crc >>> 8);
  return (crc ^ 0xffffffff) >>> 0;
}

const uint32Base64 = (value: number) => {
  const bytes = Buffer.alloc(4);
  bytes.writeUInt32BE(value >>> 0);
  return bytes.toString('base64');
};

/** The base64 checksum S3 compares with a trailing (or header) x-amz-checksum-<algorithm>; undefined for one it does not know here. */
export function checksumOf(algorithm: string, data: Buffer): string | undefined {
  switch (algorithm) {
    case 'crc32': return uint32Base64(crc32(data));
    case 'crc32c': return uint32Base64(crc32c(data));
    case 'sha1': return createHash('sha1').update(data).digest('base64');
    case 'sha256': return createHash('sha256').update(data).digest('base64');
    default: return undefined;
  }
}

/** Decodes a whole aws-chunked body; throws ChunkedBodyError with S3's code for a body S3 would refuse. */
export function decodeAwsChunked(body: Buffer, mode: StreamingMode, decodedLength: number, signing?: ChunkSigning): DecodedBody {
  const signed = mode !== 'STREAMING-UNSIGNED-PAYLOAD-TRAILER';
  const pieces: Buffer[] = [];
  let previous = signing?.seedSignature ?? '';
  let at = 0;
  let total = 0;
  for (;;) {
    const header = line(body, at);
    const [sizeText, ...extensions] = header.text.split(';');
    if (!sizeText || !/^[0-9a-fA-F]+$/.test(sizeText)) throw new ChunkedBodyError('InvalidRequest', `"${header.text.slice(0, 40)}" is not an aws-chunked chunk header.`);
    const size = parseInt(sizeText, 16);
    const data = body.subarray(header.next, header.next + size);
    if (data.length < size) throw new ChunkedBodyError('IncompleteBody', 'The aws-chunked body ends inside a chunk.');
    if (signed) {
      const given = extensions.find((e) => e.startsWith('chunk-signature='))?.slice('chunk-signature='.length);
      if (!given) throw new ChunkedBodyError('SignatureDoesNotMatch', 'A chunk of a signed aws-chunked body has no chunk-signature.');
      if (signing) {
        const expected = chunkSignature(signing, previous, data);
        if (given !== expected) throw new ChunkedBodyError('SignatureDoesNotMatch', 'The chunk signature we calculated does not match the signature you provided.');
      }
      previous = given;
    }
    total += size;
    if (total > decodedLength) throw new ChunkedBodyError('IncompleteBody', 'The aws-chunked body holds more than x-amz-decoded-content-length.');
    pieces.push(data);
    at = header.next + size;
    if (size === 0) break;
    if (body.subarray(at, at + 2).toString('latin1') !== '\r\n') throw new ChunkedBodyError('InvalidRequest', 'An aws-chunked chunk is not followed by CRLF.');
    at += 2;
  }
  if (total !== decodedLength) throw new ChunkedBodyError('IncompleteBody', `The aws-chunked body holds ${total} bytes, x-amz-decoded-content-length says ${decodedLength}.`);
  const payload = Buffer.concat(pieces);
  const trailers: Record<string, string> = {};
  if (mode === 'STREAMING-AWS4-HMAC-SHA256-PAYLOAD') {
    // the final chunk's header line is followed by an empty line
    if (body.subarray(at, at + 2).toString('latin1') !== '\r\n') throw new ChunkedBodyError('InvalidRequest', 'The final aws-chunked chunk is not followed by CRLF.');
    return { payload, trailers };
  }
  let trailerText = '';
  let trailerSig: string | undefined;
  for (;;) {
    if (at >= body.length) break; // minio-go ends the unsigned variant's trailers with one CRLF only
    const next = line(body, at);
    at = next.next;
    if (next.text === '') break;
    const colon = next.text.indexOf(':');
    if (colon < 0) throw new ChunkedBodyError('InvalidRequest', 'A trailing header of an aws-chunked body has no colon.');
    const name = next.text.slice(0, colon).trim().toLowerCase();
    const value = next.text.slice(colon + 1).trim();
    if (name === 'x-amz-trailer-signature') {
      trailerSig = value;
      continue;
    }
    trailers[name] = value;
    trailerText += `${name}:${value}\n`;
  }
  if (signed) {
    if (!trailerSig) throw new ChunkedBodyError('SignatureDoesNotMatch', 'The trailing headers of a signed aws-chunked body carry no x-amz-trailer-signature.');
    if (signing && trailerSig !== trailerSignature(signing, previous, trailerText)) {
      throw new ChunkedBodyError('SignatureDoesNotMatch', 'The trailer signature we calculated does not match the signature you provided.');
    }
  }
  for (const [name, value] of Object.entries(trailers)) {
    const algorithm = /^x-amz-checksum-(.+)$/.exec(name)?.[1];
    if (!algorithm) continue;
    const expected = checksumOf(algorithm, payload);
    if (expected !== undefined && expected !== value) throw new ChunkedBodyError('BadDigest', `The ${algorithm.toUpperCase()} you specified did not match the calculated checksum.`);
  }
  return { payload, trailers };
}

/** The Authorization header's credential scope, access key id and signature (SigV4). */
export function parseAuthorization(header: string | undefined): { accessKeyId: string; date: string; region: string; service: string; signature: string } | undefined {
  const match = /^AWS4-HMAC-SHA256\s+Credential=([^/]+)\/(\d{8})\/([^/]+)\/([^/]+)\/aws4_request,\s*SignedHeaders=[^,]+,\s*Signature=([0-9a-f]{64})$/.exec(header?.trim() ?? '');
  if (!match) return undefined;
  return { accessKeyId: match[1]!, date: match[2]!, region: match[3]!, service: match[4]!, signature: match[5]! };
}
