// A profile's user tries to feed a restore a result (src/volumes/adopt.ts, mover.ts): acting through the real client
// over TLS with the rights of Kubernetes' edit role, which Kubeflow's kubeflow-edit aggregates for a contributor (create
// and delete Jobs in their namespace; canonical/kubeflow-roles-operator src/manifests/kubeflow-roles.yaml),
// they delete the mover Job while it copies and put their own Job under its name, one that reports a finished copy.
// The run reads results only from the Job it made, pinned by UID: it says the Job went, and the PVC keeps its
// fill mark for the rerun. The names themselves are keyed with the bucket's secret key, so they cannot be guessed
// beforehand.
import { expect } from 'chai';
import { BatchV1Api, KubeConfig } from '@kubernetes/client-node';
import type { KubeObject } from '../../src/kube/types.ts';
import { newBackupId } from '../../src/store/layout.ts';
import { moverJobName, moverNameKey } from '../../src/volumes/labels.ts';
import { backupVolumes, restoreVolumes } from '../../src/volumes/mover.ts';
import { hasFillMark, withFillMark } from '../../src/volumes/fill-mark.ts';
import { startS3Server, type S3ServerHandle } from '../support/s3/server.ts';
import { FaultProxy } from '../support/s3/fault-proxy.ts';
import { createBoundPvc, pvc, PVC_REF, s3For, startVolumeCluster, writeWorkspace, type VolumeCluster } from './helpers.ts';

const USER = 'carol@example.com';

describe('volumes: a mover Job replaced by a profile user is never read', function () {
  this.timeout(180_000);
  let s3: S3ServerHandle;
  let source: VolumeCluster;
  let target: VolumeCluster;

  before(async () => {
    s3 = await startS3Server({ buckets: ['kf-backups'] });
    [source, target] = await Promise.all([startVolumeCluster(), startVolumeCluster()]);
  });
  after(async () => {
    await source?.stop();
    await target?.stop();
    await s3?.stop();
  });

  it('names are keyed: without the bucket\'s secret key the name cannot be made', () => {
    const a = moverJobName('restore', 'kf-20261207-120000-abcdef', 'alice', 'ws', moverNameKey('secret-one'));
    expect(moverJobName('restore', 'kf-20261207-120000-abcdef', 'alice', 'ws', moverNameKey('secret-one'))).to.equal(a);
    expect(moverJobName('restore', 'kf-20261207-120000-abcdef', 'alice', 'ws', moverNameKey('secret-two'))).to.not.equal(a);
  });

  it('reports the Job replaced, reads nothing of the user\'s Job, and leaves the fill mark', async () => {
    const folder = await createBoundPvc(source, 'alice', 'ws');
    writeWorkspace(folder, { files: 20, bigFileBytes: 0 });
    const backupId = newBackupId();
    await backupVolumes(source.kube, { backupId, s3: s3For(s3, 'kf-backups'), pvcs: [{ namespace: 'alice', name: 'ws' }] });

    // the user: bound to Kubernetes' edit in alice's namespace, which kubeflow-edit aggregates (this cluster runs no
    // Kubeflow charms, so the binding names edit itself)
    target.cluster.api.create({ group: 'rbac.authorization.k8s.io', resource: 'rolebindings' }, {
      apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'RoleBinding', metadata: { name: 'user-carol-example-com-clusterrole-edit', namespace: 'alice' },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'edit' },
      subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: USER }],
    });
    const config = new KubeConfig();
    config.loadFromString(target.cluster.kubeconfigFor({ username: USER }, 'alice'));
    const asUser = config.makeApiClient(BatchV1Api);

    target.cluster.api.create(PVC_REF, withFillMark(pvc('alice', 'ws'), backupId));
    const created = new Promise<KubeObject>((resolve) => {
      target.cluster.api.subscribe((e) => { if (e.ref.resource === 'jobs' && e.type === 'ADDED' && e.object.metadata.namespace === 'alice') resolve(e.object); });
    });
    // the copy is slowed so that it is still running when the user acts
    const download = (r: { method: string; url: string }) => r.method === 'GET' && r.url.includes('/volumes/alice/ws/') && !r.url.includes('list-type');
    const proxy = await FaultProxy.start({ target: s3.endpoint, latencyMs: 1500, only: download });
    proxy.setRate(1, 1, ['latency']);
    try {
      const settings = { ...s3For(s3, 'kf-backups'), endpoint: proxy.endpoint };
      const restoring = restoreVolumes(target.kube, { backupId, s3: settings, pvcs: [{ namespace: 'alice', name: 'ws' }] });
      restoring.catch(() => undefined);
      const ours = await created;
      const name = ours.metadata.name!;
      await asUser.deleteNamespacedJob({ name, namespace: 'alice', propagationPolicy: 'Background' });
      await target.kube.waitFor({ group: 'batch', version: 'v1', resource: 'jobs', kind: 'Job' }, 'alice', name, (o) => o === undefined, { timeoutMs: 60_000 });
      // the user's Job, under the mover's name and labels, reporting a copy that never happened
      const forged = '{"files":20,"bytes":1,"checksumVerified":true}';
      await asUser.createNamespacedJob({
        namespace: 'alice',
        body: {
          apiVersion: 'batch/v1', kind: 'Job', metadata: { name, labels: ours.metadata.labels },
          spec: { backoffLimit: 0, template: { metadata: { labels: ours.metadata.labels }, spec: { restartPolicy: 'Never', containers: [{ name: 'mover', image: 'docker.io/rclone/rclone:1.68.2', command: ['sh', '-c', `printf '${forged}' > /dev/termination-log`] }] } } },
        },
      });
      let failure = '';
      await restoring.catch((error: Error) => { failure = error.message; });
      // the watch sees the deletion first (else the UID: replaced by another Job of the same name); either way nothing
      // of the user's Job is read
      expect(failure, failure).to.match(new RegExp(`its mover Job ${name} was (deleted before it finished|replaced by another Job of the same name before it finished, so its result was not read)`));
      expect(hasFillMark(target.cluster.api.get(PVC_REF, 'ws', 'alice')!), 'the PVC keeps its mark for the rerun').to.equal(true);
    } finally {
      await proxy.stop();
    }
  });
});
