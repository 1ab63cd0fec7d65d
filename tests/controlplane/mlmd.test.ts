// Finding ML Metadata's SQLite storage through Juju's storage labels, and the Job that copies it.
import { expect } from 'chai';
import { findMlmdStorage, mlmdNotCoveredSentence } from '../../src/controlplane/mlmd.ts';
import { buildCopyJob } from '../../src/controlplane/jobs.ts';
import { LocalJobKube } from './local-kube.ts';
import { storeSettings } from './fixtures.ts';

const TEMPLATE = 'mlmd-mlmd-data-0d1e2f3a';

function mlmdSet(labels: Record<string, string>) {
  return {
    apiVersion: 'apps/v1', kind: 'StatefulSet', metadata: { name: 'mlmd', namespace: 'kubeflow', labels: { 'app.kubernetes.io/managed-by': 'juju' } },
    spec: { replicas: 1, volumeClaimTemplates: [{ metadata: { name: TEMPLATE, labels } }] },
  };
}

describe('ML Metadata storage', function () {
  it('follows the storage.juju.is/name label to unit 0 claim, and says why when it cannot', async function () {
    const kube = new LocalJobKube();
    expect(await findMlmdStorage(kube, 'kubeflow')).to.deep.equal({ found: false, reason: 'there is no mlmd StatefulSet in namespace kubeflow' });
    kube.objects.set('statefulsets/kubeflow/mlmd', mlmdSet({ 'storage.juju.is/name': 'other' }));
    expect(await findMlmdStorage(kube, 'kubeflow')).to.deep.equal({ found: false, reason: 'the mlmd StatefulSet has no Juju storage mlmd-data' });
    kube.objects.set('statefulsets/kubeflow/mlmd', mlmdSet({ 'storage.juju.is/name': 'mlmd-data', 'app.kubernetes.io/managed-by': 'juju' }));
    expect(await findMlmdStorage(kube, 'kubeflow')).to.deep.equal({ found: false, reason: `the mlmd-data claim ${TEMPLATE}-mlmd-0 of mlmd/0 does not exist` });
    kube.objects.set(`persistentvolumeclaims/kubeflow/${TEMPLATE}-mlmd-0`, { apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata: { name: `${TEMPLATE}-mlmd-0`, namespace: 'kubeflow' }, status: { phase: 'Pending' } });
    expect(await findMlmdStorage(kube, 'kubeflow')).to.deep.equal({ found: false, reason: `the mlmd-data claim ${TEMPLATE}-mlmd-0 is not bound` });
    kube.objects.get(`persistentvolumeclaims/kubeflow/${TEMPLATE}-mlmd-0`)!.status = { phase: 'Bound' };
    kube.objects.set('pods/kubeflow/mlmd-0', { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'mlmd-0', namespace: 'kubeflow' }, spec: { nodeName: 'node-2' } });
    expect(await findMlmdStorage(kube, 'kubeflow')).to.deep.equal({ found: true, target: { claim: `${TEMPLATE}-mlmd-0`, file: 'mlmd.db', nodeName: 'node-2' } });
    expect(mlmdNotCoveredSentence('there is no mlmd StatefulSet in namespace kubeflow')).to.equal(
      "control plane not covered: ML Metadata (SQLite mlmd.db on mlmd's mlmd-data storage): there is no mlmd StatefulSet in namespace kubeflow.",
    );
  });

  it('mounts the claim only into the SQLite container, on the node of the Pod using it, with no credential in the spec', function () {
    const store = { ...storeSettings({ endpoint: 'http://127.0.0.1:9', accessKeyId: 'store-access', secretAccessKey: 'store-secret-value' } as never, 'backups') };
    const { job, secret } = buildCopyJob(
      { kind: 'sqlite-backup', sqlite: { claim: `${TEMPLATE}-mlmd-0`, file: 'mlmd.db', nodeName: 'node-2' }, store, key: 'kubeflow/backups/x/control-plane/sqlite/mlmd.db.gz' },
      { namespace: 'kubeflow', backupId: 'x', part: 'mlmd', images: { rclone: 'docker.io/rclone/rclone:1.68.2', mysql: 'docker.io/library/mysql:8.4', sqlite: 'docker.io/library/python:3.12-slim' } },
    );
    type C = { name: string; image: string; env: { name: string; value?: string }[]; volumeMounts?: { name: string; mountPath: string }[] };
    const pod = (job.spec as { template: { spec: { nodeName?: string; initContainers: C[]; containers: C[]; volumes: unknown[] } } }).template.spec;
    expect(pod.nodeName).to.equal('node-2');
    expect(pod.volumes).to.deep.include({ name: 'sqlite-data', persistentVolumeClaim: { claimName: `${TEMPLATE}-mlmd-0` } });
    const [backup, upload] = [pod.initContainers[0]!, pod.containers[0]!];
    expect(backup.image).to.equal('docker.io/library/python:3.12-slim');
    expect(backup.volumeMounts!.map((m) => m.name)).to.deep.equal(['transfer', 'sqlite-data']);
    expect(backup.env.find((e) => e.name === 'SQLITE_FILE')?.value).to.equal('/sqlite-data/mlmd.db');
    expect(backup.env.some((e) => e.name.startsWith('RCLONE_'))).to.equal(false);
    expect(upload.volumeMounts!.map((m) => m.name)).to.deep.equal(['transfer']);
    expect(JSON.stringify(job)).not.to.include('store-secret-value');
    // the Secret's data is base64, as the API stores it
    expect(Object.values(secret.data as Record<string, string>).map((v) => Buffer.from(v, 'base64').toString()).join('\n')).to.include('store-secret-value');
  });
});
