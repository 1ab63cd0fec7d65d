// The control-plane loops a real cluster runs beside the API server, each following its upstream source:
// - the garbage collector (kubernetes pkg/controller/garbagecollector/garbagecollector.go: attemptToDeleteItem,
//   classifyReferences, processDeletingDependentsItem; operations.go): a dependent all of whose owners are absent is
//   deleted in the background, one that still has a living owner loses the reference to the absent one; an owner is
//   absent when no object has its uid, or when it is namespaced and lives in another namespace than its dependent
//   (the collector looks owners up in the dependent's namespace); foreground deletion waits for the blocking
//   dependents, orphan deletion removes the references first;
// - the namespace controller (pkg/controller/namespace/deletion/namespaced_resources_deleter.go): Terminating, then
//   gone with its contents once the `kubernetes` finalizer is removed;
// - the apiextensions finalizer (staging/src/k8s.io/apiextensions-apiserver/pkg/controller/finalizer/crd_finalizer.go):
//   deleting a CRD deletes its objects, then the CRD;
// - the resource quota controller (quota-controller.ts, after pkg/controller/resourcequota): every quota's status.
import type { KubeObject } from '../../../src/kube/types.ts';
import { crdToDef, CRD_CLEANUP_FINALIZER } from './crd.ts';
import { CRD_REF, NS_REF, type Cluster } from './cluster.ts';
import type { ResourceRef } from './contract.ts';
import { isApiError } from './errors.ts';
import type { LoggedEvent } from './store.ts';
import { startQuotaController } from './quota-controller.ts';

