import { expect } from 'chai';
import { S3Client } from '@aws-sdk/client-s3';
import { Readable } from 'node:stream';
import { ObjectStore, StoreError } from '../../src/store/objects.ts';
import type { S3ServerHandle } from '../support/s3/server.ts';
import { BUCKET, startStore } from '../archive/fixtures.ts';

async function failure(run: () => Promise<unknown>): Promise<StoreError> {
  try {
    await run();
  } catch (error) {
    expect(error).to.be.instanceOf(StoreError);
    return error as StoreError;
  }
  throw new Error('expected a StoreError');
}

describe('store/objects: ObjectStore against s3rver', () => {
  let server: S3ServerHandle;
  let client: S3Client;
  let store: ObjectStore;
  before(async () => ({ server, client, store } = await startStore('team/kf')));
  after(async () => server.stop());

  it('streams a multipart upload and reads it back byte for byte under the prefix', async () => {
    const part = Buffer.alloc(1024 * 1024, 7);
    const chunks = Array.from({ length: 6 }, (_, i) => Buffer.from(part.map((b) => (b + i) & 0xff)));
    await store.put('backups/x/big.bin', Readable.from(chunks));
    const head = await store.head('backups/x/big.bin');
    expect(head?.size).to.equal(6 * 1024 * 1024);
    const back = await store.getBytes('backups/x/big.bin');
    expect(back.equals(Buffer.concat(chunks))).to.equal(true);
    expect(store.url('backups/x/big.bin')).to.equal(`s3://${BUCKET}/team/kf/backups/x/big.bin`);
  });

  it('lists across pages and folders, and deletes a whole folder', async () => {
    for (let i = 0; i < 23; i++) await store.put(`backups/del/f-${String(i).padStart(2, '0')}`, `v${i}`);
    await store.put('backups/keep/a', 'a');
    const keys: string[] = [];
    for await (const o of store.list('backups/del/', { pageSize: 5 })) keys.push(o.key);
    expect(keys).to.have.length(23);
    expect(keys[0]).to.equal('backups/del/f-00');
    const folders: string[] = [];
    for await (const f of store.listFolders('backups/')) folders.push(f);
    const paged: string[] = [];
    for await (const o of store.list('backups/', { pageSize: 4 })) paged.push(o.key);
    expect(new Set(paged).size).to.equal(paged.length);
    expect(folders).to.include.members(['backups/del/', 'backups/keep/']);
    expect(await store.deleteFolder('backups/del/')).to.equal(23);
    expect(await store.head('backups/del/f-00')).to.equal(undefined);
    expect(await store.exists('backups/keep/a')).to.equal(true);
    const refused = await store.deleteFolder('backups').catch((e: Error) => e);
    expect(String(refused)).to.match(/Refusing to delete "backups"/);
  });

  it('aborting a streaming upload leaves no object behind', async () => {
    const body = new Readable({ read() {} });
    const handle = store.startUpload('backups/aborted/blob', body);
    body.push(Buffer.alloc(6 * 1024 * 1024, 1)); // more than one part, so a multipart upload is in flight
    await new Promise((r) => setTimeout(r, 200));
    await handle.abort();
    const err = await failure(() => handle.done());
    expect(err.condition).to.equal('aborted');
    expect(await store.exists('backups/aborted/blob')).to.equal(false);
  });

  it('says in one sentence that an object is missing', async () => {
    const err = await failure(() => store.getBytes('backups/none/x'));
    expect(err.condition).to.equal('not-found');
    expect(err.message).to.equal(`Could not read s3://${BUCKET}/team/kf/backups/none/x: the object does not exist.`);
  });

  it('names a missing bucket', async () => {
    const other = new ObjectStore({ client, bucket: 'no-such-bucket' });
    const err = await failure(() => other.put('k', 'v'));
    expect(err.condition).to.equal('no-bucket');
    expect(err.message).to.match(/^Could not upload s3:\/\/no-such-bucket\/k: the bucket does not exist\.$/);
  });

  it('rejects bad credentials without echoing them', async () => {
    const secret = 'wJalrXUtnFEMI-K7MDENG-bPxRfiCYEXAMPLEKEY';
    const bad = new S3Client({
      endpoint: server.endpoint, region: 'us-east-1', forcePathStyle: true, maxAttempts: 1,
      credentials: { accessKeyId: 'AKIAWRONGKEY', secretAccessKey: secret },
    });
    const err = await failure(() => new ObjectStore({ client: bad, bucket: BUCKET }).put('k', 'v'));
    expect(err.condition).to.equal('bad-credentials');
    expect(err.message).not.to.include(secret);
    expect(err.message).not.to.include('AKIAWRONGKEY');
  });

  it('says the endpoint is unreachable', async () => {
    const dead = new S3Client({
      endpoint: 'http://127.0.0.1:1', region: 'us-east-1', forcePathStyle: true, maxAttempts: 1,
      credentials: { accessKeyId: 'a', secretAccessKey: 'b' },
    });
    const err = await failure(() => new ObjectStore({ client: dead, bucket: BUCKET }).head('k'));
    expect(err.condition).to.equal('unreachable');
    expect(err.message).to.equal(`Could not look up s3://${BUCKET}/k: the endpoint is unreachable (ECONNREFUSED).`);
  });
});
