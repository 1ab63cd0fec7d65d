// verify-backup of a backup whose volume data is in restic repositories (volume-mover-engine=restic, a key): the charm
// in process (runEvent), the check Jobs on the simulated kubelet with Debian's restic, the repositories on s3rver. The
// repository's state is changed as a bucket writer would (a pinned snapshot deleted); a backup of plain files keeps
// today's verify, with no Job.
import { expect } from 'chai';
import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { DeleteObjectCommand, GetObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { runEvent, type EventOutcome } from '../support/juju/run-event.ts';
import { s3Relation, track1Data } from '../support/juju/scenarios.ts';
import { emptyState } from '../support/juju/state.ts';
import { startS3Server, type S3ServerHandle } from '../support/s3/server.ts';
import { clockPastSecondOf } from '../support/backup-ids.ts';
import { startKubeletCluster, type KubeletCluster } from '../volumes/helpers.ts';
import type { VolumeEntry } from '../../src/archive/manifest.ts';

const BUCKET = 'verify-restic';
const PVCS = { group: '', resource: 'persistentvolumeclaims' };
const KEY_SECRET = 'secret:cta0resticverify0001';

describe('verify-backup checks the restic repositories a backup pins (the charm in process)', function () {
  this.timeout(300_000);
  let s3: S3ServerHandle;
  let source: KubeletCluster;
  let client: S3Client;
  let namespace: string;
  let resticBackup: string;
  let filesBackup: string;
  const checkJobs: string[] = [];

  function action(name: string, params: Record<string, unknown>, engine: 'rclone' | 'restic' = 'restic'): Promise<EventOutcome> {
    const state = emptyState({
      relations: [s3Relation(track1Data(s3, BUCKET))], actionParams: params,
      config: { 'volume-mover-engine': engine, 'encryption-key': KEY_SECRET },
    });
    state.secrets[KEY_SECRET] = { revisions: [{ key: 'a verify passphrase' }] };
    return runEvent(state, { event: `actions/${name}`, env: { KUBECONFIG: source.cluster.kubeconfigPath } });
  }
  const results = (outcome: EventOutcome, prefix: string) => Object.entries(outcome.state.actionResults).filter(([k]) => k.startsWith(prefix)).map(([, v]) => v);

  before(async () => {
    [s3, source] = await Promise.all([startS3Server({ buckets: [BUCKET] }), startKubeletCluster({ profiles: 1, seed: 37 })]);
    const claim = source.cluster.api.list(PVCS).find((p) => p.metadata.namespace !== 'kubeflow')!;
    namespace = claim.metadata.namespace!;
    writeFileSync(join(source.kubelet.volumePath(namespace, claim.metadata.name!), 'weights.bin'), randomBytes(200_000));
    source.cluster.api.subscribe((e) => {
      if (e.ref.resource === 'jobs' && e.type === 'ADDED' && e.object.metadata.name?.startsWith('kfu-verify-')) checkJobs.push(`${e.object.metadata.namespace}/${e.object.metadata.name}`);
    });
    client = new S3Client({ endpoint: s3.endpoint, region: 'us-east-1', forcePathStyle: true, credentials: { accessKeyId: s3.accessKeyId, secretAccessKey: s3.secretAccessKey } });
    const files = await action('backup-state', { 'include-control-plane': false }, 'rclone');
    expect(files.state.actionFailure, files.stderr.slice(-2000)).to.equal(undefined);
    filesBackup = files.state.actionResults['backup-id']!;
    await clockPastSecondOf(filesBackup);
    const restic = await action('backup-state', { 'include-control-plane': false });
    expect(restic.state.actionFailure, restic.stderr.slice(-2000)).to.equal(undefined);
    resticBackup = restic.state.actionResults['backup-id']!;
  });
  after(async () => {
    client?.destroy();
    await Promise.all([s3?.stop(), source?.stop()]);
  });

  it('a good backup: each repository ok, its structure checked, and with read-data=full all of its data', async () => {
    const plain = await action('verify-backup', { 'backup-id': resticBackup });
    expect(plain.state.actionFailure, plain.stderr.slice(-2000)).to.equal(undefined);
    const r = plain.state.actionResults;
    expect(r.status).to.equal('ok');
    expect(r['volume-data']).to.equal('restic');
    expect(r['restic-repositories.0.namespace']).to.equal(namespace);
    expect(r['restic-repositories.0.repository']).to.equal(`s3://${BUCKET}/backups/restic/${namespace}`);
    expect(r['restic-repositories.0.status']).to.equal('ok');
    expect(r['restic-repositories.0.checked']).to.equal('structure only (index, snapshots, trees; no data pack read: read-data=full reads them)');
    expect(Number(r['restic-repositories.0.pinned-snapshots'])).to.be.greaterThan(0);
    // progress goes out at most once a second, the newest line always: the repository's verdict is the last one
    expect(plain.state.actionLogs.at(-1)).to.equal(`restic repository of ${namespace}: ok`);
    expect(checkJobs.every((j) => j.startsWith('kubeflow/')), 'the check Jobs run in the model\'s namespace').to.equal(true);

    const full = await action('verify-backup', { 'backup-id': resticBackup, 'read-data': 'full' });
    expect(full.state.actionFailure, full.stderr.slice(-2000)).to.equal(undefined);
    expect(full.state.actionResults['restic-repositories.0.checked']).to.match(/^structure and all data, [1-9]\d* pack\(s\) read$/);
  });

  it('a backup of plain files keeps today\'s verify: no repository, no Job', async () => {
    const before = checkJobs.length;
    const verified = await action('verify-backup', { 'backup-id': filesBackup, 'read-data': 'full' });
    expect(verified.state.actionFailure, verified.stderr.slice(-2000)).to.equal(undefined);
    expect(verified.state.actionResults.status).to.equal('ok');
    expect(verified.state.actionResults['volume-data']).to.equal('files');
    expect(results(verified, 'restic-repositories.')).to.deep.equal([]);
    expect(checkJobs.length).to.equal(before);
  });

  it('a read-data value restic would refuse is one sentence, and no Job is made', async () => {
    const before = checkJobs.length;
    const refused = await action('verify-backup', { 'backup-id': resticBackup, 'read-data': '0%' });
    expect(refused.state.actionFailure).to.equal('Parameter "read-data" of verify-backup must be none, full, a percentage of the packs (10%), a group n/t with t at most 256 (1/5), or a size (500M).');
    expect(checkJobs.length).to.equal(before);
  });

  it('a pinned snapshot deleted from the repository fails the verdict, naming the PVC and the repository', async () => {
    const manifest = JSON.parse(await (await client.send(new GetObjectCommand({ Bucket: BUCKET, Key: `backups/backups/${resticBackup}/kubeflow-upgrader.json` }))).Body!.transformToString()) as { volumes: VolumeEntry[] };
    const pinned = manifest.volumes.find((v) => v.restic)!;
    await client.send(new DeleteObjectCommand({ Bucket: BUCKET, Key: `backups/restic/${namespace}/snapshots/${pinned.restic!.snapshot}` }));
    const verified = await action('verify-backup', { 'backup-id': resticBackup });
    expect(verified.state.actionFailure).to.equal(`Backup ${resticBackup} is corrupt (1 problem(s), listed in the results); do not restore from it.`);
    const r = verified.state.actionResults;
    expect(r.status).to.equal('corrupt');
    expect(r['restic-repositories.0.status']).to.equal('damaged');
    const problem = `the snapshot pinned for PVC ${pinned.pvc} (${pinned.restic!.snapshot.slice(0, 8)}) is not in the repository`;
    expect(r['restic-repositories.0.problem']).to.equal(problem);
    expect(results(verified, 'problems.')).to.deep.equal([`The restic repository of namespace ${namespace} (s3://${BUCKET}/backups/restic/${namespace}) is damaged: ${problem}.`]);
  });
});
