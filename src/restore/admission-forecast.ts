// What a dry run cannot ask the target and so predicts: the ResourceQuota and LimitRange admission of the objects a
// restore creates, namespace by namespace, in restore order. A dryRun=All create is answered by the target alone:
// in a namespace the target does not have yet it cannot be asked at all (the engine asks in a stand-in namespace,
// where the profile's quota and limits are not), and even where it can, the server charges nothing for a dry run
// (kubernetes/kubernetes staging/src/k8s.io/apiserver/pkg/admission/plugin/resourcequota/controller.go, checkQuotas:
// dry-run requests never update a quota), so dry runs do not add up. The forecast holds, per namespace:
// - the quota the profile controller will make from the archived Profile's resourceQuotaSpec (a namespace the target
//   lacks), or the target's own quotas with their status.used and its LimitRanges (a namespace it has);
// - the archived ResourceQuotas and LimitRanges, from the moment the dry run would create them;
// - what the restore's creates there add up to, charged in restore order as the server charges them.
// Its refusals are the server's sentences (src/kubeflow/quota-rules.ts); the report names every namespace whose
// checks were predicted rather than asked.
import type { ApiResource, KubeObject } from '../kube/types.ts';
import { addQuantities, parseQuantity, type Quantity } from '../kube/quantity.ts';
import type { RestoreKube } from './kube-port.ts';
import { claimLimitProblems, exceededQuota, forbiddenSentence, parseHard, PROFILE_QUOTA_NAME, quotaUsage, type Usage } from '../kubeflow/quota-rules.ts';

interface PredictedQuota {
  name: string;
  hard: Map<string, Quantity>;
  used: Map<string, Quantity>;
}

/** one namespace's quotas, LimitRanges and the usage the restore's creates add there */
class NamespaceForecast {
  private readonly quotas: PredictedQuota[] = [];
  private readonly limitRanges: KubeObject[] = [];
  /** what this restore's creates here add up to, by resource name */
  private readonly restored: Usage = new Map();
  /** what the note names: `ResourceQuota x (from …)` */
  readonly sources: string[] = [];

  constructor(readonly namespace: string, readonly inTarget: boolean) {}

  /** a quota that counts from now on; `used` is the target's status.used, else what this restore has made here */
  addQuota(name: string, spec: unknown, source: string, used?: Record<string, string>): void {
    const { hard, scopes, scopeSelector } = (spec ?? {}) as { hard?: Record<string, unknown>; scopes?: unknown[]; scopeSelector?: unknown };
    // a quota with scopes counts Pods only (generic.Matches with MatchesNoScopeFunc), which a restore never writes
    if ((scopes && scopes.length > 0) || scopeSelector) return;
    const parsed = parseHard(hard);
    if (!parsed || parsed.size === 0) return;
    const start = new Map<string, Quantity>();
    for (const resource of parsed.keys()) {
      const live = used?.[resource] !== undefined ? parseQuantity(used[resource]!) : this.restored.get(resource);
      if (live) start.set(resource, live);
    }
    this.quotas.push({ name, hard: parsed, used: start });
    this.quotas.sort((a, b) => a.name.localeCompare(b.name));
    this.sources.push(`ResourceQuota ${name} (${source})`);
  }

  addLimitRange(limitRange: KubeObject, source: string): void {
    this.limitRanges.push(limitRange);
    this.sources.push(`LimitRange ${limitRange.metadata.name} (${source})`);
  }

  get enforces(): boolean {
    return this.quotas.length > 0 || this.limitRanges.length > 0;
  }

  /**
   * The server's refusal of creating `object`, or the charge it makes (LimitRanger first, then every quota; the
   * first quota it would exceed refuses it and charges none), with a way to take the charge back.
   */
  admit(resource: ApiResource, object: KubeObject): { refusal: string } | { refusal?: undefined; undo: () => void } {
    const name = object.metadata.name ?? '';
    if (resource.group === '' && resource.resource === 'persistentvolumeclaims') {
      for (const limitRange of this.limitRanges) {
        const problems = claimLimitProblems(limitRange, object);
        if (problems.length > 0) return { refusal: forbiddenSentence('', 'persistentvolumeclaims', name, problems.length === 1 ? problems[0]! : `[${problems.join(', ')}]`) };
      }
    }
    const usage = quotaUsage(resource.group, resource.resource, object);
    const charges: Array<{ quota: PredictedQuota; requested: Usage }> = [];
    for (const quota of this.quotas) {
      const requested: Usage = new Map([...usage].filter(([r, q]) => quota.hard.has(r) && q.nano !== 0n));
      if (requested.size === 0) continue;
      const why = exceededQuota(quota.name, quota.hard, quota.used, requested);
      if (why) return { refusal: forbiddenSentence(resource.group, resource.resource, name, why) };
      charges.push({ quota, requested });
    }
    const apply = (sign: 1n | -1n) => {
      for (const { quota, requested } of charges) for (const [r, q] of requested) quota.used.set(r, addQuantities(quota.used.get(r) ?? { nano: 0n, format: q.format }, { ...q, nano: sign * q.nano }));
      for (const [r, q] of usage) this.restored.set(r, addQuantities(this.restored.get(r) ?? { nano: 0n, format: q.format }, { ...q, nano: sign * q.nano }));
    };
    apply(1n);
    return { undo: () => apply(-1n) };
  }
}

