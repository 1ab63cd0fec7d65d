// Movers that cannot start, at the engine: each failure names the PVC and why its Pod is not running after the start
// timeout — the scheduler's Unschedulable message, a ResourceQuota refusal from the Job's FailedCreate event, or no Pod
// at all — and the movers still running are stopped, leaving no Job and no credentials Secret.
import { expect } from 'chai';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { KubeClient } from '../../src/kube/client.ts';
import { newBackupId } from '../../src/store/layout.ts';
import { volumeKubeFromClient } from '../../src/volumes/kube-client-port.ts';
import { JOBS, SECRETS, type VolumeKube } from '../../src/volumes/kube-port.ts';
import { moverSelector } from '../../src/volumes/labels.ts';
import { backupVolumes, restoreVolumes, VolumeMoveError } from '../../src/volumes/mover.ts';
import { RCLONE_IMAGE as DEFAULT_MOVER_IMAGE } from '../../src/volumes/engine.ts';
import { startCluster } from '../support/cluster/index.ts';
import { quotaSynced } from '../support/cluster/quota-controller.ts';
import { startS3Server, type S3ServerHandle } from '../support/s3/server.ts';
import { FaultProxy } from '../support/s3/fault-proxy.ts';
import { createBoundPvc, pvc, PVC_REF, s3For, startVolumeCluster, volumeFailure, type VolumeCluster } from './helpers.ts';
import { installKubeflowWebhooks } from '../support/cluster/kubeflow/webhook-operators.ts';


const POD = { group: '', resource: 'pods' };
const QUOTA = { group: '', resource: 'resourcequotas' };
const NAMESPACE = { group: '', resource: 'namespaces' };