export function startBackgroundControllers(cluster: Cluster): () => void {
  const namespaces = new Set<string>();
  const crds = new Set<string>();
  const owners = new Set<string>();
  let scheduled = false;
  let stopped = false;

  const schedule = () => {
    if (scheduled || stopped) return;
    scheduled = true;
    setImmediate(() => {
      scheduled = false;
      if (stopped) return;
      const ns = [...namespaces];
      namespaces.clear();
      const cs = [...crds];
      crds.clear();
      const os = [...owners];
      owners.clear();
      for (const uid of os) guard(() => reconcileOwner(uid));
      for (const n of ns) guard(() => reconcileNamespace(n));
      for (const c of cs) guard(() => reconcileCrd(c));
    });
  };

  const onEvent = (e: LoggedEvent) => {
    const o = e.stored.obj;
    const isNs = e.ref.group === '' && e.ref.resource === 'namespaces';
    const isCrd = e.ref.group === CRD_REF.group && e.ref.resource === CRD_REF.resource;
    if (o.metadata.deletionTimestamp && e.type !== 'DELETED') {
      if (isNs) namespaces.add(o.metadata.name ?? '');
      if (isCrd) crds.add(o.metadata.name ?? '');
      if (o.metadata.uid) owners.add(o.metadata.uid);
    }
    if (e.type === 'DELETED' && o.metadata.uid) owners.add(o.metadata.uid);
    // a dependent's change can unblock its owners; a new dependent may point at an owner that is gone
    for (const ref of o.metadata.ownerReferences ?? []) owners.add(ref.uid);
    if (o.metadata.namespace) namespaces.add(o.metadata.namespace);
    if (e.type === 'DELETED' && !isCrd) {
      const crdName = `${e.ref.resource}.${e.ref.group}`;
      if (e.ref.group !== '' && cluster.findResource(e.ref)?.builtin === false) crds.add(crdName);
    }
    schedule();
  };

  function reconcileOwner(uid: string): void {
    const where = cluster.locate(uid);
    const owner = where ? cluster.store.get(where.ref, where.key)?.obj : undefined;
    const dependents = cluster.dependentsOf(uid);
    // an owner is visible to a dependent only in the dependent's namespace (or cluster-wide, for a cluster-scoped owner)
    const visibleTo = (dependent: KubeObject, ownerUid: string): boolean => {
      const at = cluster.locate(ownerUid);
      const found = at ? cluster.store.get(at.ref, at.key)?.obj : undefined;
      if (!found) return false;
      return found.metadata.namespace === undefined || found.metadata.namespace === dependent.metadata.namespace;
    };
    const dangling = owner ? dependents.filter((dep) => !visibleTo(dep.stored.obj, uid)) : dependents;
    // owner absent: delete dependents that have no other living owner, else drop the dangling reference
    for (const dep of dangling) {
      const refs = dep.stored.obj.metadata.ownerReferences ?? [];
      const living = refs.filter((r) => r.uid !== uid && visibleTo(dep.stored.obj, r.uid));
      if (living.length > 0) patchOwnerRefs(dep.ref, dep.stored.obj, refs.filter((r) => r.uid !== uid));
      else if (!dep.stored.obj.metadata.deletionTimestamp) del(dep.ref, dep.stored.obj, 'Background');
    }
    if (!owner) return;
    if (!owner.metadata.deletionTimestamp || !where) return;
    const finalizers = owner.metadata.finalizers ?? [];
    if (finalizers.includes('orphan')) {
      for (const dep of dependents) patchOwnerRefs(dep.ref, dep.stored.obj, (dep.stored.obj.metadata.ownerReferences ?? []).filter((r) => r.uid !== uid));
      removeFinalizer(where.ref, owner, 'orphan');
      return;
    }
    if (finalizers.includes('foregroundDeletion')) {
      for (const dep of dependents) if (!dep.stored.obj.metadata.deletionTimestamp) del(dep.ref, dep.stored.obj, 'Foreground');
      const blocking = cluster
        .dependentsOf(uid)
        .filter((dep) => (dep.stored.obj.metadata.ownerReferences ?? []).some((r) => r.uid === uid && r.blockOwnerDeletion));
      if (blocking.length === 0) removeFinalizer(where.ref, owner, 'foregroundDeletion');
    }
  }

  function reconcileNamespace(name: string): void {
    const ns = cluster.store.get(NS_REF, `/${name}`)?.obj;
    if (!ns?.metadata.deletionTimestamp) return;
    let remaining = 0;
    for (const def of cluster.resources()) {
      if (!def.namespaced) continue;
      for (const s of cluster.store.scan(def, name)) {
        remaining++;
        if (!s.obj.metadata.deletionTimestamp) del(def, s.obj, 'Background');
      }
    }
    const specFinalizers = (ns.spec as { finalizers?: string[] } | undefined)?.finalizers ?? [];
    if (remaining === 0 && specFinalizers.includes('kubernetes'))
      cluster.finalizeNamespace(name, specFinalizers.filter((f) => f !== 'kubernetes'));
  }

  function reconcileCrd(name: string): void {
    const crd = cluster.store.get(CRD_REF, `/${name}`)?.obj;
    if (!crd?.metadata.deletionTimestamp) return;
    const def = crdToDef(crd);
    const items = cluster.findResource(def) ? cluster.store.scan(def) : [];
    for (const s of items) if (!s.obj.metadata.deletionTimestamp) del(def, s.obj, 'Background');
    if (items.length === 0) removeFinalizer(CRD_REF, crd, CRD_CLEANUP_FINALIZER);
  }

  function del(ref: ResourceRef, o: KubeObject, propagationPolicy: 'Background' | 'Foreground'): void {
    guard(() => cluster.delete(ref, o.metadata.name ?? '', o.metadata.namespace, { propagationPolicy }));
  }

  function patchOwnerRefs(ref: ResourceRef, o: KubeObject, refs: NonNullable<KubeObject['metadata']['ownerReferences']>): void {
    guard(() =>
      cluster.patch(ref, o.metadata.name ?? '', o.metadata.namespace, (cur) => {
        if (refs.length) cur.metadata.ownerReferences = refs;
        else delete cur.metadata.ownerReferences;
        return cur;
      }, 'main'),
    );
  }

  function removeFinalizer(ref: ResourceRef, o: KubeObject, finalizer: string): void {
    guard(() =>
      cluster.patch(ref, o.metadata.name ?? '', o.metadata.namespace, (cur) => {
        cur.metadata.finalizers = (cur.metadata.finalizers ?? []).filter((f) => f !== finalizer);
        return cur;
      }, 'main'),
    );
  }

  const unsubscribe = cluster.store.subscribeRaw(onEvent);
  const stopQuotas = startQuotaController(cluster);
  return () => {
    stopped = true;
    unsubscribe();
    stopQuotas();
  };
}

/** A lost race (object already gone, changed under us) is retried by the next event, as a real controller requeues. */
function guard(f: () => void): void {
  try {
    f();
  } catch (e) {
    if (isApiError(e) && (e.status === 404 || e.status === 409)) return;
    if (isApiError(e)) return;
    console.error(`cluster: background controller failed: ${(e as Error).message}`);
  }
}
