// `kubeflow-upgrader restore` across CKF releases, as a user runs it: a backup of a 1.8 cluster (with a
// SeldonDeployment and an InferenceService with an Alibi explainer) restored into a fresh 1.9 cluster. --dry-run
// prints what the target refuses, drops and does not serve and exits 1; --skip-unserved restores the rest.
import { expect } from 'chai';
import { S3Client } from '@aws-sdk/client-s3';
import { startS3Server, type S3ServerHandle } from '../support/s3/server.ts';
import { startCluster, type RunningCluster } from '../support/cluster/index.ts';
import { KubeClient } from '../../src/kube/client.ts';
import { ObjectStore } from '../../src/store/objects.ts';
import { runBackup } from '../../src/backup/engine.ts';
import { backupStore } from '../support/backup-store.ts';
import { expectedDrops, stepObjects } from '../restore/release-scenario.ts';
import { runCli } from './run-cli.ts';

const BUCKET = 'cli-releases';

describe('kubeflow-upgrader restore across CKF releases (1.8 → 1.9)', function () {
  this.timeout(180_000);
  let s3: S3ServerHandle;
  let a: RunningCluster;
  let b: RunningCluster;
  let namespace: string;
  let env: Record<string, string>;
  const args = (...more: string[]) => ['restore', 'latest', '--s3-url', `s3://${BUCKET}/kf`, '--path-style', '--kubeconfig', b.kubeconfigPath, '--no-volumes', ...more];

  before(async () => {
    [s3, a, b] = await Promise.all([startS3Server({ buckets: [BUCKET] }), startCluster({ kubeflowRelease: '1.8', profiles: 2, seed: 5 }), startCluster({ kubeflowRelease: '1.9', seed: 5 })]);
    env = { AWS_ACCESS_KEY_ID: s3.accessKeyId, AWS_SECRET_ACCESS_KEY: s3.secretAccessKey, AWS_ENDPOINT_URL: s3.endpoint };
    namespace = a.cluster.list({ group: 'kubeflow.org', resource: 'profiles' })[0]!.metadata.name!;
    for (const object of stepObjects('1.8', '1.9')(namespace)) a.cluster.create(a.cluster.resourceByKind(object.apiVersion.split('/')[0]!, object.kind)!, object);
    const kube = await KubeClient.load({ kubeconfig: a.kubeconfigPath });
    const store = new ObjectStore({
      client: new S3Client({ endpoint: s3.endpoint, region: 'us-east-1', forcePathStyle: true, credentials: { accessKeyId: s3.accessKeyId, secretAccessKey: s3.secretAccessKey } }),
      bucket: BUCKET, prefix: 'kf',
    });
    await runBackup(kube, backupStore(store), {
      kind: 'backup-state', includeVolumes: false, includeControlPlane: false, toolVersion: 'test',
      profileNamespaceSelector: 'app.kubernetes.io/part-of=kubeflow-profile', protectedCrdGroups: ['kubeflow.org'],
    });
    kube.close();
  });
  after(async () => Promise.all([s3?.stop(), a?.stop(), b?.stop()]));

  it('--dry-run prints the refusal, the drop and the unserved kind, writes nothing and exits 1', async () => {
    const before = b.cluster.store.totalObjects();
    const run = await runCli(args('--dry-run'), env);
    expect(run.exitCode, run.stderr).to.equal(1);
    expect(run.stdout).to.include('not served by the target: seldondeployments.machinelearning.seldon.io/v1 (1 object)');
    expect(run.stdout).to.include(`note: ${expectedDrops('1.8', '1.9', namespace, true)[0]}`);
    expect(run.stdout).to.match(/^failed: SeldonDeployment\/.*\/iris: seldondeployments\.machinelearning\.seldon\.io\/v1 is not served by the target$/m);
    expect(b.cluster.store.totalObjects()).to.equal(before);
  });

  it('--skip-unserved restores the rest and names what it left and what was dropped', async () => {
    const run = await runCli(args('--skip-unserved'), env);
    expect(run.exitCode, run.stderr).to.equal(0);
    expect(run.stdout).to.include('not served by the target (left out): seldondeployments.machinelearning.seldon.io/v1 (1 object)');
    expect(run.stdout).to.include(`note: ${expectedDrops('1.8', '1.9', namespace, false)[0]}`);
    const isvc = b.cluster.get({ group: 'serving.kserve.io', resource: 'inferenceservices' }, 'sk', namespace);
    expect(isvc?.spec).not.to.have.nested.property('explainer.alibi');
  });
});
