// The resource quota controller of kube-controller-manager (kubernetes/kubernetes pkg/controller/resourcequota/
// resource_quota_controller.go: syncResourceQuota, replenishQuota; resource_quota_monitor.go for what wakes it):
// - a quota whose status.hard differs from spec.hard, or that has no status.used yet (a quota just created or
//   changed), is synced: status.hard becomes spec.hard and status.used what the namespace holds, for every resource
//   of hard an evaluator counts (quota.CalculateUsage over quota-evaluators.ts), each starting at zero;
// - a deleted object, a Pod that finished and a changed Service or claim replenish the quotas of their namespace that
//   count their resource (the monitor's delete and update handlers), which are synced again;
// - the sync writes status only when it changed. Between a quota's create and this sync, admission answers
//   "status unknown for quota" (quota.ts), as a real server does.
// The periodic full resync (5 minutes by default) is left out: everything that changes usage here wakes a sync.
import type { KubeObject } from '../../../src/kube/types.ts';
import type { Cluster } from './cluster.ts';
import type { InProcessApi, ResourceRef } from './contract.ts';
import { isApiError } from './errors.ts';
import { add, canonical, formatQuantity, quantityOf, type Quantity } from './quantity.ts';
import { quotaEvaluator } from './quota-evaluators.ts';
import { scopesMatch } from './quota.ts';
import type { LoggedEvent } from './store.ts';

const QUOTAS: ResourceRef = { group: '', resource: 'resourcequotas' };

interface QuotaStatus { hard?: Record<string, string>; used?: Record<string, string> }

const sameRecord = (a: Record<string, string> | undefined, b: Record<string, string> | undefined) =>
  JSON.stringify(Object.entries(a ?? {}).sort()) === JSON.stringify(Object.entries(b ?? {}).sort());

/** spec.hard as the server stores it: each quantity in its canonical form */
function canonicalHard(quota: KubeObject): Record<string, string> {
  const hard = ((quota.spec as { hard?: Record<string, string> } | undefined)?.hard) ?? {};
  return Object.fromEntries(Object.entries(hard).map(([k, v]) => [k, canonical(v)]));
}

/** quota.CalculateUsage: what the namespace holds of each resource of `hard` an evaluator counts */
export function calculateUsage(cluster: Cluster, quota: KubeObject, hard: Record<string, string>): Record<string, string> {
  const namespace = quota.metadata.namespace ?? '';
  const names = Object.keys(hard);
  const used = new Map<string, Quantity>();
  for (const def of cluster.resources()) {
    if (!def.namespaced) continue;
    const evaluator = quotaEvaluator(def.group, def.resource);
    const matched = evaluator ? names.filter((n) => evaluator.matches(n)) : [];
    if (!evaluator || matched.length === 0) continue;
    for (const n of matched) used.set(n, { nano: 0n, format: 'DecimalSI' });
    for (const { obj } of cluster.store.scan(def, namespace)) {
      if (!scopesMatch(quota, def.group, def.resource, obj)) continue;
      const usage = evaluator.usage(obj);
      for (const n of matched) {
        const q = usage.get(n);
        if (q) used.set(n, add(used.get(n)!, q));
      }
    }
  }
  // what no evaluator counts keeps the usage observed before (syncResourceQuota starts from status.used)
  const before = ((quota.status as QuotaStatus | undefined)?.used) ?? {};
  const out: Record<string, string> = {};
  for (const n of names) {
    const q = used.get(n);
    if (q) out[n] = formatQuantity(q);
    else if (before[n] !== undefined) out[n] = formatQuantity(quantityOf(before[n]));
  }
  return out;
}

export function startQuotaController(cluster: Cluster): () => void {
  /** `namespace/name` of the quotas to sync */
  const dirty = new Set<string>();
  let scheduled = false;
  let stopped = false;

  const schedule = () => {
    if (scheduled || stopped) return;
    scheduled = true;
    setImmediate(() => {
      scheduled = false;
      if (stopped) return;
      const keys = [...dirty];
      dirty.clear();
      for (const key of keys) sync(key);
    });
  };

  const sync = (key: string) => {
    const [namespace, name] = key.split('/') as [string, string];
    const quota = cluster.get(QUOTAS, name, namespace);
    if (!quota || quota.metadata.deletionTimestamp) return;
    const hard = canonicalHard(quota);
    const used = calculateUsage(cluster, quota, hard);
    const status = (quota.status ?? {}) as QuotaStatus;
    if (status.used !== undefined && sameRecord(status.hard, hard) && sameRecord(status.used, used)) return;
    try {
      cluster.updateStatus(QUOTAS, { ...quota, status: { hard, used } });
    } catch (e) {
      // a write in between (the admission plugin charging it) changed its resourceVersion: sync again
      if (isApiError(e) && e.status === 409) {
        dirty.add(key);
        schedule();
        return;
      }
      if (!isApiError(e)) console.error(`cluster: quota controller failed: ${(e as Error).message}`);
    }
  };

  /** replenishQuota: the quotas of `namespace` that count anything of this resource */
  const replenish = (ref: ResourceRef, namespace: string) => {
    const evaluator = quotaEvaluator(ref.group, ref.resource);
    if (!evaluator) return;
    for (const { obj } of cluster.store.scan(QUOTAS, namespace)) {
      const hard = ((obj.status as QuotaStatus | undefined)?.hard) ?? {};
      if (Object.keys(hard).some((n) => evaluator.matches(n))) dirty.add(`${namespace}/${obj.metadata.name}`);
    }
  };

  const onEvent = (e: LoggedEvent) => {
    const o = e.stored.obj;
    const namespace = o.metadata.namespace;
    if (!namespace) return;
    if (e.ref.group === '' && e.ref.resource === 'resourcequotas') {
      if (e.type === 'DELETED') return;
      const status = (o.status ?? {}) as QuotaStatus;
      if (status.used === undefined || !sameRecord(status.hard, canonicalHard(o))) dirty.add(`${namespace}/${o.metadata.name}`);
    } else if (e.type === 'DELETED') {
      replenish(e.ref, namespace);
    } else if (e.type === 'MODIFIED' && e.ref.group === '') {
      const phase = (o.status as { phase?: string } | undefined)?.phase;
      const finished = e.ref.resource === 'pods' && (phase === 'Succeeded' || phase === 'Failed' || o.metadata.deletionTimestamp);
      if (finished || e.ref.resource === 'services' || e.ref.resource === 'persistentvolumeclaims') replenish(e.ref, namespace);
    } else {
      return;
    }
    if (dirty.size > 0) schedule();
  };

  const unsubscribe = cluster.store.subscribeRaw(onEvent);
  // quotas that exist when the controller starts (a cluster restarted on its store) are synced once
  for (const def of [QUOTAS]) for (const { obj } of cluster.store.scan(def)) dirty.add(`${obj.metadata.namespace}/${obj.metadata.name}`);
  schedule();
  return () => {
    stopped = true;
    unsubscribe();
  };
}

/**
 * Resolves once the quota controller has written the quota's status: from then on admission enforces it (it matches a
 * quota by status.hard), so a test that means the quota to refuse waits for this, never for time.
 */
export function quotaSynced(api: Pick<InProcessApi, 'get' | 'subscribe'>, namespace: string, name: string): Promise<void> {
  const synced = () => ((api.get(QUOTAS, name, namespace)?.status as QuotaStatus | undefined)?.used !== undefined);
  return new Promise((resolve) => {
    if (synced()) return resolve();
    const stop = api.subscribe(() => {
      if (!synced()) return;
      stop();
      resolve();
    });
  });
}