export class AdmissionForecast {
  private readonly namespaces = new Map<string, NamespaceForecast>();

  private constructor(private readonly targetNamespaces: ReadonlySet<string>) {}

  /**
   * The forecast of a dry run: for each restored namespace the target lacks, the quota its archived Profile asks
   * the profile controller for; for each one it has, its quotas (as their status stands) and LimitRanges.
   */
  static async open(kube: RestoreKube, profiles: readonly KubeObject[], restored: ReadonlySet<string>, targetNamespaces: ReadonlySet<string>): Promise<AdmissionForecast> {
    const forecast = new AdmissionForecast(targetNamespaces);
    for (const profile of profiles) {
      const namespace = profile.metadata.name ?? '';
      if (targetNamespaces.has(namespace)) continue;
      const spec = (profile.spec as { resourceQuotaSpec?: { hard?: Record<string, unknown> } } | undefined)?.resourceQuotaSpec;
      if (spec?.hard && Object.keys(spec.hard).length > 0) forecast.namespace(namespace).addQuota(PROFILE_QUOTA_NAME, spec, "the Profile's resourceQuotaSpec, made by the profile controller");
    }
    const inTarget = (o: KubeObject) => restored.has(o.metadata.namespace ?? '') && targetNamespaces.has(o.metadata.namespace ?? '');
    const quotas = await kube.findByResource('', 'resourcequotas');
    for (const quota of quotas ? (await kube.listAll(quotas)).items.filter(inTarget) : []) {
      const status = (quota.status ?? {}) as { hard?: Record<string, string>; used?: Record<string, string> };
      // the server matches a quota by status.hard: one its controller has not synced yet refuses nothing
      if (status.hard) forecast.namespace(quota.metadata.namespace!).addQuota(quota.metadata.name ?? '', { hard: status.hard, scopes: (quota.spec as { scopes?: unknown[] } | undefined)?.scopes }, 'the target\'s, with its status.used', status.used ?? {});
    }
    const limitRanges = await kube.findByResource('', 'limitranges');
    for (const range of limitRanges ? (await kube.listAll(limitRanges)).items.filter(inTarget) : []) forecast.namespace(range.metadata.namespace!).addLimitRange(range, "the target's");
    return forecast;
  }

  private namespace(name: string): NamespaceForecast {
    let forecast = this.namespaces.get(name);
    if (!forecast) this.namespaces.set(name, (forecast = new NamespaceForecast(name, this.targetNamespaces.has(name))));
    return forecast;
  }

  /**
   * The decision for creating `object`, taken in restore order (undefined for a cluster-scoped one). Its usage is
   * recorded even where no quota counts yet: a quota the restore writes later in that namespace starts from it.
   */
  admit(resource: ApiResource, object: KubeObject): ReturnType<NamespaceForecast['admit']> | undefined {
    if (!resource.namespaced || !object.metadata.namespace) return undefined;
    return this.namespace(object.metadata.namespace).admit(resource, object);
  }

  /** an archived ResourceQuota or LimitRange the dry run would create: it counts for what comes after it */
  adopt(resource: ApiResource, object: KubeObject): void {
    if (resource.group !== '' || !object.metadata.namespace) return;
    if (resource.resource === 'resourcequotas') this.namespace(object.metadata.namespace).addQuota(object.metadata.name ?? '', object.spec, 'from the backup');
    if (resource.resource === 'limitranges') this.namespace(object.metadata.namespace).addLimitRange(object, 'from the backup');
  }

  /** one sentence per namespace whose quota and LimitRange checks the dry run predicted instead of asking */
  notes(): string[] {
    return [...this.namespaces.values()].filter((f) => f.enforces).sort((a, b) => a.namespace.localeCompare(b.namespace)).map((f) => f.inTarget
      ? `${f.namespace}: quota and LimitRange checks were predicted, not asked, over this restore's creates in restore order, against ${f.sources.join(', ')}: the target answers each dry-run create alone and adds none of them up`
      : `${f.namespace}: quota and LimitRange checks were predicted, not asked (the target does not have this namespace yet), against ${f.sources.join(', ')}; usage counts what this restore creates there, in restore order, not what controllers make`);
  }
}
