// Everything users made, nothing controllers made (issue 19): a profile namespace holding the state a fixed list of
// kinds used to lose goes through backup-state and restore-state, both by the real ./dispatch, from one embedded
// cluster into a fresh one whose KFP profile controller makes its children late, as metacontroller does.
import { expect } from 'chai';
import { ensureCharmBuilt } from '../support/juju/charm-build.ts';
import { runDispatch, type DispatchOutcome } from '../support/juju/harness.ts';
import { s3Relation, track1Data } from '../support/juju/scenarios.ts';
import { emptyState } from '../support/juju/state.ts';
import { startS3Server, type S3ServerHandle } from '../support/s3/server.ts';
import { startCluster, type RunningCluster } from '../support/cluster/index.ts';
import type { ResourceRef } from '../support/cluster/contract.ts';
import { refs } from '../support/cluster/kubeflow/refs.ts';
import { podDefaultAnnotationPrefix } from '../support/cluster/kubeflow/poddefault-webhook.ts';
import type { KubeObject } from '../../src/kube/types.ts';
import { KubeClient } from '../../src/kube/client.ts';
import { collectUserState, compareStates, describeDifferences } from '../../src/restore/compare.ts';

const BUCKET = 'kubeflow-backups';
const NS = 'team';
const OWNER = 'lead@example.com';
/** how late the target's KFP profile controller makes its children */
const KFP_DELAY_MS = 1500;

const r = (group: string, resource: string): ResourceRef => ({ group, resource });
const userObjects: Array<[ResourceRef, KubeObject]> = [
  [r('rbac.authorization.k8s.io', 'roles'), { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'Role', metadata: { name: 'pipeline-runner', namespace: NS }, rules: [{ apiGroups: ['argoproj.io'], resources: ['workflows'], verbs: ['get', 'list', 'create'] }] }],
  [r('rbac.authorization.k8s.io', 'rolebindings'), { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'RoleBinding', metadata: { name: 'ci-runs-pipelines', namespace: NS }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'pipeline-runner' }, subjects: [{ kind: 'ServiceAccount', name: 'ci', namespace: NS }] }],
  [r('', 'resourcequotas'), { apiVersion: 'v1', kind: 'ResourceQuota', metadata: { name: 'gpu-quota', namespace: NS }, spec: { hard: { 'requests.nvidia.com/gpu': '2' } } }],
  [r('', 'limitranges'), { apiVersion: 'v1', kind: 'LimitRange', metadata: { name: 'container-defaults', namespace: NS }, spec: { limits: [{ type: 'Container', default: { memory: '2Gi' }, defaultRequest: { memory: '512Mi' } }] } }],
  [r('networking.k8s.io', 'networkpolicies'), { apiVersion: 'networking.k8s.io/v1', kind: 'NetworkPolicy', metadata: { name: 'deny-egress', namespace: NS }, spec: { podSelector: {}, policyTypes: ['Egress'] } }],
  [r('apps', 'deployments'), { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'model-ui', namespace: NS }, spec: { replicas: 1, selector: { matchLabels: { app: 'model-ui' } }, template: { metadata: { labels: { app: 'model-ui' } }, spec: { containers: [{ name: 'ui', image: 'ghcr.io/team/model-ui:1.4' }] } } } }],
  [r('', 'services'), { apiVersion: 'v1', kind: 'Service', metadata: { name: 'model-ui', namespace: NS }, spec: { selector: { app: 'model-ui' }, ports: [{ port: 80, targetPort: 8080, protocol: 'TCP' }] } }],
  [r('batch', 'cronjobs'), { apiVersion: 'batch/v1', kind: 'CronJob', metadata: { name: 'nightly-export', namespace: NS }, spec: { schedule: '0 3 * * *', jobTemplate: { spec: { template: { spec: { restartPolicy: 'OnFailure', containers: [{ name: 'export', image: 'ghcr.io/team/export:2' }] } } } } } }],
  [r('argoproj.io', 'workflowtemplates'), { apiVersion: 'argoproj.io/v1alpha1', kind: 'WorkflowTemplate', metadata: { name: 'preprocess', namespace: NS }, spec: { entrypoint: 'main', templates: [{ name: 'main', container: { image: 'python:3.12', command: ['python', '-c', 'print(1)'] } }] } }],
  // KFP's docs tell users to make their own; the charm makes one only with default_pipeline_root set
  [refs.configMaps, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'kfp-launcher', namespace: NS }, data: { defaultPipelineRoot: 's3://team-artifacts/pipelines' } }],
  [refs.serviceAccounts, { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'ci', namespace: NS } }],
  [refs.secrets, { apiVersion: 'v1', kind: 'Secret', type: 'kubernetes.io/service-account-token', metadata: { name: 'ci-token', namespace: NS, annotations: { 'kubernetes.io/service-account.name': 'ci' } } }],
  [refs.persistentVolumeClaims, { apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata: { name: 'datasets', namespace: NS }, spec: { storageClassName: 'microk8s-hostpath', accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '5Gi' } } } }],
  [refs.notebooks, {
    apiVersion: 'kubeflow.org/v1', kind: 'Notebook', metadata: { name: 'analysis', namespace: NS, labels: { 'access-ml-pipeline': 'true' } },
    spec: { template: { spec: { containers: [{ name: 'analysis', image: 'kubeflownotebookswg/jupyter-scipy:v1.9.0' }] } } },
  }],
];

