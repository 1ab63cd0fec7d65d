// The Job controller: one Pod per Job (parallelism and completions 1, the only Jobs the product writes), its status
// counters and conditions, backoffLimit, activeDeadlineSeconds, and the TTL after it finishes.
// Upstream: kubernetes/kubernetes pkg/controller/job/job_controller.go (syncJob: startTime, status.active counting the
// Pods that exist, a new Pod after a failure while failed <= backoffLimit, BackoffLimitExceeded "Job has reached the
// specified backoff limit", DeadlineExceeded "Job was active longer than specified deadline" with the active Pods
// ended, CompletionsReached; trackJobStatusAndRemoveFinalizers writes the interim FailureTarget or SuccessCriteriaMet
// condition before the terminal Failed or Complete one), pkg/controller/job/util/utils.go (IsJobFinished),
// pkg/controller/controller_utils.go (RealPodControl: the Pod's labels, controller reference and the FailedCreate
// warning "Error creating: ..." when the API server refuses it) and pkg/controller/ttlafterfinished/
// ttlafterfinished_controller.go (a finished Job with ttlSecondsAfterFinished is deleted, its Pods in the background).
// The real controller learns of a finished Pod from its Pod informer; the simulated kubelet calls podFinished instead.
import { randomBytes } from 'node:crypto';
import type { KubeObject } from '../../../src/kube/types.ts';
import type { InProcessApi } from '../cluster/contract.ts';
import type { RecordWarning } from './events.ts';
import type { SimulationLoop } from './loop.ts';
import { isFinishedJob, key, now, type JobSpec } from './objects.ts';
import { JOBS, PODS } from './refs.ts';

export interface JobController {
  jobAdded(job: KubeObject): void;
  jobDeleted(job: KubeObject): void;
  /** the kubelet's report that a Pod ran to its end */
  podFinished(pod: KubeObject, succeeded: boolean): void;
}

export interface JobControllerDeps {
  api: InProcessApi;
  loop: SimulationLoop;
  recordWarning: RecordWarning;
  /** ends the containers of a Pod (what deleting it makes its kubelet do) */
  killPod(namespace: string, podName: string): void;
  /** ends the containers of every Pod whose name starts with `prefix` in `namespace` */
  killPodsNamed(namespace: string, prefix: string): void;
}

