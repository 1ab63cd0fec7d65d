// The behaviours the kinds table names (src/kubeflow/write-behaviours.ts), as the writer runs them: each is called
// at a fixed point of an object's write (its preparation, its create, the comparison of one that exists), and only
// when the object's row names it. No kind is named here: a kind is a row of the table.
import type { ApiResource, KubeObject } from '../kube/types.ts';
import type { WriteBehaviour } from '../kubeflow/write-behaviours.ts';
import { awaitsResume, finishedExperimentPin, isFinishedStatus, statusToWrite, suspendedForStatus } from '../kubeflow/status-kinds.ts';
import { withMappedStorageClass } from '../kubeflow/storage-classes.ts';
import { roleRefChange } from '../kubeflow/role-ref.ts';
import type { RestoreKube } from './kube-port.ts';
import type { SpooledItem } from './spool.ts';
import type { Verdict } from './report.ts';
import type { TargetIpFamilies } from './ip-families.ts';
import type { VolumeFill } from './volume-fill.ts';
import { writeArchivedStatus } from './controller-objects.ts';
import { WebhookUnreachableError, type WebhookWait } from './webhook-wait.ts';
import { writes, type WriteMode } from './mode.ts';

export type Behaviours = ReadonlySet<WriteBehaviour>;

/** what the behaviours use of the run */
export interface KindWriteContext {
  kube: RestoreKube;
  mode: WriteMode;
  fieldManager: string;
  storageClassMap: ReadonlyMap<string, string>;
  volumeFill: Pick<VolumeFill, 'withMarkIfFilled'>;
  ipFamilies: Pick<TargetIpFamilies, 'adapt'>;
  webhookWait: Pick<WebhookWait, 'write'>;
}

/** the object as the target should get it, whatever the write: synchronous, so that a failure is the object's own */
export function mapped(ctx: KindWriteContext, b: Behaviours, wanted: KubeObject): KubeObject {
  return b.has('map-storage-class') && ctx.storageClassMap.size ? withMappedStorageClass(wanted, ctx.storageClassMap) : wanted;
}

/** a Service that prefers dual-stack, on a target that is not: its primary family, and the sentence reporting it */
export async function adapted(ctx: KindWriteContext, b: Behaviours, resource: ApiResource, wanted: KubeObject): Promise<{ object: KubeObject; note?: string }> {
  return b.has('adapt-ip-families') ? ctx.ipFamilies.adapt(resource, wanted) : { object: wanted };
}

/** the create a kind created suspended is sent as, and the patch that resumes it; only with an archived status */
export function suspension(b: Behaviours, item: SpooledItem, wanted: KubeObject): { create: KubeObject; resume: unknown } | undefined {
  return b.has('suspend-until-status') && item.status !== undefined ? suspendedForStatus(wanted) : undefined;
}

/** the maxTrialCount a finished Experiment is created with, when it has none */
export function pinOf(b: Behaviours, item: SpooledItem, wanted: KubeObject): number | undefined {
  return b.has('pin-finished') && item.status !== undefined ? finishedExperimentPin(wanted, item.status) : undefined;
}

/** the object a real create sends: suspended, pinned and marked for the fill as its row says */
export function toCreate(ctx: KindWriteContext, b: Behaviours, item: SpooledItem, resource: ApiResource, wanted: KubeObject): KubeObject {
  let object = suspension(b, item, wanted)?.create ?? wanted;
  const pin = pinOf(b, item, wanted);
  if (pin !== undefined) object = { ...object, spec: { ...(object.spec as object), maxTrialCount: pin } };
  return b.has('mark-for-fill') ? ctx.volumeFill.withMarkIfFilled(resource, object) : object;
}

/**
 * After a real create: the archived status written, then a suspended job resumed. A verdict and reason when the
 * object is not whole yet (a rerun finishes it), undefined when it is.
 */
export async function afterCreate(
  ctx: KindWriteContext, b: Behaviours, item: SpooledItem, resource: ApiResource, wanted: KubeObject, made: KubeObject, name: string,
): Promise<{ verdict: Verdict; reason: string } | undefined> {
  if (!b.has('write-status') || item.status === undefined) return undefined;
  const problem = await writeArchivedStatus(ctx.kube, resource, made, statusToWrite(wanted, item.status), ctx.fieldManager);
  if (problem) return { verdict: 'fail', reason: `${name} was created, but its status was not restored (${problem}), so its controller may run it again — rerun the restore to finish it` };
  const guard = suspension(b, item, wanted);
  if (!guard) return undefined;
  const resumed = await ctx.webhookWait.write(name, () => ctx.kube.patch(resource, made.metadata.name!, made.metadata.namespace, guard.resume, 'merge', { fieldManager: ctx.fieldManager }))
    .then(() => true, (error: unknown) => { if (error instanceof WebhookUnreachableError) return false; throw error; });
  if (!resumed) return { verdict: 'fail', reason: `${name} was created suspended and is not resumed yet, because the API server could not call its admission webhook (see the warning); a rerun resumes it` };
  return undefined;
}

/**
 * An object whose create an earlier restore made but did not finish (a crash, a lost answer, a status write that
 * failed): a training job still suspended by the restore's guard, or an Experiment pinned by it (finishedExperimentPin)
 * whose status is not yet the archived finished one. Comparing only the fields the archive sets would call either
 * unchanged and leave it suspended, or running again, for good; so the archived status is written (again: the write
 * replaces the whole status, so repeating it is harmless) and the job resumed. Undefined when there is nothing to finish.
 */
export async function finishInterruptedCreate(
  ctx: KindWriteContext, b: Behaviours, item: SpooledItem, resource: ApiResource, wanted: KubeObject, existing: KubeObject, name: string,
): Promise<{ verdict: Verdict; reason: string } | undefined> {
  if (!b.has('write-status') || item.status === undefined) return undefined;
  const suspended = b.has('suspend-until-status') && awaitsResume(wanted, existing);
  const pin = pinOf(b, item, wanted);
  const pinnedButRunning = pin !== undefined && (existing.spec as { maxTrialCount?: number } | undefined)?.maxTrialCount === pin && !isFinishedStatus(existing.status);
  if (!suspended && !pinnedButRunning) return undefined;
  const what = suspended ? `${name} was left suspended by an earlier restore that stopped before resuming it` : `${name} was created by an earlier restore that stopped before writing its status`;
  if (!writes(ctx.mode)) return { verdict: 'update', reason: `${what}: its status would be written${suspended ? ' and it would be resumed' : ''}` };
  const problem = await writeArchivedStatus(ctx.kube, resource, existing, statusToWrite(wanted, item.status), ctx.fieldManager);
  if (problem) return { verdict: 'fail', reason: `${what}, and its status could not be written (${problem}) — rerun the restore` };
  if (suspended) await ctx.kube.patch(resource, existing.metadata.name!, existing.metadata.namespace, suspendedForStatus(wanted)!.resume, 'merge', { fieldManager: ctx.fieldManager });
  return { verdict: 'update', reason: `${what}: its status was written${suspended ? ' and it was resumed' : ''}` };
}

/** why the live object is not updated into `wanted` though the policy says update (a binding of another role) */
export function refusedUpdate(b: Behaviours, wanted: KubeObject, existing: KubeObject): string | undefined {
  return b.has('keep-other-role') ? roleRefChange(wanted, existing) : undefined;
}

/** the reason a finished Experiment's create carries: what the restore set, and why */
export function pinReason(name: string, pin: number): string {
  return `${name} finished without spec.maxTrialCount; it was restored with maxTrialCount ${pin} so that Katib, which restarts such an Experiment, keeps it finished`;
}
