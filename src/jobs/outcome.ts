// A Job's end as its conditions tell it (kubernetes pkg/controller/job/job_controller.go sets Complete or Failed).
import type { KubeObject } from '../kube/types.ts';

export interface JobCondition {
  type?: string;
  status?: string;
  reason?: string;
  message?: string;
}

function conditions(job: KubeObject): JobCondition[] {
  const status = job.status as { conditions?: JobCondition[] } | undefined;
  return Array.isArray(status?.conditions) ? status.conditions : [];
}

export function jobSucceeded(job: KubeObject): boolean {
  return conditions(job).some((c) => c.type === 'Complete' && c.status === 'True');
}

export function jobFailedCondition(job: KubeObject): JobCondition | undefined {
  return conditions(job).find((c) => c.type === 'Failed' && c.status === 'True');
}

export function jobFinished(job: KubeObject | undefined): boolean {
  return job === undefined || jobSucceeded(job) || jobFailedCondition(job) !== undefined;
}

