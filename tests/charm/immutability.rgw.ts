// backup-immutability in the charm, run in process (runEvent, over the fake hook tools' rules) against a real Ceph
// RADOS Gateway (tests/support/rgw) holding one bucket created with Object Lock and one without: the status at config
// time, the actions that refuse on a bucket that cannot hold immutable backups or on a value that does not parse, and a
// backup-state whose marker radosgw holds under the mode asked for. The oracle is radosgw's own answer (HeadObject's
// x-amz-object-lock-* headers, the bucket's listing). `npm run test:rgw`.
import { expect } from 'chai';
import { DeleteObjectCommand, HeadObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { runEvent, type EventOutcome } from '../support/juju/run-event.ts';
import { unitStatus } from '../support/juju/hook-context.ts';
import { s3Relation, track1Data } from '../support/juju/scenarios.ts';
import { emptyState, type FakeJujuState } from '../support/juju/state.ts';
import { startCluster, type RunningCluster } from '../support/cluster/index.ts';
import { startRgw, type RgwHandle } from '../support/rgw/server.ts';
import { listKeys } from '../controlplane/fixtures.ts';
import { clockPastSecondOf } from '../support/backup-ids.ts';

const LOCKED = 'kf-locked';
const PLAIN = 'kf-plain';

describe('charm: backup-immutability on radosgw (the charm in process)', function () {
  this.timeout(180_000);
  let rgw: RgwHandle;
  let cluster: RunningCluster;
  let client: S3Client;
  let backupId = '';

  before(async () => {
    [rgw, cluster] = await Promise.all([startRgw({ buckets: [PLAIN], objectLockBuckets: [LOCKED] }), startCluster({ profiles: 1, seed: 9 })]);
    client = new S3Client({ endpoint: rgw.endpoint, region: rgw.region, forcePathStyle: true, credentials: { accessKeyId: rgw.accessKeyId, secretAccessKey: rgw.secretAccessKey } });
  });
  after(async () => {
    client?.destroy();
    await Promise.all([rgw?.stop(), cluster?.stop()]);
  });

  const state = (bucket: string, config: Record<string, unknown>, params?: Record<string, unknown>): FakeJujuState =>
    emptyState({ relations: [s3Relation(track1Data(rgw, bucket, { region: rgw.region }))], config, ...(params ? { actionParams: params } : {}) });
  const configChanged = (bucket: string, config: Record<string, unknown>) => runEvent(state(bucket, config), { event: 'config-changed' });
  const action = (name: string, bucket: string, config: Record<string, unknown>, params?: Record<string, unknown>): Promise<EventOutcome> =>
    runEvent(state(bucket, config, params ?? {}), { event: `actions/${name}`, env: { KUBECONFIG: cluster.kubeconfigPath } });

  it('says the backups are immutable when the bucket has Object Lock', async () => {
    const outcome = await configChanged(LOCKED, { 'backup-immutability': '30d' });
    expect(unitStatus(outcome.state)?.status).to.equal('active');
    expect(unitStatus(outcome.state)?.message).to.include('backups immutable for 30d');
  });

  it('blocks, saying in one sentence how to get a bucket with Object Lock, when the bucket has none', async () => {
    const outcome = await configChanged(PLAIN, { 'backup-immutability': '30d' });
    expect(unitStatus(outcome.state)).to.deep.equal({
      status: 'blocked',
      message: `bucket "${PLAIN}" has no Object Lock (needed by backup-immutability, given only at creation): use a bucket created with --object-lock-enabled-for-bucket, or unset backup-immutability`,
    });
  });

  it('a value that does not parse blocks with one sentence, refuses backup-state, and leaves list-backups working', async () => {
    const outcome = await configChanged(LOCKED, { 'backup-immutability': 'forever' });
    expect(unitStatus(outcome.state)?.status).to.equal('blocked');
    expect(unitStatus(outcome.state)?.message).to.match(/^config option backup-immutability must be a duration and an optional mode, like 30d/);
    const backup = await action('backup-state', LOCKED, { 'backup-immutability': 'forever' }, { 'include-volumes': false, 'include-control-plane': false });
    expect(backup.state.actionFailure).to.match(/^config option backup-immutability must be .*; nothing was changed\.$/);
    const listed = await action('list-backups', LOCKED, { 'backup-immutability': 'forever' });
    expect(listed.state.actionFailure, listed.stderr).to.equal(undefined);
  });

  it('backup-state refuses a bucket without Object Lock, having written nothing', async () => {
    const backup = await action('backup-state', PLAIN, { 'backup-immutability': '30d' }, { 'include-volumes': false, 'include-control-plane': false });
    expect(backup.state.actionFailure).to.equal(`The bucket "${PLAIN}" has no Object Lock (needed by backup-immutability, given only at creation): use a bucket created with --object-lock-enabled-for-bucket, or unset backup-immutability; nothing was changed.`);
    expect(await listKeys(client, PLAIN)).to.deep.equal([]);
  });

  it('backup-state writes its marker under the mode asked for, until the duration after its start', async () => {
    const started = Date.now();
    const backup = await action('backup-state', LOCKED, { 'backup-immutability': '2h governance' }, { 'include-volumes': false, 'include-control-plane': false });
    expect(backup.state.actionFailure, backup.stderr).to.equal(undefined);
    const id = backup.state.actionResults['backup-id']!;
    const head = await client.send(new HeadObjectCommand({ Bucket: LOCKED, Key: `backups/backups/${id}/velero-backup.json` }));
    expect(head.ObjectLockMode).to.equal('GOVERNANCE');
    // the server keeps whole seconds; the backup started between `started` and now
    expect(head.ObjectLockRetainUntilDate!.getTime()).to.be.within(started + 2 * 3_600_000 - 1_000, Date.now() + 2 * 3_600_000);
    backupId = id;
  });

  it('list-backups tells of a backup someone hid with the key, and recover-backups brings it back', async () => {
    const config = { 'backup-immutability': '2h governance' };
    await client.send(new DeleteObjectCommand({ Bucket: LOCKED, Key: `backups/backups/${backupId}/velero-backup.json` }));
    const hidden = await action('list-backups', LOCKED, config);
    expect(hidden.state.actionFailure, hidden.stderr).to.equal(undefined);
    expect(hidden.state.actionResults).to.include({ count: '0', 'covered.hidden': '1', 'covered.hidden-backups': backupId });
    expect(hidden.state.actionResults['covered.warning']).to.match(/^1 object\(s\) still under Object Lock retention are hidden by a delete marker and 0 written over \(the backups kf-[^)]+ are no longer listed\), .*: run recover-backups\.$/);
    const recovered = await action('recover-backups', LOCKED, config);
    expect(recovered.state.actionFailure, recovered.stderr).to.equal(undefined);
    expect(recovered.state.actionResults).to.include({ recovered: '1', 'listed-again': backupId });
    const listed = await action('list-backups', LOCKED, config);
    expect(listed.state.actionResults).to.include({ count: '1', 'backups.0.id': backupId });
    expect(listed.state.actionResults['covered.hidden']).to.equal(undefined);
  });

  it('prune-backups keeps a backup beyond backup-retention that the bucket still retains, with the date it can go', async () => {
    const config = { 'backup-immutability': '2h governance', 'backup-retention': 1 };
    await clockPastSecondOf(backupId);
    const second = await action('backup-state', LOCKED, config, { 'include-volumes': false, 'include-control-plane': false });
    expect(second.state.actionFailure, second.stderr).to.equal(undefined);
    const until = (await client.send(new HeadObjectCommand({ Bucket: LOCKED, Key: `backups/backups/${backupId}/velero-backup.json` }))).ObjectLockRetainUntilDate!;
    const pruned = await action('prune-backups', LOCKED, config);
    expect(pruned.state.actionFailure, pruned.stderr).to.equal(undefined);
    expect(pruned.state.actionResults).to.include({
      deleted: 'none',
      [`retained.${backupId}`]: `Backup ${backupId} is under Object Lock retention (GOVERNANCE) until ${until.toISOString()} and cannot be deleted before then; prune deletes it on its first run after that date.`,
      [`reasons.${backupId}`]: `kept: under Object Lock retention (GOVERNANCE) until ${until.toISOString()}`,
    });
    expect(await listKeys(client, LOCKED, `backups/backups/${backupId}/`)).to.include(`backups/backups/${backupId}/velero-backup.json`);
  });
});
