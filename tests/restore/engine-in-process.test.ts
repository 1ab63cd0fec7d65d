// The restore engine, driven only through runRestore, on the embedded cluster's in-process API (no HTTP, TLS or child
// process: tests/support/cluster/in-process-kubeflow.ts) and the in-memory backup store: the order of the writes,
// late PodDefaults, the conflict policies, dry runs and reruns, in seconds. engine.process.test.ts keeps the same
// engine over HTTPS and S3 with faults.
//
// The expectations are stated here from upstream facts, not read from the product's rules (src/kubeflow):
// - a Profile's namespace is made by the profile controller (kubeflow/kubeflow v1.10.0 components/profile-controller/
//   controllers/profile_controller.go), so the Profile is written before anything in its namespace;
// - Velero restores by priority, identities, credentials and storage before what runs (vmware-tanzu/velero
//   pkg/cmd/server/server.go defaultRestorePriorities: serviceaccounts, secrets, configmaps, limitranges,
//   persistentvolumeclaims before pods and their controllers), because admission reads them only when a Pod is made:
//   LimitRanger's defaults (kubernetes/kubernetes plugin/pkg/admission/limitranger/admission.go) and the
//   ServiceAccount admission plugin (plugin/pkg/admission/serviceaccount/admission.go);
// - a PodDefault changes only Pods created after it: the admission webhook mutates Pods on CREATE (kubeflow/kubeflow
//   components/admission-webhook/main.go, mutatePods), so every PodDefault, the late ones the KFP profile controller
//   makes on metacontroller's sync included (canonical/kfp-operators track/2.5 charms/kfp-profile-controller/files/
//   upstream/sync.py: access-ml-pipeline), exists before the Notebook;
// - an object that exists and differs is left alone unless the user asks for the update (Velero's
//   --existing-resource-policy none/update, pkg/restore/restore.go), and a dry run writes nothing (the API server's
//   dryRun=All stores nothing: staging/src/k8s.io/apiserver/pkg/endpoints/handlers/create.go).
import { expect } from 'chai';
import { runBackup } from '../../src/backup/engine.ts';
import { runRestore, type RestoreRequest } from '../../src/restore/engine.ts';
import { RestoreStoppedError } from '../../src/restore/errors.ts';
import { MemoryBackupStore } from '../../src/store/backup-store.ts';
import type { KubeObject } from '../../src/kube/types.ts';
import { inProcessKubeflow, type InProcessKubeflow } from '../support/cluster/in-process-kubeflow.ts';
import type { InProcessKube, WriteRecord } from '../support/cluster/in-process-kube.ts';
import type { ResourceRef } from '../support/cluster/contract.ts';
import { refs } from '../support/cluster/kubeflow/refs.ts';

const NS = 'team';
const OWNER = 'lead@example.com';
const KEY = 'in-process-restore-key';
/** the webhook's mark on a Pod it changed (kubeflow/kubeflow components/admission-webhook/main.go, `poddefault.admission.kubeflow.org/poddefault-<name>`) */
const injected = (name: string) => `poddefault.admission.kubeflow.org/poddefault-${name}`;

const r = (group: string, resource: string): ResourceRef => ({ group, resource });
const meta = (name: string) => ({ name, namespace: NS });
/** what a user made in the profile namespace, by the kind's resource and group */
const userObjects: Array<[ResourceRef, KubeObject]> = [
  [r('', 'serviceaccounts'), { apiVersion: 'v1', kind: 'ServiceAccount', metadata: meta('ci') }],
  [r('', 'secrets'), { apiVersion: 'v1', kind: 'Secret', metadata: meta('team-registry'), type: 'Opaque', data: { token: Buffer.from('s3cr3t').toString('base64') } }],
  [r('', 'configmaps'), { apiVersion: 'v1', kind: 'ConfigMap', metadata: meta('pipeline-config'), data: { 'config.yaml': 'epochs: 10\n' } }],
  [r('', 'limitranges'), { apiVersion: 'v1', kind: 'LimitRange', metadata: meta('container-defaults'), spec: { limits: [{ type: 'Container', default: { memory: '2Gi' }, defaultRequest: { memory: '512Mi' } }] } }],
  [r('', 'persistentvolumeclaims'), { apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata: meta('workspace'), spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } } }],
  [r('kubeflow.org', 'poddefaults'), {
    apiVersion: 'kubeflow.org/v1alpha1', kind: 'PodDefault', metadata: meta('team-creds'),
    spec: { desc: 'team registry', selector: { matchLabels: { 'team-creds': 'true' } }, env: [{ name: 'REGISTRY', value: 'registry.example.com' }] },
  }],
  [r('kubeflow.org', 'notebooks'), {
    apiVersion: 'kubeflow.org/v1', kind: 'Notebook', metadata: { ...meta('analysis'), labels: { 'access-ml-pipeline': 'true', 'team-creds': 'true' } },
    spec: { template: { spec: { serviceAccountName: 'default-editor', containers: [{ name: 'analysis', image: 'kubeflownotebookswg/jupyter-scipy:v1.9.0' }] } } },
  }],
];
/** written before the Notebook, each for the upstream reason in the header */
const BEFORE_WORKLOADS = ['serviceaccounts', 'secrets', 'configmaps', 'limitranges', 'persistentvolumeclaims', 'poddefaults.kubeflow.org'];
const NOTEBOOKS = 'notebooks.kubeflow.org';

