// A profile namespace restored into a fresh cluster whose quota and LimitRange refuse part of it (issue #42, "Done
// when"): the Profile's resourceQuotaSpec asks for less storage than its claims sum to, a LimitRange caps a claim's
// size, and an archived quota allows no node port; all three were set in the source after the objects were made (a
// quota never evicts). The dry run cannot ask the target about a namespace it lacks, so it predicts; the real run is
// answered by the embedded API server (tests/support/cluster/quota.ts, limit-ranges.ts). The oracle is the sentence
// upstream writes (kubernetes/kubernetes staging/src/k8s.io/apiserver/pkg/admission/plugin/resourcequota/controller.go,
// plugin/pkg/admission/limitranger/admission.go), copied here, never the product's rules.
import { expect } from 'chai';
import { S3Client } from '@aws-sdk/client-s3';
import { backupStore } from '../support/backup-store.ts';
import { startCluster, type RunningCluster } from '../support/cluster/index.ts';
import { startS3Server, type S3ServerHandle } from '../support/s3/server.ts';
import { KubeClient } from '../../src/kube/client.ts';
import type { KubeObject } from '../../src/kube/types.ts';
import { ObjectStore } from '../../src/store/objects.ts';
import { runBackup } from '../../src/backup/engine.ts';
import { runRestore, type RestoreOutcome } from '../../src/restore/engine.ts';

const PROFILES = { group: 'kubeflow.org', resource: 'profiles' };
const NAMESPACES = { group: '', resource: 'namespaces' };
const CLAIMS = { group: '', resource: 'persistentvolumeclaims' };
const SERVICES = { group: '', resource: 'services' };
const QUOTAS = { group: '', resource: 'resourcequotas' };
const LIMIT_RANGES = { group: '', resource: 'limitranges' };
const NS = 'quota-team';

/** what upstream answers, word for word */
const REFUSALS: Record<string, string> = {
  'data-3': 'persistentvolumeclaims "data-3" is forbidden: maximum storage usage per PersistentVolumeClaim is 5Gi, but request is 10Gi',
  'data-4': 'persistentvolumeclaims "data-4" is forbidden: exceeded quota: kf-resource-quota, requested: requests.storage=2Gi, used: requests.storage=4Gi, limited: requests.storage=5Gi',
  'web-np': 'services "web-np" is forbidden: exceeded quota: team-quota, requested: services.nodeports=1, used: services.nodeports=0, limited: services.nodeports=0',
};

/** resolves when `probe` holds, looked at on every change the cluster makes */
function when(cluster: RunningCluster, probe: () => boolean): Promise<void> {
  return new Promise((resolve) => {
    const stop = cluster.api.subscribe(() => { if (probe()) { stop(); resolve(); } });
    if (probe()) { stop(); resolve(); }
  });
}

/** the object names of every failure, each with its reason */
const failed = (outcome: RestoreOutcome) => Object.fromEntries(Object.keys(REFUSALS).map((name) => [name, outcome.failures.find((f) => f.includes(`"${name}" is forbidden`))]));

