// The one kinds table is consistent with what is derived from it: the restore order, the status kinds, the volume-
// fill barrier, the snapshot kinds and the one cluster-scoped state kind.
import { expect } from 'chai';
import { knownKind, knownKinds, spelledResource } from '../../src/kubeflow/known-kinds.ts';
import { isBeforeVolumeFill, isWorkloadStep, restoreOrder, restorePriority } from '../../src/kubeflow/restore-order.ts';
import { statusKindsServed } from '../../src/kubeflow/status-kinds.ts';
import { kubeflowCrdSpecs } from '../support/cluster/kubeflow/crds.ts';
import { profileKind } from '../../src/kubeflow/kinds.ts';

describe('kubeflow/known-kinds: one table, everything derived', () => {
  it('names each resource once', () => {
    const keys = knownKinds.map(spelledResource);
    expect(new Set(keys).size).to.equal(keys.length);
  });

  it('the restore order is the table, in its order', () => {
    expect(restoreOrder.map((s) => `${s.phase} ${spelledResource(s)}`)).to.deep.equal(knownKinds.map((k) => `${k.phase} ${spelledResource(k)}`));
    knownKinds.forEach((k, index) => expect(restorePriority(k.group, k.resource)).to.equal(index));
    expect(restorePriority('apps', 'deployments'), 'a kind not in the table comes after every one that is').to.equal(knownKinds.length);
  });

  it('phase 1 is the Profile alone, first, and it is the one cluster-scoped state kind', () => {
    expect(knownKinds.filter((k) => k.phase === 1)).to.deep.equal([knownKinds[0]]);
    expect(profileKind).to.include({ group: 'kubeflow.org', resource: 'profiles', kind: 'Profile' });
  });

  it('what precedes the volume fill is one run right after the Profiles, ending with the PVCs', () => {
    const before = knownKinds.map((k) => k.beforeVolumeFill === true);
    const first = before.indexOf(true);
    const last = before.lastIndexOf(true);
    expect(first).to.equal(1);
    expect(before.slice(first, last + 1).every(Boolean), 'no gap in the run').to.equal(true);
    expect(knownKinds[last]).to.include({ group: '', resource: 'persistentvolumeclaims' });
    expect(isBeforeVolumeFill('', 'secrets')).to.equal(true);
    expect(isBeforeVolumeFill('kubeflow.org', 'notebooks')).to.equal(false);
    expect(isBeforeVolumeFill('apps', 'deployments'), 'an unknown kind may mount a PVC: after the fill').to.equal(false);
  });

  it('every kind whose status is restored is a workload, waiting for PodDefaults, and says which upstream code reads it', () => {
    // what the embedded cluster serves stands for discovery: Charmed Kubeflow's CRDs, storage version first
    const served = kubeflowCrdSpecs.map((c) => ({ group: c.group, version: c.versions[0]!, kind: c.kind }));
    const statusKinds = statusKindsServed(served);
    expect(statusKinds.length).to.be.greaterThan(1);
    for (const k of statusKinds) {
      const entry = knownKinds.find((x) => x.group === k.group && x.kind === k.kind);
      if (entry) expect(isWorkloadStep(entry.group, entry.resource), k.kind).to.equal(true);
      expect(k.why, k.kind).to.match(/\.go /);
    }
  });

  it('snapshot-profiles keeps the Profile and both halves of a KFAM contributor, nothing else', () => {
    expect(knownKinds.filter((k) => k.snapshot).map(spelledResource)).to.deep.equal(['profiles.kubeflow.org', 'rolebindings.rbac.authorization.k8s.io', 'authorizationpolicies.security.istio.io']);
  });
});
