import { expect } from 'chai';
import { startCluster } from '../support/cluster/index.ts';
import { KubeClient } from '../../src/kube/client.ts';
import type { KubeObject } from '../../src/kube/types.ts';
import { ensureGuard, guardState, removeGuard } from '../../src/guard/install.ts';
import { BINDINGS, CRDS, NAMESPACES, POLICIES, knownResource } from '../../src/guard/kube-port.ts';
import { ALLOW_DELETE_ANNOTATION, CRD_GUARD_NAME, DEFAULT_PROTECTED_CRD_GROUPS } from '../../src/guard/policy.ts';
import type { GuardOptions } from '../../src/guard/policy.ts';

const guarded: GuardOptions = { protectCrds: true, protectedCrdGroups: DEFAULT_PROTECTED_CRD_GROUPS, protectProfiles: false };
const NOTEBOOKS = knownResource('kubeflow.org', 'v1', 'notebooks', 'Notebook', true);

function crd(group: string, plural: string, kind: string): KubeObject {
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `${plural}.${group}`, labels: { 'app.juju.is/created-by': 'guard-test' } },
    spec: {
      group,
      names: { plural, singular: kind.toLowerCase(), kind, listKind: `${kind}List` },
      scope: 'Namespaced',
      versions: [
        {
          name: 'v1',
          served: true,
          storage: true,
          schema: { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } },
        },
      ],
    },
  };
}

async function rejection(action: Promise<unknown>): Promise<{ status: number; message: string }> {
  try {
    await action;
  } catch (error) {
    return error as { status: number; message: string };
  }
  throw new Error('expected the API server to refuse the request');
}