const creates = (writes: readonly WriteRecord[]) => writes.filter((w) => w.verb === 'create' && !w.dryRun);
const at = (writes: readonly WriteRecord[], resource: string, name: string) => writes.findIndex((w) => w.resource === resource && w.name === name);

describe('restore engine in process: order, late PodDefaults, conflict policies, dry run and reruns', function () {
  let source: InProcessKubeflow;
  let target: InProcessKubeflow;
  const store = new MemoryBackupStore();
  let backupId: string;
  const restore = (kube: InProcessKube, overrides: Partial<RestoreRequest> = {}) =>
    runRestore(kube, store, { backupId, trust: { encryptionKey: KEY }, waitTimeoutMs: 60_000, ...overrides });

  before(async () => {
    source = await inProcessKubeflow({ seed: 41 });
    const api = source.cluster;
    api.create(refs.profiles, { apiVersion: 'kubeflow.org/v1', kind: 'Profile', metadata: { name: NS }, spec: { owner: { kind: 'User', name: OWNER } } });
    await source.until(() => api.get(refs.serviceAccounts, 'default-editor', NS));
    await source.until(() => api.get(refs.podDefaults, 'access-ml-pipeline', NS));
    for (const [ref, object] of userObjects) api.create(ref, object);
    await source.until(() => api.get(refs.pods, 'analysis-0', NS));
    const backup = await runBackup(source.kube, store, {
      kind: 'backup-state', includeVolumes: false, includeControlPlane: false, toolVersion: 'test', encryptionKey: KEY,
      profileNamespaceSelector: 'app.kubernetes.io/part-of=kubeflow-profile', protectedCrdGroups: ['kubeflow.org'],
    });
    backupId = backup.backupId;
    // the target's KFP profile controller answers late: only once the restore has written the namespace's own
    // PodDefault, that is, when a Notebook written too early would already be there
    target = await inProcessKubeflow({ seed: 42, hold: ['kfp-profile-controller'] });
  });
  after(() => {
    source?.stop();
    target?.stop();
  });

  it('a dry run into a fresh cluster writes nothing, and plans the Profile and every object of its namespace as creates', async () => {
    const fresh = await inProcessKubeflow({ seed: 45 });
    try {
      const kube = fresh.client();
      const plan = await restore(kube, { dryRun: true });
      expect(kube.realWrites()).to.deep.equal([]);
      expect(fresh.cluster.get(refs.profiles, NS)).to.equal(undefined);
      expect(plan.dryRun).to.equal(true);
      expect(plan.totals).to.deep.include({ created: userObjects.length + 1, failed: 0 });
      const planned = plan.plan.filter((p) => p.namespace === NS).map((p) => `${p.kind}:${p.create}`).sort();
      expect(planned).to.deep.equal(userObjects.map(([, o]) => `${o.kind}:1`).sort());
      // the server was asked (dryRun=All: admitted and validated, nothing stored), and nothing was stored
      expect(kube.writes.some((w) => w.dryRun)).to.equal(true);
      expect(fresh.cluster.list(refs.notebooks, { namespace: NS })).to.deep.equal([]);
    } finally {
      fresh.stop();
    }
  });

  describe('into a fresh cluster', () => {
    let outcome: Awaited<ReturnType<typeof runRestore>>;
    let writes: WriteRecord[];
    let lateAt: { podDefault: number; notebook: number };
    /** the Notebook as it was when the restore had written the namespace's own PodDefault: none yet, or written too early */
    let notebookAtSign: KubeObject | undefined;

    before(async () => {
      const api = target.cluster;
      const kube = target.client();
      // the store's revision at each creation: the order of writes across kinds (etcd's revision)
      const createdRv = new Map<string, number>();
      const stopRecording = api.subscribe((e) => {
        const key = `${e.ref.resource}/${e.object.metadata.namespace}/${e.object.metadata.name}`;
        if (e.type === 'ADDED' && !createdRv.has(key)) createdRv.set(key, Number(e.object.metadata.resourceVersion));
      });
      const late = target.until(() => api.get(refs.podDefaults, 'team-creds', NS)).then(() => {
        // the sign came: note what exists at this moment, then let metacontroller's sync run
        const notebook = api.get(refs.notebooks, 'analysis', NS);
        target.start('kfp-profile-controller');
        return notebook;
      });
      outcome = await restore(kube);
      notebookAtSign = await late;
      writes = kube.writes;
      await target.until(() => createdRv.has(`notebooks/${NS}/analysis`));
      stopRecording();
      lateAt = { podDefault: createdRv.get(`poddefaults/${NS}/access-ml-pipeline`)!, notebook: createdRv.get(`notebooks/${NS}/analysis`)! };
    });

    it('writes the Profile first, then in its namespace identities, credentials, limits, storage and PodDefaults before the Notebook', () => {
      expect(outcome.totals).to.deep.include({ created: userObjects.length + 1, updated: 0, failed: 0 });
      const made = creates(writes);
      expect(made[0]).to.include({ verb: 'create', resource: 'profiles.kubeflow.org', name: NS });
      expect(made.filter((w) => w.namespace === NS).map((w) => `${w.resource}/${w.name}`).sort())
        .to.deep.equal(userObjects.map(([ref, o]) => `${ref.group ? `${ref.resource}.${ref.group}` : ref.resource}/${o.metadata.name}`).sort());
      const notebook = at(made, NOTEBOOKS, 'analysis');
      for (const [ref, object] of userObjects) {
        const resource = ref.group ? `${ref.resource}.${ref.group}` : ref.resource;
        if (!BEFORE_WORKLOADS.includes(resource)) continue;
        expect(at(made, resource, object.metadata.name!), `${resource}/${object.metadata.name} before the Notebook`).to.be.within(1, notebook - 1);
      }
    });

    it('waits for the PodDefault the KFP profile controller makes late, so the Notebook\'s Pod gets both injections', async () => {
      expect(notebookAtSign, 'a Notebook before the late PodDefault came').to.equal(undefined);
      expect(lateAt.notebook).to.be.greaterThan(lateAt.podDefault);
      expect(outcome.waits.podDefaultWaits).to.be.at.least(1);
      const pod = await target.until(() => target.cluster.get(refs.pods, 'analysis-0', NS));
      expect(pod.metadata.annotations).to.include.keys(injected('access-ml-pipeline'), injected('team-creds'));
    });

    it('a rerun finds everything unchanged and writes nothing', async () => {
      const kube = target.client();
      const rerun = await restore(kube);
      expect(kube.writes.filter((w) => !w.dryRun)).to.deep.equal([]);
      expect(rerun.totals).to.deep.include({ created: 0, updated: 0, unchanged: userObjects.length + 1, failed: 0 });
    });

    it('rollback in place: a deleted Notebook is created again, and nothing else is written', async () => {
      target.cluster.delete(refs.notebooks, 'analysis', NS);
      await target.until(() => target.cluster.get(refs.notebooks, 'analysis', NS) === undefined);
      const kube = target.client();
      const outcome = await restore(kube);
      expect(kube.writes.filter((w) => !w.dryRun).map((w) => `${w.verb} ${w.resource} ${w.namespace}/${w.name}`)).to.deep.equal([`create ${NOTEBOOKS} ${NS}/analysis`]);
      expect(outcome.totals).to.deep.include({ created: 1, updated: 0, failed: 0 });
    });
  });

  describe('conflict policies and dry run on a ConfigMap changed after the backup', () => {
    const edited = 'epochs: 99\n';
    const live = () => (target.cluster.get(refs.configMaps, 'pipeline-config', NS)!.data as Record<string, string>)['config.yaml'];
    before(() => {
      const current = target.cluster.get(refs.configMaps, 'pipeline-config', NS)!;
      target.cluster.update(refs.configMaps, { ...current, data: { 'config.yaml': edited } });
    });

    it('dry run writes nothing and plans the update, naming the field', async () => {
      const kube = target.client();
      const outcome = await restore(kube, { dryRun: true, conflictPolicy: 'update' });
      expect(kube.writes.filter((w) => !w.dryRun)).to.deep.equal([]);
      expect(outcome.dryRun).to.equal(true);
      const entry = outcome.plan.find((p) => p.namespace === NS && p.kind === 'ConfigMap')!;
      expect(entry).to.include({ update: 1 });
      expect(entry.reasons.join(' ')).to.include('data.config.yaml');
      expect(live()).to.equal(edited);
    });

    it('skip (the default) keeps the live object, writes nothing and says why', async () => {
      const kube = target.client();
      const outcome = await restore(kube);
      expect(kube.writes.filter((w) => !w.dryRun)).to.deep.equal([]);
      expect(outcome.byKind.configmaps).to.deep.include({ skipped: 1 });
      expect(outcome.plan.flatMap((p) => p.reasons).join(' ')).to.include('conflict-policy=skip');
      expect(live()).to.equal(edited);
    });

    it('fail stops before any write, naming the object', async () => {
      const kube = target.client();
      let error: unknown;
      try {
        await restore(kube, { conflictPolicy: 'fail' });
      } catch (caught) {
        error = caught;
      }
      expect(error).to.be.instanceOf(RestoreStoppedError);
      expect((error as Error).message).to.include(`ConfigMap/${NS}/pipeline-config`);
      expect(kube.writes.filter((w) => !w.dryRun)).to.deep.equal([]);
      expect(live()).to.equal(edited);
    });

    it('update puts the archived content back with one write, and only there', async () => {
      const kube = target.client();
      const outcome = await restore(kube, { conflictPolicy: 'update' });
      expect(kube.writes.filter((w) => !w.dryRun).map((w) => `${w.resource} ${w.namespace}/${w.name}`)).to.deep.equal([`configmaps ${NS}/pipeline-config`]);
      expect(outcome.totals).to.deep.include({ updated: 1, created: 0, failed: 0 });
      expect(live()).to.equal('epochs: 10\n');
    });
  });
});