describe('restore into a profile namespace whose quota and LimitRange refuse part of it', function () {
  this.timeout(120_000);
  let source: RunningCluster;
  let target: RunningCluster;
  let s3: S3ServerHandle;
  let kubeSource: KubeClient;
  let kubeTarget: KubeClient;
  let dryRun: RestoreOutcome;
  let real: RestoreOutcome;

  const claim = (name: string, storage: string): KubeObject => ({
    apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata: { name, namespace: NS }, spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage } } },
  });
  const service = (name: string, type: string): KubeObject => ({
    apiVersion: 'v1', kind: 'Service', metadata: { name, namespace: NS }, spec: { type, selector: { app: name }, ports: [{ port: 80 }] },
  });

  before(async () => {
    [source, target, s3] = await Promise.all([startCluster({ seed: 42 }), startCluster({ seed: 42 }), startS3Server({ buckets: ['quota'] })]);
    kubeSource = await KubeClient.load({ kubeconfig: source.kubeconfigPath, concurrency: 4 });
    kubeTarget = await KubeClient.load({ kubeconfig: target.kubeconfigPath, concurrency: 4 });

    const profile = source.api.create(PROFILES, { apiVersion: 'kubeflow.org/v1', kind: 'Profile', metadata: { name: NS }, spec: { owner: { kind: 'User', name: 'team@example.com' } } });
    await when(source, () => source.api.get(NAMESPACES, NS) !== undefined);
    for (const [name, size] of [['data-1', '2Gi'], ['data-2', '2Gi'], ['data-3', '10Gi'], ['data-4', '2Gi']] as const) source.api.create(CLAIMS, claim(name, size));
    source.api.create(SERVICES, service('web', 'ClusterIP'));
    source.api.create(SERVICES, service('web-np', 'NodePort'));
    // limits set afterwards: the source keeps what it held
    source.api.create(LIMIT_RANGES, { apiVersion: 'v1', kind: 'LimitRange', metadata: { name: 'claim-size', namespace: NS }, spec: { limits: [{ type: 'PersistentVolumeClaim', max: { storage: '5Gi' } }] } });
    source.api.create(QUOTAS, { apiVersion: 'v1', kind: 'ResourceQuota', metadata: { name: 'team-quota', namespace: NS }, spec: { hard: { 'services.nodeports': '0' } } });
    source.api.update(PROFILES, { ...source.api.get(PROFILES, NS)!, spec: { ...(profile.spec as object), resourceQuotaSpec: { hard: { 'requests.storage': '5Gi' } } } });
    await when(source, () => ((source.api.get(QUOTAS, 'kf-resource-quota', NS)?.status as { used?: Record<string, string> } | undefined)?.used?.['requests.storage'] === '16Gi'));

    const client = new S3Client({ endpoint: s3.endpoint, region: 'us-east-1', forcePathStyle: true, credentials: { accessKeyId: s3.accessKeyId, secretAccessKey: s3.secretAccessKey } });
    const store = backupStore(new ObjectStore({ client, bucket: 'quota', prefix: 'kf' }));
    const backup = await runBackup(kubeSource, store, {
      kind: 'backup-state', includeVolumes: false, includeControlPlane: false, toolVersion: 'test', namespaces: [NS],
      profileNamespaceSelector: 'app.kubernetes.io/part-of=kubeflow-profile', protectedCrdGroups: ['kubeflow.org'],
    });
    dryRun = await runRestore(kubeTarget, store, { backupId: backup.backupId, dryRun: true, waitTimeoutMs: 20_000 });
    real = await runRestore(kubeTarget, store, { backupId: backup.backupId, waitTimeoutMs: 20_000 });
  });
  after(async () => {
    kubeSource?.close();
    kubeTarget?.close();
    await Promise.all([source?.stop(), target?.stop(), s3?.stop()]);
  });

  it('the dry run predicts each refusal with the server\'s sentence, and nothing else fails', () => {
    const predicted = failed(dryRun);
    for (const [name, sentence] of Object.entries(REFUSALS)) {
      expect(predicted[name], name).to.be.a('string');
      expect(predicted[name]!.endsWith(sentence), predicted[name]).to.equal(true);
      expect(predicted[name]).to.include('predicted, not asked');
    }
    expect(dryRun.totals.failed).to.equal(3);
  });

  it('the dry run says which checks it predicted rather than asked', () => {
    expect(dryRun.predicted).to.have.length(1);
    expect(dryRun.predicted[0]).to.match(new RegExp(`^${NS}: quota and LimitRange checks were predicted, not asked \\(the target does not have this namespace yet\\)`));
    for (const source of ['ResourceQuota kf-resource-quota', 'LimitRange claim-size', 'ResourceQuota team-quota']) expect(dryRun.predicted[0]).to.include(source);
  });

  it('the real run is refused the same objects with the same sentences', () => {
    const refused = failed(real);
    for (const [name, sentence] of Object.entries(REFUSALS)) {
      expect(refused[name], name).to.be.a('string');
      expect(refused[name]!.includes(`403 Forbidden: ${sentence}`), refused[name]).to.equal(true);
    }
    expect(real.totals.failed).to.equal(3);
    expect(real.predicted).to.deep.equal([]);
  });

  it('restores the rest: the claims that fit, the ClusterIP Service, the LimitRange and the archived quota', async () => {
    const names = (ref: typeof CLAIMS) => target.api.list(ref, { namespace: NS }).map((o) => o.metadata.name).sort();
    expect(names(CLAIMS)).to.deep.equal(['data-1', 'data-2']);
    // beside the Services the KFP profile controller makes there
    expect(names(SERVICES)).to.include('web').and.not.include('web-np');
    expect(names(LIMIT_RANGES)).to.deep.equal(['claim-size']);
    expect(names(QUOTAS)).to.deep.equal(['kf-resource-quota', 'team-quota']);
    await when(target, () => ((target.api.get(QUOTAS, 'kf-resource-quota', NS)?.status as { used?: Record<string, string> } | undefined)?.used?.['requests.storage'] === '4Gi'));
  });
});