describe('guard install against the embedded cluster', () => {
  let cluster: Awaited<ReturnType<typeof startCluster>>;
  let client: KubeClient;

  before(async () => {
    cluster = await startCluster({});
    client = await KubeClient.load({ kubeconfig: cluster.kubeconfigPath });
    await client.create(NAMESPACES, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'kubeflow-user-alice' } });
    for (const name of ['nb-1', 'nb-2']) {
      await client.create(NOTEBOOKS, {
        apiVersion: 'kubeflow.org/v1',
        kind: 'Notebook',
        metadata: { name, namespace: 'kubeflow-user-alice' },
        spec: { template: { spec: { containers: [{ name, image: 'kubeflownotebookswg/jupyter-scipy:v1.9.0' }] } } },
      });
    }
  });

  after(async () => {
    client?.close();
    await cluster?.stop();
  });

  it('refuses deleting notebooks.kubeflow.org with our message, and the Notebooks survive', async () => {
    const first = await ensureGuard(client, guarded);
    expect(first.created).to.deep.equal([`ValidatingAdmissionPolicy/${CRD_GUARD_NAME}`, `ValidatingAdmissionPolicyBinding/${CRD_GUARD_NAME}`]);
    expect((await guardState(client, guarded)).state).to.equal('active');

    const refused = await rejection(client.delete(CRDS, 'notebooks.kubeflow.org'));
    expect(refused.status).to.equal(403);
    expect(refused.message).to.include('kubeflow-upgrader refused to delete CustomResourceDefinition notebooks.kubeflow.org');
    expect(refused.message).to.include(`kubectl annotate crd notebooks.kubeflow.org ${ALLOW_DELETE_ANNOTATION}=true`);

    expect(await client.tryGet(CRDS, 'notebooks.kubeflow.org')).to.not.equal(undefined);
    const notebooks = await client.listAll(NOTEBOOKS);
    expect(notebooks.items.map((nb) => nb.metadata.name).sort()).to.deep.equal(['nb-1', 'nb-2']);
  });

  it('never blocks CRD creations and updates, even in protected groups', async () => {
    const created = await client.create(CRDS, crd('kubeflow.org', 'guardtests', 'GuardTest'));
    created.metadata.labels = { ...created.metadata.labels, touched: 'yes' };
    const updated = await client.replace(CRDS, created);
    expect(updated.metadata.labels?.touched).to.equal('yes');
    await client.create(CRDS, crd('example.com', 'widgets', 'Widget'));
  });

  it('lets a charm-style cleanup delete only the CRDs of unprotected groups', async () => {
    // What a remove hook does (bundle-kubeflow #1307): delete every CRD the charm installed.
    const charmCrds = ['guardtests.kubeflow.org', 'widgets.example.com', 'poddefaults.kubeflow.org', 'inferenceservices.serving.kserve.io'];
    const outcomes: Record<string, number | 'deleted'> = {};
    for (const name of charmCrds) {
      try {
        await client.delete(CRDS, name);
        outcomes[name] = 'deleted';
      } catch (error) {
        outcomes[name] = (error as { status: number }).status;
      }
    }
    expect(outcomes).to.deep.equal({
      'guardtests.kubeflow.org': 403,
      'widgets.example.com': 'deleted',
      'poddefaults.kubeflow.org': 403,
      'inferenceservices.serving.kserve.io': 403,
    });
    expect(await client.tryGet(CRDS, 'poddefaults.kubeflow.org')).to.not.equal(undefined);
  });

  it('lets a protected CRD annotated allow-delete "true" be deleted on purpose', async () => {
    await client.patch(CRDS, 'guardtests.kubeflow.org', undefined, { metadata: { annotations: { [ALLOW_DELETE_ANNOTATION]: 'true' } } }, 'merge');
    await client.delete(CRDS, 'guardtests.kubeflow.org');
    expect(await client.tryGet(CRDS, 'guardtests.kubeflow.org')).to.equal(undefined);
  });

  it('keeps the guard as it is when ensured again (upgrade-charm), writing nothing', async () => {
    const before = await client.get(POLICIES, CRD_GUARD_NAME);
    const again = await ensureGuard(client, guarded);
    expect(again).to.deep.equal({ created: [], updated: [], unchanged: [`ValidatingAdmissionPolicy/${CRD_GUARD_NAME}`, `ValidatingAdmissionPolicyBinding/${CRD_GUARD_NAME}`], removed: [] });
    const after = await client.get(POLICIES, CRD_GUARD_NAME);
    expect(after.metadata.resourceVersion).to.equal(before.metadata.resourceVersion);
    await rejection(client.delete(CRDS, 'notebooks.kubeflow.org'));
  });

  it('reports a tampered binding as drifted and repairs it', async () => {
    const binding = await client.get(BINDINGS, CRD_GUARD_NAME);
    (binding.spec as { validationActions: string[] }).validationActions = ['Audit'];
    await client.replace(BINDINGS, binding);
    const state = await guardState(client, guarded);
    expect(state.state).to.equal('drifted');
    expect(state.summary).to.include(`ValidatingAdmissionPolicyBinding/${CRD_GUARD_NAME} differs`);
    const repaired = await ensureGuard(client, guarded);
    expect(repaired.updated).to.deep.equal([`ValidatingAdmissionPolicyBinding/${CRD_GUARD_NAME}`]);
    expect((await guardState(client, guarded)).state).to.equal('active');
  });

  it('protects Profiles too when protect-profiles is set, and drops that part when unset', async () => {
    const withProfiles = { ...guarded, protectProfiles: true };
    const result = await ensureGuard(client, withProfiles);
    expect(result.created).to.have.length(2);
    const PROFILES = knownResource('kubeflow.org', 'v1', 'profiles', 'Profile', false);
    await client.create(PROFILES, { apiVersion: 'kubeflow.org/v1', kind: 'Profile', metadata: { name: 'bob' }, spec: { owner: { kind: 'User', name: 'bob@example.com' } } });
    const refused = await rejection(client.delete(PROFILES, 'bob'));
    expect(refused.status).to.equal(403);
    expect(refused.message).to.include('kubeflow-upgrader refused to delete Profile bob');
    const back = await ensureGuard(client, guarded);
    expect(back.removed).to.have.length(2);
    await client.delete(PROFILES, 'bob');
  });

  it('is lifted by protect-crds=false and by removeGuard (the remove hook)', async () => {
    const off = await ensureGuard(client, { ...guarded, protectCrds: false });
    expect(off.removed).to.have.length(2);
    expect((await guardState(client, { ...guarded, protectCrds: false })).state).to.equal('absent');
    await client.create(CRDS, crd('kubeflow.org', 'lifteds', 'Lifted'));
    await client.delete(CRDS, 'lifteds.kubeflow.org');

    await ensureGuard(client, guarded);
    expect(await removeGuard(client)).to.have.length(2);
    expect((await guardState(client, guarded)).state).to.equal('absent');
    // Like the real server, the CRD goes only after its objects are cleaned up (finalizer customresourcecleanup).
    await client.delete(CRDS, 'notebooks.kubeflow.org');
    const gone = await client.waitFor(CRDS, 'notebooks.kubeflow.org', undefined, (o) => o === undefined, { timeoutMs: 10_000 });
    expect(gone).to.equal(undefined);
  });
  it('converges when several writers ensure it at once (creates and repairs that race end in 409, then agree)', async () => {
    await removeGuard(client);
    const names = [`ValidatingAdmissionPolicy/${CRD_GUARD_NAME}`, `ValidatingAdmissionPolicyBinding/${CRD_GUARD_NAME}`];
    const first = await Promise.all([1, 2, 3, 4].map(() => ensureGuard(client, guarded)));
    // Each object is created by exactly one writer; the others read it again after their 409 and find it as wanted.
    for (const name of names) {
      expect(first.filter((result) => result.created.includes(name)), name).to.have.length(1);
      expect(first.filter((result) => result.unchanged.includes(name)), name).to.have.length(3);
    }
    expect((await guardState(client, guarded)).state).to.equal('active');

    const binding = await client.get(BINDINGS, CRD_GUARD_NAME);
    (binding.spec as { validationActions: string[] }).validationActions = ['Audit'];
    await client.replace(BINDINGS, binding);
    const repairs = await Promise.all([1, 2, 3].map(() => ensureGuard(client, guarded)));
    expect(repairs.filter((result) => result.updated.includes(names[1]!))).to.have.length(1);
    expect((await guardState(client, guarded)).state).to.equal('active');
    await removeGuard(client);
  });
});
