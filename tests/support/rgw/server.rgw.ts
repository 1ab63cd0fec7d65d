// The radosgw test server itself (server.ts): it serves S3 with the keys it hands back, copies run side by side, and
// nothing of it is left once it is stopped or the test process ends. `npm run test:rgw`. Nothing is simulated (upstream:
// github.com/ceph/ceph v16.2.15, the daemons server.ts names).
import { expect } from 'chai';
import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { GetObjectCommand, ListBucketsCommand, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { startRgw, type RgwHandle } from './server.ts';

const here = dirname(fileURLToPath(import.meta.url));

function clientOf(rgw: RgwHandle, keys: { accessKeyId: string; secretAccessKey: string } = rgw): S3Client {
  return new S3Client({ endpoint: rgw.endpoint, region: rgw.region, forcePathStyle: true, credentials: { accessKeyId: keys.accessKeyId, secretAccessKey: keys.secretAccessKey }, maxAttempts: 1, requestChecksumCalculation: 'WHEN_REQUIRED' });
}

/** A process that is gone, or a zombie nobody reaped yet (it holds no memory, port or file). */
function gone(pid: number): boolean {
  try {
    return readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.startsWith('Z');
  } catch {
    return true;
  }
}

/** Waits until every pid is gone; the sign is the kernel's process table, checked each 50 ms for at most 10 s. */
async function allGone(pids: number[]): Promise<number[]> {
  const deadline = Date.now() + 10_000;
  while (pids.some((pid) => !gone(pid)) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
  return pids.filter((pid) => !gone(pid));
}

describe('support/rgw: a one-node radosgw as a test S3 server', () => {
  let rgw: RgwHandle;
  before(async () => {
    rgw = await startRgw({ buckets: ['first-bucket'] });
  });
  after(async () => rgw?.stop());

  it('serves its buckets path style with the keys it hands back, and refuses other keys', async () => {
    const client = clientOf(rgw);
    await client.send(new PutObjectCommand({ Bucket: 'first-bucket', Key: 'a/b.txt', Body: 'hello' }));
    const answer = await client.send(new GetObjectCommand({ Bucket: 'first-bucket', Key: 'a/b.txt' }));
    expect(await answer.Body!.transformToString()).to.equal('hello');
    const stranger = clientOf(rgw, { accessKeyId: 'NOBODY', secretAccessKey: 'nothing' });
    const refused = await stranger.send(new ListBucketsCommand({})).then(() => undefined, (error: { Code?: string }) => error.Code);
    expect(refused).to.equal('InvalidAccessKeyId');
    expect(rgw.pids).to.have.length(3);
  });

  it('runs a second copy beside the first, on other ports, with buckets of its own', async () => {
    const second = await startRgw({ buckets: ['second-bucket'] });
    try {
      expect(second.port).to.not.equal(rgw.port);
      expect(second.directory).to.not.equal(rgw.directory);
      const names = async (of: RgwHandle) => ((await clientOf(of).send(new ListBucketsCommand({}))).Buckets ?? []).map((b) => b.Name);
      expect(await names(second)).to.deep.equal(['second-bucket']);
      expect(await names(rgw)).to.deep.equal(['first-bucket']);
    } finally {
      await second.stop();
    }
  });

  it('stops every process it started and removes its folder', async () => {
    const other = await startRgw();
    expect(other.pids.every((pid) => !gone(pid))).to.equal(true);
    await other.stop();
    expect(await allGone(other.pids)).to.deep.equal([]);
    expect(existsSync(other.directory)).to.equal(false);
  });

  for (const ending of ['exit', 'SIGTERM']) {
    it(`leaves no process and no folder when the test process ends by ${ending} without stopping it`, async () => {
      const child = spawn(process.execPath, ['--import', 'tsx', join(here, 'exit-fixture.ts'), ending], { stdio: ['ignore', 'pipe', 'inherit'] });
      const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
      const line = await new Promise<string>((resolve, reject) => {
        createInterface({ input: child.stdout! }).once('line', resolve);
        child.once('exit', (code, signal) => reject(new Error(`the fixture ended (${code ?? signal}) before radosgw answered`)));
      });
      const started = JSON.parse(line) as { pids: number[]; directory: string };
      await exited;
      expect(started.pids).to.have.length(3);
      expect(await allGone(started.pids)).to.deep.equal([]);
      expect(existsSync(started.directory)).to.equal(false);
    });
  }
});
