// The backup engine, driven only through runBackup, on the embedded cluster's in-process API (no HTTP, TLS or child
// process: tests/support/cluster/in-process-kubeflow.ts) into the in-memory backup store. engine.process.test.ts keeps
// the same engine over HTTPS and S3, with the failing API server.
//
// The archive is read here as Velero reads it, not through the product's reader: a gzipped tar whose objects lie at
// resources/<resource>[.<group>]/namespaces/<namespace>/<name>.json and resources/<resource>[.<group>]/cluster/
// <name>.json, under a version folder or not (vmware-tanzu/velero pkg/archive/extractor.go and pkg/restore/restore.go,
// "Output file format" in Velero's docs). What belongs in it is stated from upstream facts: what users made, and not
// what a controller makes again from its owner (an object with a controller ownerReference is its controller's,
// which re-creates it: kubernetes/kubernetes staging/src/k8s.io/apimachinery/pkg/apis/meta/v1/types.go
// OwnerReference.Controller; kubeflow/kubeflow profile_controller.go and notebook_controller.go set it on all they
// make; the KFP profile controller's sync.py hands its children to metacontroller, which owns them by the namespace).
import { expect } from 'chai';
import { gunzipSync } from 'node:zlib';
import { Readable } from 'node:stream';
import tar from 'tar-stream';
import { runBackup, type BackupRequest } from '../../src/backup/engine.ts';
import { BackupInputError } from '../../src/backup/scope.ts';
import { MemoryBackupStore } from '../../src/store/backup-store.ts';
import { backupKeys } from '../../src/store/layout.ts';
import type { KubeObject } from '../../src/kube/types.ts';
import { inProcessKubeflow, type InProcessKubeflow } from '../support/cluster/in-process-kubeflow.ts';
import type { ResourceRef } from '../support/cluster/contract.ts';
import { refs } from '../support/cluster/kubeflow/refs.ts';

const OWNER = (ns: string) => `${ns}@example.com`;
const r = (group: string, resource: string): ResourceRef => ({ group, resource });
const gr = (ref: ResourceRef) => (ref.group ? `${ref.resource}.${ref.group}` : ref.resource);

function userObjects(ns: string): Array<[ResourceRef, KubeObject]> {
  const meta = (name: string) => ({ name, namespace: ns });
  return [
    [r('', 'configmaps'), { apiVersion: 'v1', kind: 'ConfigMap', metadata: meta('pipeline-config'), data: { 'config.yaml': `team: ${ns}\n` } }],
    [r('', 'secrets'), { apiVersion: 'v1', kind: 'Secret', metadata: meta('team-registry'), type: 'Opaque', data: { token: Buffer.from(ns).toString('base64') } }],
    [r('', 'serviceaccounts'), { apiVersion: 'v1', kind: 'ServiceAccount', metadata: meta('ci') }],
    [r('kubeflow.org', 'poddefaults'), { apiVersion: 'kubeflow.org/v1alpha1', kind: 'PodDefault', metadata: meta('team-creds'), spec: { desc: 'creds', selector: { matchLabels: { 'team-creds': 'true' } } } }],
    [r('kubeflow.org', 'notebooks'), {
      apiVersion: 'kubeflow.org/v1', kind: 'Notebook', metadata: meta('analysis'),
      spec: { template: { spec: { containers: [{ name: 'analysis', image: 'kubeflownotebookswg/jupyter-scipy:v1.9.0' }] } } },
    }],
  ];
}

/** `<resource>[.<group>]/<namespace>/<name>` → the object, for every object file of a Velero tarball */
async function archived(tarball: Buffer): Promise<Map<string, KubeObject>> {
  const out = new Map<string, KubeObject>();
  const extract = tar.extract();
  Readable.from([gunzipSync(tarball)]).pipe(extract as never);
  for await (const entry of extract) {
    const chunks: Buffer[] = [];
    for await (const chunk of entry) chunks.push(chunk as Buffer);
    const parts = entry.header.name.split('/');
    if (parts[0] !== 'resources' || !entry.header.name.endsWith('.json')) continue;
    const name = parts.at(-1)!.slice(0, -'.json'.length);
    const namespaced = parts.indexOf('namespaces');
    const namespace = namespaced > 0 ? parts[namespaced + 1]! : '';
    out.set(`${parts[1]}/${namespace}/${name}`, JSON.parse(Buffer.concat(chunks).toString('utf8')) as KubeObject);
  }
  return out;
}

