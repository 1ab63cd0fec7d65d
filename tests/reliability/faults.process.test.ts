// Backups through the S3 fault proxy and the API server's own fault injection: each either completes with the
// same item checksums as a clean run, or fails with one sentence and leaves no marker.
import { expect } from 'chai';
import { Readable } from 'node:stream';
import { startCluster, type RunningCluster } from '../support/cluster/index.ts';
import { startS3Server, type S3ServerHandle } from '../support/s3/server.ts';
import { FaultProxy, type S3Fault } from '../support/s3/fault-proxy.ts';
import { runBackup } from '../../src/backup/engine.ts';
import type { KubeClient } from '../../src/kube/client.ts';
import type { ObjectStore } from '../../src/store/objects.ts';
import { backupRequest, bucketState, entryChecksums, kubeAt, storeAt } from './support.ts';
import { backupStore } from '../support/backup-store.ts';

const BUCKET = 'reliability';

describe('reliability: backups under S3 and API faults', function () {
  this.timeout(120_000);
  let cluster: RunningCluster;
  let s3: S3ServerHandle;
  let proxy: FaultProxy;
  let kube: KubeClient;
  let clean: Record<string, string>;
  let prefixCount = 0;

  before(async () => {
    [cluster, s3] = await Promise.all([startCluster({ profiles: 3, seed: 21 }), startS3Server({ buckets: [BUCKET] })]);
    proxy = await FaultProxy.start({ target: s3.endpoint, latencyMs: 5 });
    kube = await kubeAt(cluster.kubeconfigPath);
    cluster.faults.retryAfterSeconds = 0;
    cluster.faults.latencyMs = 5;
    await cluster.settled();
    const direct = storeAt(s3.endpoint, BUCKET, 'clean');
    clean = await entryChecksums(direct, (await runBackup(kube, backupStore(direct), backupRequest())).backupId);
  });
  afterEach(() => {
    proxy.setRate(0);
    proxy.script([]);
    proxy.restrictTo(undefined);
    cluster.faults.clear();
  });
  after(async () => {
    kube?.close();
    await proxy?.stop();
    await Promise.all([cluster?.stop(), s3?.stop()]);
  });

  function freshStore(): ObjectStore {
    return storeAt(proxy.endpoint, BUCKET, `run-${++prefixCount}`);
  }

  /** The property every run must keep; returns whether the backup completed. */
  async function backupKeepsThePromise(store: ObjectStore): Promise<boolean> {
    let id: string | undefined;
    let failure: unknown;
    try {
      id = (await runBackup(kube, backupStore(store), backupRequest())).backupId;
    } catch (error) {
      failure = error;
    }
    proxy.setRate(0);
    proxy.script([]);
    cluster.faults.clear();
    const state = await bucketState(storeAt(s3.endpoint, BUCKET, store.prefix));
    if (id) {
      expect(state.committed).to.deep.equal([id]);
      expect(await entryChecksums(store, id)).to.deep.equal(clean);
      return true;
    }
    expect(failure).to.be.instanceOf(Error);
    const message = (failure as Error).message;
    expect(message, 'one sentence, no stack').not.to.match(/\n\s+at /);
    expect(message).to.match(/\.$/);
    expect(state.committed, 'a failed backup left a marker').to.deep.equal([]);
    return false;
  }

  for (const fault of ['error-500', 'slowdown-503', 'reset-request', 'truncate-response', 'latency'] as S3Fault[]) {
    it(`completes with the clean checksums when every write's first attempt meets ${fault} (idempotent writes)`, async () => {
      proxy.restrictTo((r) => r.method === 'PUT');
      proxy.script(Array.from({ length: 40 }, (_, i) => (i % 2 === 0 ? fault : 'pass')));
      expect(await backupKeepsThePromise(freshStore())).to.equal(true);
      expect(proxy.counts[fault]).to.be.greaterThan(0);
    });
  }

  it('does not resend a multipart create whose answer was lost: the upload fails in one sentence and leaves no object', async () => {
    // The test dataset's tarball fits one PUT, so a 6 MiB stream stands in for a large archive.
    proxy.restrictTo((r) => r.method === 'POST' && r.url.includes('uploads'));
    proxy.script(['truncate-response']);
    const store = freshStore();
    const creates = () => proxy.seen.filter((r) => r.method === 'POST' && r.url.includes(`/run-${prefixCount}/big`)).length;
    const failure = await store.put('big', Readable.from([Buffer.alloc(6 * 1024 * 1024, 1)])).then(() => undefined, (e: unknown) => e as Error);
    expect(failure?.message).to.match(/^Could not upload s3:\/\/reliability\/run-\d+\/big: .+\.$/);
    expect(creates()).to.equal(1);
    expect(await storeAt(s3.endpoint, BUCKET, store.prefix).exists('big')).to.equal(false);
  });

  it('retries parts and completes a multipart upload through resets and 503s', async () => {
    proxy.restrictTo((r) => r.method === 'PUT' || (r.method === 'POST' && !r.url.includes('uploads=')));
    proxy.script(['reset-request', 'slowdown-503', 'pass', 'truncate-response', 'error-500']);
    const store = freshStore();
    const body = Buffer.alloc(11 * 1024 * 1024, 7);
    await store.put('big', Readable.from([body]));
    expect((await storeAt(s3.endpoint, BUCKET, store.prefix).getBytes('big')).equals(body)).to.equal(true);
  });

  it('fails with no marker when the marker PUT fails every time, and names the object', async () => {
    proxy.restrictTo((r) => r.method === 'PUT' && r.url.includes('velero-backup.json'));
    proxy.setRate(1, 3, ['error-500']);
    const store = freshStore();
    const failure = await runBackup(kube, backupStore(store), backupRequest()).then(() => undefined, (e: unknown) => e as Error);
    expect(failure?.message).to.match(/velero-backup\.json.*InternalError/);
    proxy.setRate(0);
    expect((await bucketState(store)).committed).to.deep.equal([]);
  });

  it('keeps the promise over seeded runs at 10% S3 faults and 10% API faults', async () => {
    let completed = 0;
    for (let seed = 1; seed <= 6; seed++) {
      proxy.setRate(0.1, seed);
      cluster.faults.reseed(seed).setRate('throttle', 0.025).setRate('error', 0.025).setRate('unavailable', 0.025).setRate('reset', 0.025);
      if (await backupKeepsThePromise(freshStore())) completed++;
    }
    // Retries absorb almost every fault at this rate; a run may still fail, but never with a marker.
    expect(completed).to.be.greaterThan(0);
    expect(Object.values(cluster.faults.injected).reduce((a, b) => a + b, 0)).to.be.greaterThan(0);
  });
});
