// s3rver ships no type declarations; this covers the part the test support uses.
declare module 's3rver' {
  import type { AddressInfo } from 'node:net';
  interface S3rverOptions {
    address?: string;
    port?: number;
    silent?: boolean;
    directory: string;
    vhostBuckets?: boolean;
    key?: Buffer;
    cert?: Buffer;
    configureBuckets?: { name: string; configs: Buffer[] }[];
    allowMismatchedSignatures?: boolean;
  }
  export default class S3rver {
    constructor(options: S3rverOptions);
    run(): Promise<AddressInfo>;
    close(): Promise<void>;
  }
}
