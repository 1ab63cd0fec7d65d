// The volume mover's rclone remote, run by the real rclone against s3rver behind the AWS-like region proxy: the
// addressing the one rule chose and the storage class reach the requests rclone sends.
import { expect } from 'chai';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { HeadObjectCommand } from '@aws-sdk/client-s3';
import { REMOTE_NAME, rcloneRemoteEnv } from '../../src/volumes/rclone-env.ts';
import { moverS3Settings } from '../../src/volumes/settings.ts';
import { settingsFromProvider, type S3Settings } from '../../src/store/settings.ts';
import { createS3Client } from '../../src/store/s3-client.ts';
import { RegionProxy } from '../support/s3/region-proxy.ts';
import { runRclone } from '../support/s3/rclone.ts';
import { startS3Server, type S3ServerHandle } from '../support/s3/server.ts';

const BUCKET = 'kf-backups';

describe('volumes/rclone-env: the mover remote as rclone uses it', function () {
  let s3: S3ServerHandle;
  let proxy: RegionProxy;
  let work: string;

  before(async () => {
    s3 = await startS3Server({ buckets: [BUCKET] });
    proxy = await RegionProxy.start({ target: s3.endpoint });
    work = mkdtempSync(join(tmpdir(), 'rclone-env-'));
    writeFileSync(join(work, 'file.txt'), 'volume bytes');
  });
  after(async () => {
    await proxy?.stop();
    await s3?.stop();
    rmSync(work, { recursive: true, force: true });
  });

  /** Settings as the charm reads them from a track-1 databag (the one rule applied there). */
  function fromRelation(extra: Record<string, string>): S3Settings {
    const readiness = settingsFromProvider({ databag: { 'access-key': s3.accessKeyId, 'secret-key': s3.secretAccessKey, bucket: BUCKET, endpoint: proxy.endpoint, ...extra } }, { bucket: BUCKET, path: '' });
    if (readiness.state !== 'ready') throw new Error(`settings not ready: ${JSON.stringify(readiness)}`);
    return readiness.settings;
  }

  async function storageClassOf(key: string): Promise<string | undefined> {
    const client = createS3Client({ accessKey: s3.accessKeyId, secretKey: s3.secretAccessKey, bucket: BUCKET, path: '', endpoint: s3.endpoint, region: 'us-east-1', uriStyle: 'path' });
    try {
      return (await client.send(new HeadObjectCommand({ Bucket: BUCKET, Key: key }))).StorageClass;
    } finally {
      client.destroy();
    }
  }

  it('sends host-style requests when s3-uri-style says virtual, and uploads with the storage class', async () => {
    const mark = proxy.seen.length;
    const env = rcloneRemoteEnv(moverS3Settings(fromRelation({ 's3-uri-style': 'virtual', 'storage-class': 'STANDARD_IA' })));
    await runRclone(env, ['copyto', join(work, 'file.txt'), `${REMOTE_NAME}:${BUCKET}/host/file.txt`], { httpProxy: proxy.forwardProxy });
    const seen = proxy.seen.slice(mark);
    expect(seen.length).to.be.greaterThan(0);
    expect(seen.every((r) => r.style === 'host' && r.bucket === BUCKET)).to.equal(true);
    expect(await storageClassOf('host/file.txt')).to.equal('STANDARD_IA');
  });

  it('sends path-style requests to a custom endpoint without s3-uri-style, and leaves the class to the bucket', async () => {
    const mark = proxy.seen.length;
    const env = rcloneRemoteEnv(moverS3Settings(fromRelation({})));
    await runRclone(env, ['copyto', join(work, 'file.txt'), `${REMOTE_NAME}:${BUCKET}/path/file.txt`], { httpProxy: proxy.forwardProxy });
    const seen = proxy.seen.slice(mark);
    expect(seen.length).to.be.greaterThan(0);
    expect(seen.every((r) => r.style === 'path')).to.equal(true);
    expect(await storageClassOf('path/file.txt')).to.equal(undefined);
  });

  it('goes to the regional AWS endpoint in host style for the endpoint of Canonical\'s AWS guide', () => {
    const settings = settingsFromProvider({ databag: { 'access-key': 'AKIA0000', 'secret-key': 'sekret-value', bucket: BUCKET, endpoint: 'https://s3.amazonaws.com', region: 'us-west-2' } }, { bucket: BUCKET, path: '' });
    if (settings.state !== 'ready') throw new Error('not ready');
    const env = rcloneRemoteEnv(moverS3Settings(settings.settings));
    expect(env).to.include({ RCLONE_CONFIG_KFUSTORE_ENDPOINT: 'https://s3.us-west-2.amazonaws.com', RCLONE_CONFIG_KFUSTORE_FORCE_PATH_STYLE: 'false', RCLONE_CONFIG_KFUSTORE_REGION: 'us-west-2' });
  });
});