async function eventually<T>(probe: () => T | undefined, what: string, timeoutMs = 15_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = probe();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

describe('user state round trip through ./dispatch: discovered kinds, merged ServiceAccounts, token Secrets, late PodDefaults', function () {
  this.timeout(180_000);
  let charmDir: string;
  let s3: S3ServerHandle;
  let source: RunningCluster;
  let target: RunningCluster;
  /** a target whose KFP profile controller never gets round to the namespace within the restore's wait */
  let stalled: RunningCluster;
  let backupId: string;
  let restored: DispatchOutcome;
  let planUnmapped: DispatchOutcome;
  let planMapped: DispatchOutcome;
  let restoreStarted: number;

  const dispatch = (cluster: RunningCluster, action: string, params: Record<string, unknown>, waitSeconds = 30): Promise<DispatchOutcome> =>
    runDispatch(charmDir, emptyState({ config: { 'restore-wait-timeout': waitSeconds }, relations: [s3Relation(track1Data(s3, BUCKET))], actionParams: params }), {
      event: `actions/${action}`, env: { KUBECONFIG: cluster.kubeconfigPath },
    });

  before(async () => {
    [charmDir, s3, source, target, stalled] = await Promise.all([
      ensureCharmBuilt(), startS3Server({ buckets: [BUCKET] }), startCluster({ seed: 19 }),
      startCluster({ seed: 20, kubeflow: { kfpProfileController: { delayMs: KFP_DELAY_MS } } }),
      startCluster({ seed: 21, kubeflow: { kfpProfileController: { delayMs: 600_000 } } }),
    ]);
    const api = source.api;
    api.create(refs.profiles, { apiVersion: 'kubeflow.org/v1', kind: 'Profile', metadata: { name: NS }, spec: { owner: { kind: 'User', name: OWNER } } });
    await eventually(() => api.get(refs.serviceAccounts, 'default-editor', NS), 'the profile controller');
    await eventually(() => api.get(refs.podDefaults, 'access-ml-pipeline', NS), 'the KFP profile controller');
    for (const [ref, object] of userObjects) api.create(ref, object);
    api.create(r('kubeflow.org', 'scheduledworkflows'), {
      apiVersion: 'kubeflow.org/v1beta1', kind: 'ScheduledWorkflow', metadata: { name: 'nightly-train', namespace: NS },
      spec: { enabled: true, maxConcurrency: 1, trigger: { cronSchedule: { cron: '0 0 2 * * *' } }, workflow: { parameters: [] } },
    });
    // a user adds a pull secret to the ServiceAccount the profile controller made
    const editor = api.get(refs.serviceAccounts, 'default-editor', NS)!;
    api.update(refs.serviceAccounts, { ...editor, imagePullSecrets: [{ name: 'team-registry' }] });
    await eventually(() => (api.get(refs.secrets, 'ci-token', NS)?.data as Record<string, string> | undefined)?.token, 'the token controller');
    await eventually(() => api.get(refs.pods, 'analysis-0', NS), 'the notebook pod');

    const backup = await dispatch(source, 'backup-state', { 'include-volumes': false, 'include-control-plane': false });
    expect(backup.state.actionFailure, backup.stderr).to.equal(undefined);
    backupId = backup.state.actionResults['backup-id']!;
    // the target's storage is named differently: blue/green across storage
    target.api.create(r('storage.k8s.io', 'storageclasses'), { apiVersion: 'storage.k8s.io/v1', kind: 'StorageClass', metadata: { name: 'ceph-rbd' }, provisioner: 'rbd.csi.ceph.com' });
    planUnmapped = await dispatch(target, 'restore-state', { 'backup-id': backupId, 'dry-run': true });
    planMapped = await dispatch(target, 'restore-state', { 'backup-id': backupId, 'dry-run': true, 'storage-class-map': 'microk8s-hostpath=ceph-rbd' });
    restoreStarted = Date.now();
    restored = await dispatch(target, 'restore-state', { 'backup-id': backupId, 'storage-class-map': 'microk8s-hostpath=ceph-rbd' });
  });
  after(async () => Promise.all([s3?.stop(), source?.stop(), target?.stop(), stalled?.stop()]));

  it('restores every user object, of kinds nobody listed, and the target holds the same user state', async () => {
    expect(restored.state.actionFailure, restored.stderr).to.equal(undefined);
    expect(restored.state.actionResults).to.include({ failed: '0' });
    for (const [ref, object] of userObjects) {
      expect(target.api.get(ref, object.metadata.name!, NS), `${object.kind}/${object.metadata.name}`).to.not.equal(undefined);
    }
    const [a, b] = await Promise.all([KubeClient.load({ kubeconfig: source.kubeconfigPath }), KubeClient.load({ kubeconfig: target.kubeconfigPath })]);
    try {
      // a token is the target's own, and the PVC asks for the target's storage class: both compared below
      // (a recurring run is never restored: listed below)
      const withoutTokens = (objects: KubeObject[]) => objects.filter((o) => o.type !== 'kubernetes.io/service-account-token' && o.kind !== 'PersistentVolumeClaim' && o.kind !== 'ScheduledWorkflow');
      const differences = compareStates(withoutTokens(await collectUserState(a)), withoutTokens(await collectUserState(b)));
      expect(describeDifferences(differences)).to.deep.equal([]);
    } finally {
      a.close();
      b.close();
    }
  });

  it('warns per PVC whose storage class the target lacks, shows the mapping on dry-run, and restores the PVC with the mapped class', () => {
    const results = (o: DispatchOutcome) => o.state.actionResults;
    const warnings = (o: DispatchOutcome) => Object.entries(results(o)).filter(([k]) => k.startsWith('warnings.')).map(([, v]) => v);
    expect(planUnmapped.state.actionFailure, planUnmapped.stderr).to.equal(undefined);
    expect(warnings(planUnmapped)).to.include(`PVC ${NS}/datasets asks for storage class microk8s-hostpath, which this cluster does not have and storage-class-map does not map: it will stay Pending (map it, e.g. storage-class-map=microk8s-hostpath=<a class of this cluster>).`);
    expect(results(planMapped)['storage-classes.0']).to.equal(`${NS}/datasets: microk8s-hostpath → ceph-rbd`);
    expect(warnings(planMapped).join(' ')).to.not.include('datasets');
    expect(results(restored)['storage-classes.0']).to.equal(`${NS}/datasets: microk8s-hostpath → ceph-rbd`);
    expect((target.api.get(refs.persistentVolumeClaims, 'datasets', NS)!.spec as { storageClassName?: string }).storageClassName).to.equal('ceph-rbd');
  });

  it('writes no KFP recurring run, and lists each one to recreate through KFP', () => {
    expect(restored.state.actionResults['recurring-runs.0']).to.equal(`${NS}/nightly-train`);
    expect(target.api.get(r('kubeflow.org', 'scheduledworkflows'), 'nightly-train', NS)).to.equal(undefined);
  });

  it('refuses a storage-class-map it cannot read in one sentence, and writes nothing', async () => {
    const before = target.api.list(refs.persistentVolumeClaims).length;
    const bad = await dispatch(target, 'restore-state', { 'backup-id': backupId, 'storage-class-map': 'microk8s-hostpath' });
    expect(bad.exitCode).to.not.equal(0);
    expect(bad.state.actionFailure).to.equal('storage-class-map: "microk8s-hostpath" is not old=new with two storage class names (write e.g. microk8s-hostpath=ceph-rbd,standard=fast). Nothing was restored.');
    expect(target.api.list(refs.persistentVolumeClaims).length).to.equal(before);
  });

  it('merges the pull secret into the default-editor the profile controller made, and never replaces it', () => {
    const editor = target.api.get(refs.serviceAccounts, 'default-editor', NS)!;
    expect(editor.imagePullSecrets).to.deep.equal([{ name: 'team-registry' }]);
    const profile = target.api.get(refs.profiles, NS)!;
    expect(editor.metadata.ownerReferences).to.deep.include({ apiVersion: 'kubeflow.org/v1', kind: 'Profile', name: NS, uid: profile.metadata.uid, controller: true, blockOwnerDeletion: true });
    // the unchanged default-viewer was not in the backup at all
    const managers = (o: KubeObject) => ((o.metadata.managedFields ?? []) as Array<{ manager?: string }>).map((f) => f.manager);
    expect(managers(target.api.get(refs.serviceAccounts, 'default-viewer', NS)!)).to.not.include('kubeflow-upgrader');
  });

  it('restores the token Secret without the source token, and the target\'s token controller fills it', async () => {
    const sourceToken = (source.api.get(refs.secrets, 'ci-token', NS)!.data as Record<string, string>).token;
    const secret = await eventually(() => {
      const s = target.api.get(refs.secrets, 'ci-token', NS);
      return (s?.data as Record<string, string> | undefined)?.token ? s : undefined;
    }, 'the target token controller');
    expect((secret.data as Record<string, string>).token).to.not.equal(sourceToken);
    expect(secret.metadata.annotations?.['kubernetes.io/service-account.uid']).to.equal(target.api.get(refs.serviceAccounts, 'ci', NS)!.metadata.uid);
  });

  it('writes nothing a controller made', () => {
    const written: string[] = [];
    for (const ref of [refs.serviceAccounts, refs.secrets, refs.configMaps, refs.services, refs.deployments, refs.roleBindings, refs.podDefaults, refs.authorizationPolicies, refs.statefulSets, r('', 'resourcequotas')]) {
      for (const object of target.api.list(ref, { namespace: NS })) {
        const controlled = object.metadata.ownerReferences?.some((o) => o.controller) || ['kube-root-ca.crt', 'istio-ca-root-cert'].includes(object.metadata.name!);
        const ours = ((object.metadata.managedFields ?? []) as Array<{ manager?: string; operation?: string }>).filter((f) => f.manager === 'kubeflow-upgrader');
        // the one write into a controller's object: the merge into default-editor (an Update of two fields, not a create)
        if (controlled && ours.length && !(object.metadata.name === 'default-editor' && ours.every((f) => f.operation === 'Update'))) written.push(`${object.kind}/${object.metadata.name}`);
      }
    }
    expect(written).to.deep.equal([]);
  });

  it('creates the Notebook only once the late access-ml-pipeline PodDefault exists, so its pod gets the injection', async () => {
    const podDefault = target.api.get(refs.podDefaults, 'access-ml-pipeline', NS)!;
    const notebook = target.api.get(refs.notebooks, 'analysis', NS)!;
    expect(Date.parse(podDefault.metadata.creationTimestamp!)).to.be.at.least(restoreStarted);
    expect(Date.parse(notebook.metadata.creationTimestamp!)).to.be.at.least(Date.parse(podDefault.metadata.creationTimestamp!));
    const pod = await eventually(() => target.api.get(refs.pods, 'analysis-0', NS), 'the restored notebook pod');
    expect(pod.metadata.annotations).to.have.property(`${podDefaultAnnotationPrefix}access-ml-pipeline`);
  });

  it('a rerun into the restored target writes nothing: the merged ServiceAccount and the token Secret count as unchanged', async () => {
    const rerun = await dispatch(target, 'restore-state', { 'backup-id': backupId, 'storage-class-map': 'microk8s-hostpath=ceph-rbd' });
    expect(rerun.state.actionFailure, rerun.stderr).to.equal(undefined);
    expect(rerun.state.actionResults).to.include({ created: '0', updated: '0', failed: '0' });
  });

  it('when a late PodDefault never comes, warns naming it, restores the rest and does not fail', async () => {
    const outcome = await dispatch(stalled, 'restore-state', { 'backup-id': backupId, 'storage-class-map': 'microk8s-hostpath=ceph-rbd' }, 2);
    expect(outcome.state.actionFailure, outcome.stderr).to.equal(undefined);
    expect(outcome.state.actionResults).to.include({ failed: '0' });
    const warnings = Object.entries(outcome.state.actionResults).filter(([k]) => k.startsWith('warnings.')).map(([, v]) => v);
    expect(warnings.find((w) => w.includes('PodDefault'))).to.match(new RegExp(`^1 PodDefault\\(s\\) that controllers made on the source did not appear within restore-wait-timeout \\(2 s\\): ${NS}/access-ml-pipeline\\. `));
    expect(stalled.api.get(refs.notebooks, 'analysis', NS)).to.not.equal(undefined);
  });

  it('a Notebook made before its PodDefault would have started without the injection: the webhook changes Pods only at creation', async () => {
    const api = target.api;
    api.create(refs.namespaces, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'early', labels: { 'pipelines.kubeflow.org/enabled': 'true' } } });
    api.create(refs.notebooks, { ...userObjects.find(([, o]) => o.kind === 'Notebook')![1], metadata: { name: 'analysis', namespace: 'early', labels: { 'access-ml-pipeline': 'true' } } });
    const pod = await eventually(() => api.get(refs.pods, 'analysis-0', 'early'), 'the early pod');
    await eventually(() => api.get(refs.podDefaults, 'access-ml-pipeline', 'early'), 'the late PodDefault', 10_000);
    expect(pod.metadata.annotations?.[`${podDefaultAnnotationPrefix}access-ml-pipeline`]).to.equal(undefined);
    expect(api.get(refs.pods, 'analysis-0', 'early')!.metadata.annotations?.[`${podDefaultAnnotationPrefix}access-ml-pipeline`]).to.equal(undefined);
  });
});