export function jobController({ api, loop, recordWarning, killPod, killPodsNamed }: JobControllerDeps): JobController {
  const deadlines = new Map<string, NodeJS.Timeout>(); // job key → timer

  function updateJobStatus(namespace: string, name: string, change: (status: Record<string, unknown>) => void): KubeObject | undefined {
    for (let attempt = 0; attempt < 5; attempt++) {
      const job = api.get(JOBS, name, namespace);
      if (!job) return undefined;
      const status = { ...((job.status ?? {}) as Record<string, unknown>) };
      change(status);
      try {
        return api.updateStatus(JOBS, { ...job, status });
      } catch (error) {
        if ((error as { status?: number }).status !== 409) throw error;
      }
    }
    return undefined;
  }

  /**
   * When the API server refuses the Job's Pod (a ResourceQuota, an admission policy): a Warning event FailedCreate
   * "Error creating: <the refusal>" on the Job, and another try after a backoff for as long as the Job wants a Pod.
   */
  function createPodFor(job: KubeObject, attempt = 0): void {
    try {
      createPod(job);
      // status.active counts the Pods that exist (syncJob): one only once its create succeeded
      updateJobStatus(job.metadata.namespace ?? '', job.metadata.name ?? '', (s) => { s.active = 1; });
    } catch (error) {
      if (loop.stopped) return;
      recordWarning(job, 'FailedCreate', `Error creating: ${(error as Error).message}`, 'job-controller');
      loop.later(Math.min(500 * 2 ** attempt, 5000), () => {
        const current = api.get(JOBS, job.metadata.name ?? '', job.metadata.namespace);
        if (current && current.metadata.uid === job.metadata.uid && !isFinishedJob(current)) createPodFor(current, attempt + 1);
      });
    }
  }

  function createPod(job: KubeObject): void {
    const spec = (job.spec ?? {}) as JobSpec;
    const name = job.metadata.name ?? '';
    const uid = job.metadata.uid ?? '';
    api.create(PODS, {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: {
        name: `${name}-${randomBytes(3).toString('hex').slice(0, 5)}`,
        namespace: job.metadata.namespace,
        labels: {
          ...(spec.template?.metadata?.labels ?? {}),
          'job-name': name, 'batch.kubernetes.io/job-name': name,
          'controller-uid': uid, 'batch.kubernetes.io/controller-uid': uid,
        },
        annotations: spec.template?.metadata?.annotations ?? {},
        ownerReferences: [{ apiVersion: 'batch/v1', kind: 'Job', name, uid, controller: true, blockOwnerDeletion: true }],
      },
      spec: spec.template?.spec ?? {},
    });
  }

  function jobAdded(job: KubeObject): void {
    if (job.status && ((job.status as { startTime?: string }).startTime || isFinishedJob(job))) return;
    const namespace = job.metadata.namespace ?? '';
    const name = job.metadata.name ?? '';
    // a refused Pod leaves the Job with startTime and 0 active, and a FailedCreate event (createPodFor)
    updateJobStatus(namespace, name, (s) => { s.startTime = now(); s.active = 0; s.ready = 0; });
    const deadline = (job.spec as JobSpec).activeDeadlineSeconds;
    if (deadline) deadlines.set(key(namespace, name), loop.later(deadline * 1000, () => expireJob(namespace, name)));
    createPodFor(job);
  }

  function forgetDeadline(namespace: string, name: string): void {
    const k = key(namespace, name);
    clearTimeout(deadlines.get(k));
    deadlines.delete(k);
  }

  function finishJob(namespace: string, name: string, outcome: 'Complete' | 'Failed', reason: string, message: string): void {
    forgetDeadline(namespace, name);
    const job = updateJobStatus(namespace, name, (s) => {
      const at = now();
      s.active = 0;
      s.ready = 0;
      if (outcome === 'Complete') s.completionTime = at;
      const interim = outcome === 'Complete' ? 'SuccessCriteriaMet' : 'FailureTarget';
      s.conditions = [
        { type: interim, status: 'True', reason, message, lastProbeTime: at, lastTransitionTime: at },
        { type: outcome, status: 'True', reason, message, lastProbeTime: at, lastTransitionTime: at },
      ];
    });
    // the TTL-after-finished controller's part
    const ttl = (job?.spec as JobSpec | undefined)?.ttlSecondsAfterFinished;
    if (ttl !== undefined) loop.later(ttl * 1000, () => { try { api.delete(JOBS, name, namespace, { propagationPolicy: 'Background' }); } catch { /* gone */ } });
  }

  function expireJob(namespace: string, name: string): void {
    for (const pod of api.list(PODS, { namespace, labelSelector: `job-name=${name}` })) killPod(namespace, pod.metadata.name ?? '');
    const job = api.get(JOBS, name, namespace);
    if (job && !isFinishedJob(job)) finishJob(namespace, name, 'Failed', 'DeadlineExceeded', 'Job was active longer than specified deadline');
  }

  function podFinished(pod: KubeObject, succeeded: boolean): void {
    const owner = pod.metadata.ownerReferences?.find((o) => o.kind === 'Job' && o.controller);
    if (!owner) return;
    const namespace = pod.metadata.namespace ?? '';
    const job = api.get(JOBS, owner.name, namespace);
    if (!job || job.metadata.uid !== owner.uid || isFinishedJob(job)) return;
    const updated = updateJobStatus(namespace, owner.name, (s) => {
      if (succeeded) s.succeeded = ((s.succeeded as number | undefined) ?? 0) + 1;
      else s.failed = ((s.failed as number | undefined) ?? 0) + 1;
    });
    if (!updated) return;
    if (succeeded) return finishJob(namespace, owner.name, 'Complete', 'CompletionsReached', 'Reached expected number of succeeded pods');
    const failed = (updated.status as { failed?: number }).failed ?? 0;
    if (failed > ((job.spec as JobSpec).backoffLimit ?? 6)) {
      return finishJob(namespace, owner.name, 'Failed', 'BackoffLimitExceeded', 'Job has reached the specified backoff limit');
    }
    createPodFor(updated);
  }

  function jobDeleted(job: KubeObject): void {
    forgetDeadline(job.metadata.namespace ?? '', job.metadata.name ?? '');
    // the garbage collector deletes the Job's Pods, and their kubelet ends their containers
    killPodsNamed(job.metadata.namespace ?? '', `${job.metadata.name}-`);
  }

  return { jobAdded, jobDeleted, podFinished };
}
