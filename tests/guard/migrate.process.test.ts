import { expect } from 'chai';
import { startCluster } from '../support/cluster/index.ts';
import { KubeClient } from '../../src/kube/client.ts';
import type { KubeObject } from '../../src/kube/types.ts';
import { CRDS, NAMESPACES, knownResource } from '../../src/guard/kube-port.ts';
import { migrateStoredVersions, storedVersionsOf } from '../../src/guard/migrate.ts';
import type { MigrationCheckpoint, MigrationProgress } from '../../src/guard/migrate.ts';
import { DEFAULT_PROTECTED_CRD_GROUPS } from '../../src/guard/policy.ts';

const NAME = 'notebooks.kubeflow.org';
const VERSIONS = ['v1alpha1', 'v1beta1', 'v1'];
const schema = { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } };

/** The Notebook CRD as a charm release that stores `storage` would apply it, serving `served`. */
function notebookCrd(storage: string, served: string[], current?: KubeObject): KubeObject {
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: current ? { ...current.metadata } : { name: NAME },
    spec: {
      group: 'kubeflow.org',
      names: { plural: 'notebooks', singular: 'notebook', kind: 'Notebook', listKind: 'NotebookList' },
      scope: 'Namespaced',
      versions: served.map((name) => ({ name, served: true, storage: name === storage, schema, subresources: { status: {} } })),
    },
  };
}

function notebook(version: string, namespace: string, name: string): KubeObject {
  return {
    apiVersion: `kubeflow.org/${version}`,
    kind: 'Notebook',
    metadata: { name, namespace },
    spec: { template: { spec: { containers: [{ name, image: 'kubeflownotebookswg/jupyter-scipy:v1.9.0' }] } } },
  };
}

describe('migrate-stored-versions against the embedded cluster', () => {
  let cluster: Awaited<ReturnType<typeof startCluster>>;
  let client: KubeClient;
  const namespaces = ['kubeflow-user-alice', 'kubeflow-user-bob'];

  before(async () => {
    cluster = await startCluster({});
    client = await KubeClient.load({ kubeconfig: cluster.kubeconfigPath });
    for (const name of namespaces) await client.create(NAMESPACES, { apiVersion: 'v1', kind: 'Namespace', metadata: { name } });
    // Replay the CRD's history: each release moved the storage version on, and users kept creating Notebooks.
    if (await client.tryGet(CRDS, NAME)) await client.delete(CRDS, NAME);
    await client.create(CRDS, notebookCrd('v1alpha1', VERSIONS));
    for (const version of VERSIONS) {
      const current = await client.get(CRDS, NAME);
      await client.replace(CRDS, notebookCrd(version, VERSIONS, current));
      const at = knownResource('kubeflow.org', version, 'notebooks', 'Notebook', true);
      for (const namespace of namespaces) {
        for (let index = 0; index < 4; index += 1) await client.create(at, notebook(version, namespace, `${version}-nb-${index}`));
      }
    }
  });

  after(async () => {
    client?.close();
    await cluster?.stop();
  });

  it('starts from storedVersions [v1alpha1, v1beta1, v1], where dropping v1alpha1 fails with the real error', async () => {
    const crd = await client.get(CRDS, NAME);
    expect(storedVersionsOf(crd)).to.deep.equal(VERSIONS);
    let failure: { status: number; message: string } | undefined;
    try {
      await client.replace(CRDS, notebookCrd('v1', ['v1beta1', 'v1'], crd));
    } catch (error) {
      failure = error as { status: number; message: string };
    }
    expect(failure?.status).to.equal(422);
    expect(failure?.message).to.include('status.storedVersions[0]: Invalid value: "v1alpha1": missing from spec.versions');
  });

  it('resumes from a checkpoint without rewriting what was done', async () => {
    // An interrupted run: the first page went through, then the action was killed.
    const checkpoints: MigrationCheckpoint[] = [];
    const stopAfterFirstPage = new Error('simulated interruption');
    try {
      await migrateStoredVersions(client, {
        crd: NAME,
        protectedGroups: DEFAULT_PROTECTED_CRD_GROUPS,
        pageSize: 5,
        onCheckpoint: (checkpoint) => {
          if (checkpoint) checkpoints.push(checkpoint);
          throw stopAfterFirstPage;
        },
      });
    } catch (error) {
      expect(error).to.equal(stopAfterFirstPage);
    }
    expect(checkpoints).to.have.length(1);
    expect(checkpoints[0]).to.include({ crd: NAME, storageVersion: 'v1', rewritten: 5 });
    expect(storedVersionsOf(await client.get(CRDS, NAME))).to.deep.equal(VERSIONS);

    const NOTEBOOKS = knownResource('kubeflow.org', 'v1', 'notebooks', 'Notebook', true);
    const updatesBefore = client.requestCounts().update;

    const progress: MigrationProgress[] = [];
    const resumed = await migrateStoredVersions(client, {
      crd: NAME,
      protectedGroups: DEFAULT_PROTECTED_CRD_GROUPS,
      pageSize: 5,
      resumeFrom: checkpoints[0],
      onProgress: (p) => progress.push(p),
    });
    expect(resumed.migrated).to.equal(1);
    expect(resumed.crds[0]).to.deep.include({ crd: NAME, storageVersion: 'v1', storedVersionsBefore: VERSIONS, storedVersionsAfter: ['v1'], rewritten: 24, gone: 0, changed: true });
    expect(progress.at(-1)?.message).to.equal(`${NAME}: storedVersions [v1alpha1, v1beta1, v1] -> [v1]`);

    // The 5 objects up to the checkpoint were not written again: 19 object rewrites and one status update.
    expect(client.requestCounts().update - updatesBefore).to.equal(19 + 1);
    const after = (await client.listAll(NOTEBOOKS)).items;
    expect(after).to.have.length(24);
    expect(after.every((nb) => (nb.spec as { template: unknown }).template !== undefined)).to.equal(true);
  });

  it('lets the CRD drop v1alpha1 afterwards, and a rerun changes nothing and says so', async () => {
    const crd = await client.get(CRDS, NAME);
    expect(storedVersionsOf(crd)).to.deep.equal(['v1']);
    const updated = await client.replace(CRDS, notebookCrd('v1', ['v1beta1', 'v1'], crd));
    expect((updated.spec as { versions: Array<{ name: string }> }).versions.map((v) => v.name)).to.deep.equal(['v1beta1', 'v1']);

    const before = await client.get(CRDS, NAME);
    const writesBefore = client.requestCounts().writes;
    const rerun = await migrateStoredVersions(client, { crd: 'all', protectedGroups: DEFAULT_PROTECTED_CRD_GROUPS });
    expect(rerun.migrated).to.equal(0);
    expect(rerun.crds.every((c) => !c.changed && c.rewritten === 0)).to.equal(true);
    expect(rerun.crds.map((c) => c.crd)).to.include(NAME);
    expect(rerun.summary).to.match(/^Nothing to migrate: \d+ CRDs are stored only in their storage version\.$/);
    expect(client.requestCounts().writes).to.equal(writesBefore);
    expect((await client.get(CRDS, NAME)).metadata.resourceVersion).to.equal(before.metadata.resourceVersion);
  });

  it('refuses an unknown CRD name in one sentence', async () => {
    let message = '';
    try {
      await migrateStoredVersions(client, { crd: 'notebook.kubeflow.org', protectedGroups: DEFAULT_PROTECTED_CRD_GROUPS });
    } catch (error) {
      message = (error as Error).message;
    }
    expect(message).to.equal('CustomResourceDefinition notebook.kubeflow.org does not exist; give a CRD name or "all".');
  });
});
