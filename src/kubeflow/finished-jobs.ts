// batch/v1 Jobs that finished in the source cluster. The Job controller runs every Job that has no Complete or Failed
// condition and leaves alone one that has (kubernetes pkg/controller/job/job_controller.go: syncJob returns early
// for IsJobFinished). A restore writes objects without their status, as Velero's does (vmware-tanzu/velero
// pkg/restore/restore.go, resetStatus), so a finished Job created again would run again: its side effects (an export,
// a migration, a notification) a second time, on the target. What an operator wants back from a finished Job is that
// it ran, not another run; its Pods and their logs are runtime objects that no backup keeps. So a finished Job is not
// written, and the restore's results name it with this reason. A Job that had not finished is restored (without its
// source cluster's controller-uid, restore-changes.ts) and runs from the start, as Velero's restore does.
import type { KubeObject } from '../kube/types.ts';
import { groupOf } from './identity.ts';

interface JobCondition { type?: string; status?: string }

/** 'Complete' or 'Failed' when the archived Job had finished, else undefined */
export function jobOutcome(object: KubeObject): 'Complete' | 'Failed' | undefined {
  if (object.kind !== 'Job' || groupOf(object.apiVersion) !== 'batch') return undefined;
  const conditions = ((object.status as { conditions?: JobCondition[] } | undefined)?.conditions ?? []);
  const finished = conditions.find((c) => (c.type === 'Complete' || c.type === 'Failed') && c.status === 'True');
  return finished?.type as 'Complete' | 'Failed' | undefined;
}

/** why a restore does not write this archived object, when it is a finished Job */
export function finishedJobReason(object: KubeObject): string | undefined {
  const outcome = jobOutcome(object);
  if (!outcome) return undefined;
  return `not restored: the Job had finished (${outcome}) in the source cluster; created again it would run again, since a restored Job has no status and the Job controller runs every Job without a Complete or Failed condition`;
}
