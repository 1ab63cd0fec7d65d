// The planner: what a restore writes, in which order, decided from the preflight before the first write. The
// Profiles first; then each namespace's steps in restore order (src/kubeflow/restore-order.ts), cut in two phases when
// volumes are filled (whatever may mount a PVC comes after its data); which steps make Pods (they wait for the
// namespace's late PodDefaults); which namespaces take a step's objects one after another because their quotas count
// them; and what is left out, each with its reason, recorded before anything is written.
import { isBeforeVolumeFill, isWorkloadStep } from '../kubeflow/restore-order.ts';
import { mayExceedQuota, namespaceQuotaLimits } from '../kubeflow/quota-rules.ts';
import { describeObject } from '../kubeflow/identity.ts';
import type { RestoreRequest } from './request.ts';
import { spoolKey, type Preflight, type SkippedItem, type SpooledStep } from './preflight.ts';
import type { SpooledItem } from './spool.ts';
import type { RestoreReport, Verdict } from './report.ts';
import { restorable } from './normalize.ts';

export class RestorePlan {
  /** the steps before the volume fill (all of them when nothing is filled) and the ones after it */
  readonly early: readonly SpooledStep[];
  readonly late: readonly SpooledStep[];
  /** the steps that make Pods (restore-order.ts), judged once: every namespace asks at every step */
  private readonly workloadSteps: ReadonlySet<SpooledStep>;
  /** per namespace, the hard lists of the quotas it will have (inOrder): its Profile's and the backup's */
  private readonly quotaLimits = new Map<string, ReadonlyArray<Record<string, unknown>>>();

  constructor(readonly preflight: Preflight, fillsVolumes: boolean) {
    // Volume data must be in a new PVC before anything that mounts it exists, so when there is data to fill, every
    // namespace stops after its PVCs, the volumes are filled, and then the rest goes on. Otherwise: no barrier.
    const cut = fillsVolumes ? preflight.steps.findIndex(isAfterPvcs) : -1;
    this.early = cut < 0 ? preflight.steps : preflight.steps.slice(0, cut);
    this.late = cut < 0 ? [] : preflight.steps.slice(cut);
    this.workloadSteps = new Set(preflight.steps.filter((step) => isWorkloadStep(step.group, step.resource)));
  }

  isWorkload(step: SpooledStep): boolean {
    return this.workloadSteps.has(step);
  }

  /** the archived Profiles as the restore writes them, each copied when its turn comes: thousands copied at once were a peak */
  *profileItems(): Generator<SpooledItem> {
    for (const profile of this.preflight.profiles) yield { uid: profile.metadata.uid, object: restorable(profile) };
  }

  /**
   * Whether this step's objects in `namespace` must reach the server in restore order: the quotas the namespace will
   * have (its archived Profile's resourceQuotaSpec, the backup's ResourceQuotas) count them, and all of them together
   * pass a hard limit, so that which are refused depends on their order (quota-rules.ts mayExceedQuota).
   */
  inOrder(namespace: string, step: SpooledStep, items: readonly SpooledItem[]): boolean {
    const { preflight } = this;
    let limits = this.quotaLimits.get(namespace);
    if (limits === undefined) {
      const quotaStep = preflight.steps.find((s) => s.group === '' && s.resource === 'resourcequotas');
      const archived = quotaStep ? preflight.spool.readNamespace(spoolKey(quotaStep), namespace).map((item) => item.object) : [];
      limits = namespaceQuotaLimits(preflight.profiles.find((p) => p.metadata.name === namespace), archived);
      this.quotaLimits.set(namespace, limits);
    }
    return limits.length > 0 && mayExceedQuota(limits, step.group, step.resource, items.map((item) => item.object));
  }

  /**
   * What is not written, recorded with its reason: the skipped items, and the kinds the target serves in no version
   * (a dry run without skip-unserved counts them as refused, since the restore would refuse the backup; with
   * skip-unserved they are skipped, each named).
   */
  async recordLeftOut(report: RestoreReport, request: Pick<RestoreRequest, 'skipUnserved'>): Promise<void> {
    const { preflight } = this;
    for (const item of preflight.skipped) report.record(item.key, item.kind, item.namespace, 'skip', skipReason(item));
    const unservedVerdict: Verdict = request.skipUnserved ? 'skip' : 'fail';
    for (const step of preflight.unserved) {
      for await (const item of preflight.spool.read(step.spoolKey, preflight.namespaces)) {
        const why = `${describeObject(item.object)}: ${step.what} is not served by the target${request.skipUnserved ? ' (skip-unserved leaves it out)' : ''}`;
        report.record(step.key, item.object.kind, item.object.metadata.namespace ?? '', unservedVerdict, why);
      }
    }
  }
}

/** a skipped item's reason, naming it: `Kind/namespace/name: reason` (a reason that names the object already is kept) */
function skipReason(item: SkippedItem): string {
  const named = [item.kind, item.namespace, item.name].filter((part) => part !== undefined && part !== '').join('/');
  return item.reason.includes(`${named}`) && item.name ? item.reason : `${named}: ${item.reason}`;
}

/** true for a step that may use a PVC: everything but the core kinds ordered up to and including PVCs */
function isAfterPvcs(step: SpooledStep): boolean {
  return !isBeforeVolumeFill(step.group, step.resource);
}