describe('backup engine in process: what goes into the archive, and refusals', function () {
  let source: InProcessKubeflow;
  const namespaces = ['ana', 'ben'];

  const request = (overrides: Partial<BackupRequest> = {}): BackupRequest => ({
    kind: 'backup-state', includeVolumes: false, includeControlPlane: false, toolVersion: 'test',
    profileNamespaceSelector: 'app.kubernetes.io/part-of=kubeflow-profile', protectedCrdGroups: ['kubeflow.org'],
    ...overrides,
  });

  before(async () => {
    source = await inProcessKubeflow({ seed: 43 });
    const api = source.cluster;
    for (const ns of namespaces) api.create(refs.profiles, { apiVersion: 'kubeflow.org/v1', kind: 'Profile', metadata: { name: ns }, spec: { owner: { kind: 'User', name: OWNER(ns) } } });
    for (const ns of namespaces) {
      await source.until(() => api.get(refs.serviceAccounts, 'default-editor', ns));
      await source.until(() => api.get(refs.podDefaults, 'access-ml-pipeline', ns));
      for (const [ref, object] of userObjects(ns)) api.create(ref, object);
      await source.until(() => api.get(refs.pods, 'analysis-0', ns));
    }
  });
  after(() => source?.stop());

  it('archives the Profile and every object a user made, as it is, and nothing a controller owns', async () => {
    const store = new MemoryBackupStore();
    const outcome = await runBackup(source.kube, store, request({ namespaces: ['ana'] }));
    const items = await archived(store.objects.bytesOf(backupKeys(outcome.backupId).tarball)!);
    expect(items.get('profiles.kubeflow.org//ana')?.spec).to.deep.equal({ owner: { kind: 'User', name: OWNER('ana') } });
    for (const [ref, object] of userObjects('ana')) {
      const found = items.get(`${gr(ref)}/ana/${object.metadata.name}`);
      expect(found, `${gr(ref)}/ana/${object.metadata.name}`).to.not.equal(undefined);
      for (const field of ['data', 'spec'] as const) expect(found![field], `${gr(ref)} ${field}`).to.deep.equal(object[field]);
    }
    // what the profile, KFP profile and notebook controllers made in the namespace, each with its controller reference
    const owned = source.cluster.resources().filter((def) => def.namespaced && def.verbs.includes('list'))
      .flatMap((def) => source.cluster.list(def, { namespace: 'ana' }).filter((o) => o.metadata.ownerReferences?.some((ref) => ref.controller)).map((o) => `${gr(def)}/ana/${o.metadata.name}`));
    expect(owned, 'the controllers made objects to leave out').to.include.members(['statefulsets.apps/ana/analysis', 'rolebindings.rbac.authorization.k8s.io/ana/namespaceAdmin', 'pods/ana/analysis-0']);
    expect([...items.keys()].filter((key) => owned.includes(key))).to.deep.equal([]);
    // nothing of the namespace not asked for
    expect([...items.keys()].filter((key) => key.includes('/ben/') || key.endsWith('//ben'))).to.deep.equal([]);
    expect(outcome.objects).to.equal(items.size);
  });

  it('refuses a namespace that is no profile namespace, naming it, and writes nothing', async () => {
    const store = new MemoryBackupStore();
    let error: unknown;
    try {
      await runBackup(source.kube, store, request({ namespaces: ['nobody'] }));
    } catch (caught) {
      error = caught;
    }
    expect(error).to.be.instanceOf(BackupInputError);
    expect((error as Error).message).to.include('nobody');
    expect(store.objects.keys()).to.deep.equal([]);
  });

  it('reads the cluster and writes nothing to it', async () => {
    const kube = source.client();
    await runBackup(kube, new MemoryBackupStore(), request());
    expect(kube.writes).to.deep.equal([]);
  });
});