describe('volumes: movers that do not start', function () {
  let s3: S3ServerHandle;
  let vc: VolumeCluster;

  before(async function () {
    s3 = await startS3Server({ buckets: ['kf-backups'] });
    vc = await startVolumeCluster({ bindingMode: 'Immediate' });
    for (const name of ['pinned', 'free', 'quota']) {
      const folder = await createBoundPvc(vc, 'alice', name);
      writeFileSync(join(folder, 'a.txt'), name);
    }
  });
  after(async function () {
    await vc?.stop();
    await s3?.stop();
  });

  const leftovers = async (backupId: string) => [...await vc.kube.list(JOBS, 'alice', moverSelector(backupId)), ...await vc.kube.list(SECRETS, 'alice', moverSelector(backupId))];

  it('names the scheduler\'s reason, and stops the other mover, which was still copying', async function () {
    // A notebook holds the ReadWriteOnce volume on a node that has left the cluster: its mover can be placed nowhere.
    const notebook = vc.cluster.api.create(POD, {
      apiVersion: 'v1', kind: 'Pod', metadata: { name: 'nb-0', namespace: 'alice' },
      spec: { nodeName: 'node-gone', containers: [{ name: 'nb', image: 'kubeflownotebookswg/jupyter-scipy:v1.9.0' }], volumes: [{ name: 'ws', persistentVolumeClaim: { claimName: 'pinned' } }] },
    });
    vc.cluster.api.updateStatus(POD, { ...notebook, status: { phase: 'Running' } });
    // The other mover's upload is held, so it is mid-copy when the first one gives up.
    const proxy = await FaultProxy.start({ target: s3.endpoint });
    const held = proxy.when((r) => r.method === 'PUT' && r.url.includes('/free/'), { hold: true });
    try {
      const backupId = newBackupId();
      const settings = { ...s3For(s3, 'kf-backups'), endpoint: proxy.endpoint };
      const run = backupVolumes(vc.kube, { backupId, s3: settings, startTimeoutSeconds: 2, pvcs: [{ namespace: 'alice', name: 'free' }, { namespace: 'alice', name: 'pinned' }] });
      await held;
      const error = await volumeFailure(run);
      expect(error.message).to.match(/^The volume backup failed for PVC alice\/pinned \(its mover Job kfu-backup-[0-9a-f]{16} did not start within 2 seconds: the scheduler cannot place its Pod \(Unschedulable: 0\/2 nodes are available: node\(s\) didn't match Pod's node affinity\/selector\)\); 1 other mover was stopped\.$/);
      expect(await leftovers(backupId)).to.deep.equal([]);
    } finally {
      vc.cluster.api.delete(POD, 'nb-0', 'alice');
      await proxy.stop();
      await vc.kubelet.idle();
    }
  });

  it('names the quota and what the Pod asks beyond it, from the Job\'s FailedCreate event', async function () {
    vc.cluster.api.create(QUOTA, { apiVersion: 'v1', kind: 'ResourceQuota', metadata: { name: 'small', namespace: 'alice' }, spec: { hard: { 'limits.cpu': '500m', 'limits.memory': '1Gi' } } });
    await quotaSynced(vc.cluster.api, 'alice', 'small');
    try {
      const backupId = newBackupId();
      const error = await volumeFailure(backupVolumes(vc.kube, { backupId, s3: s3For(s3, 'kf-backups'), startTimeoutSeconds: 2, pvcs: [{ namespace: 'alice', name: 'quota' }] }));
      expect(error.message).to.include('ResourceQuota small refuses its Pod (requested: limits.cpu=1, used: limits.cpu=0, limited: limits.cpu=500m); lower volume-mover-resources or raise the quota');
      expect(await leftovers(backupId)).to.deep.equal([]);
      const [fits] = await backupVolumes(vc.kube, { backupId: newBackupId(), s3: s3For(s3, 'kf-backups'), resources: 'cpu=500m,memory=512Mi', pvcs: [{ namespace: 'alice', name: 'quota' }] });
      expect(fits).to.deep.include({ files: 1, checksumVerified: true });
    } finally {
      vc.cluster.api.delete(QUOTA, 'small', 'alice');
    }
  });

  it('says no Pod was created when nothing runs the Job', async function () {
    // A cluster without a Job controller: the Job is accepted and nothing more happens.
    const bare = await startCluster({ kubeflowCrds: false, controllers: false });
    const client = await KubeClient.load({ kubeconfig: bare.kubeconfigPath });
    try {
      bare.api.create({ group: '', resource: 'namespaces' }, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'alice' } });
      bare.api.create(PVC_REF, pvc('alice', 'ws'));
      const error = await volumeFailure(restoreVolumes(volumeKubeFromClient(client), { backupId: newBackupId(), s3: s3For(s3, 'kf-backups'), startTimeoutSeconds: 1, pvcs: [{ namespace: 'alice', name: 'ws' }] }));
      expect(error.message).to.match(/^The volume restore failed for PVC alice\/ws \(its mover Job kfu-restore-[0-9a-f]{16} did not start within 1 second: no Pod was created for it\)\.$/);
      expect(bare.api.list({ group: 'batch', resource: 'jobs' }, { namespace: 'alice' })).to.deep.equal([]);
    } finally {
      client.close();
      await bare.stop();
    }
  });

  it('a restic restore whose gateway cannot start: the movers, started beside it, are stopped with the gateway\'s reason', async function () {
    const airGapped = await startVolumeCluster({ registries: ['registry.internal:5000'] });
    try {
      airGapped.cluster.api.create(PVC_REF, pvc('alice', 'ws'));
      const backupId = newBackupId();
      // the movers' image from the cluster's mirror; the restore gateway's pinned node image from Docker Hub, unreachable
      const error = await volumeFailure(restoreVolumes(airGapped.kube, {
        backupId, s3: s3For(s3, 'kf-backups'), startTimeoutSeconds: 3, engine: 'restic', image: 'registry.internal:5000/restic/restic:0.14.0',
        pvcs: [{ namespace: 'alice', name: 'ws' }],
        restic: { password: () => 'unused', snapshots: new Map([['alice/ws', 'a'.repeat(64)]]), gateway: { namespace: 'kubeflow', image: 'registry.internal:5000/rclone/rclone:1.68.2', imageSetting: 'control-plane-rclone-image' } },
      }));
      expect(error.message).to.match(/^The volume restore failed for PVC alice\/ws \(the restore gateway in namespace kubeflow, through which the movers reach the bucket, could not be started \(.*its image docker\.io\/library\/node:24[^ ]* could not be pulled \(ErrImagePull: .*no such host\)/);
      const left = [...await airGapped.kube.list(JOBS, 'alice', moverSelector(backupId)), ...await airGapped.kube.list(SECRETS, 'alice', moverSelector(backupId)), ...await airGapped.kube.list(JOBS, 'kubeflow', moverSelector(backupId))];
      expect(left.map((o) => o.metadata.name)).to.deep.equal([]);
    } finally {
      await airGapped.stop();
    }
  });

  it('a restic restore gateway image named by a setting is the one pulled, and its failure names that setting', async function () {
    const airGapped = await startVolumeCluster({ registries: ['registry.internal:5000'] });
    try {
      airGapped.cluster.api.create(PVC_REF, pvc('alice', 'ws'));
      const error = await volumeFailure(restoreVolumes(airGapped.kube, {
        backupId: newBackupId(), s3: s3For(s3, 'kf-backups'), startTimeoutSeconds: 3, engine: 'restic', image: 'registry.internal:5000/restic/restic:0.14.0',
        pvcs: [{ namespace: 'alice', name: 'ws' }],
        restic: {
          password: () => 'unused', snapshots: new Map([['alice/ws', 'a'.repeat(64)]]),
          gateway: {
            namespace: 'kubeflow', image: 'registry.internal:5000/rclone/rclone:1.68.2', imageSetting: 'control-plane-rclone-image',
            restoreImage: 'registry.elsewhere:5000/library/node:24.9.0-alpine3.22', restoreImageSetting: 'restore-gateway-image',
          },
        },
      }));
      expect(error.message).to.match(/the restore gateway in namespace kubeflow, through which the movers reach the bucket, could not be started \(.*its image registry\.elsewhere:5000\/library\/node:24\.9\.0-alpine3\.22 could not be pulled \(ErrImagePull: .*\); .*restore-gateway-image/);
    } finally {
      await airGapped.stop();
    }
  });

  it('in an air-gapped cluster, names the default image and that its registry cannot be reached', async function () {
    const airGapped = await startVolumeCluster({ registries: ['registry.internal:5000'] });
    try {
      await createBoundPvc(airGapped, 'alice', 'ws');
      const error = await volumeFailure(backupVolumes(airGapped.kube, { backupId: newBackupId(), s3: s3For(s3, 'kf-backups'), startTimeoutSeconds: 3, pvcs: [{ namespace: 'alice', name: 'ws' }] }));
      expect(error.message).to.include(`did not start within 3 seconds: its image ${DEFAULT_MOVER_IMAGE} could not be pulled (ErrImagePull: failed to do request: Head "https://registry-1.docker.io/v2/rclone/rclone/manifests/1.68.2": dial tcp: lookup registry-1.docker.io: no such host); make the image reachable from the nodes or set volume-mover-image to a copy in a registry they can reach`);
      // the same copy from the cluster's own registry mirror starts
      const [copied] = await backupVolumes(airGapped.kube, { backupId: newBackupId(), s3: s3For(s3, 'kf-backups'), image: 'registry.internal:5000/rclone/rclone:1.68.2', pvcs: [{ namespace: 'alice', name: 'ws' }] });
      expect(copied).to.deep.include({ checksumVerified: true });
    } finally {
      await airGapped.stop();
    }
  });

  it('in a fresh cluster whose katib-controller is not Ready, names Katib\'s Pod webhook; once it is, the Job controller\'s next try starts the mover', async function () {
    // Katib's Pod mutator matches every Pod of a namespace labelled for metrics collection, i.e. every profile namespace
    // (canonical/katib-operators webhooks.yaml.j2); its operator's Pod is not Ready yet
    const webhooks = installKubeflowWebhooks(vc.cluster.cluster, { ready: false });
    const label = (value: string | null) => vc.cluster.api.mergePatch(NAMESPACE, 'alice', undefined, { metadata: { labels: { 'katib.kubeflow.org/metrics-collector-injection': value } } });
    label('enabled');
    try {
      const backupId = newBackupId();
      const error = await volumeFailure(backupVolumes(vc.kube, { backupId, s3: s3For(s3, 'kf-backups'), startTimeoutSeconds: 2, pvcs: [{ namespace: 'alice', name: 'free' }] }));
      expect(error.message, error.message).to.match(/did not start within 2 seconds: admission webhook "mutator\.pod\.katib\.kubeflow\.org" cannot be called, so no Pod can be made in this namespace \(Post "https:\/\/katib-controller\.kubeflow\.svc:443\/mutate-pod\?timeout=10s": dial tcp [0-9.]+:443: connect: connection refused\); its operator is likely still starting: once its Pod is Ready, run this again\)\.$/);
      expect(await leftovers(backupId)).to.deep.equal([]);
      // the sign: the Job controller's FailedCreate event for the next mover; then katib-controller becomes Ready
      const unsubscribe = vc.cluster.api.subscribe((event) => {
        if (event.type === 'ADDED' && event.ref.resource === 'events' && (event.object as { reason?: string }).reason === 'FailedCreate') webhooks.setReady('katib-controller', true);
      });
      try {
        const [copied] = await backupVolumes(vc.kube, { backupId: newBackupId(), s3: s3For(s3, 'kf-backups'), pvcs: [{ namespace: 'alice', name: 'free' }] });
        expect(copied).to.deep.include({ checksumVerified: true });
      } finally {
        unsubscribe();
      }
    } finally {
      label(null);
      webhooks.stop();
      for (const resource of ['mutatingwebhookconfigurations', 'validatingwebhookconfigurations']) {
        for (const c of vc.cluster.api.list({ group: 'admissionregistration.k8s.io', resource })) vc.cluster.api.delete({ group: 'admissionregistration.k8s.io', resource }, c.metadata.name!);
      }
      await vc.kubelet.idle();
    }
  });

  it('names the container\'s waiting reason when its Pod is placed but cannot start (a Secret it needs is missing)', async function () {
    // The credentials Secret never arrives: the kubelet keeps the container waiting with CreateContainerConfigError.
    const noSecrets: VolumeKube = { ...vc.kube, create: async (r, object) => (r.resource === 'secrets' ? object : vc.kube.create(r, object)) };
    const backupId = newBackupId();
    const error = await volumeFailure(backupVolumes(noSecrets, { backupId, s3: s3For(s3, 'kf-backups'), startTimeoutSeconds: 1, pvcs: [{ namespace: 'alice', name: 'free' }] }));
    expect(error.message, error.message).to.match(/did not start within 1 second: its Pod kfu-backup-[0-9a-f]{16}-[a-z0-9]+ is still Pending \(CreateContainerConfigError: secret "kfu-backup-creds-[0-9a-f]{12}" not found\)\)\.$/);
    expect(await leftovers(backupId)).to.deep.equal([]);
    await vc.kubelet.idle();
  });
});
