// Jobs whose Pods are placed and run without a kubelet, held running until the test ends each: for the fast tests
// of what schedules Jobs (the volume movers: how many at once, on which node, what stops them), where the process
// tier's simulated kubelet (tests/support/kubelet) runs real containers. Each piece follows its upstream, reduced
// to what a held Job needs:
// - the Job controller makes one Pod per Job, labelled `job-name` and `controller-uid`, controlled by the Job, and
//   writes the Job's Complete or Failed condition when that Pod ends (kubernetes/kubernetes pkg/controller/job/
//   job_controller.go, pkg/controller/controller_utils.go);
// - the scheduler binds the Pod to the node its nodeName, required node affinity (matchFields metadata.name or
//   matchExpressions kubernetes.io/hostname) or nodeSelector names, else to the first node (pkg/scheduler/framework/
//   plugins/nodeaffinity/node_affinity.go);
// - the kubelet reports the container running, then terminated with its termination message (pkg/kubelet/
//   kuberuntime/kuberuntime_container.go, terminationMessagePath), and the Pod Succeeded or Failed.
// The Pods' end is the test's to say (finish): no timer decides it.
import type { KubeObject } from '../../../src/kube/types.ts';
import type { Cluster } from './cluster.ts';

const JOBS = { group: 'batch', resource: 'jobs' };
const PODS = { group: '', resource: 'pods' };

interface PodTemplateSpec {
  nodeName?: string;
  nodeSelector?: Record<string, string>;
  affinity?: { nodeAffinity?: { requiredDuringSchedulingIgnoredDuringExecution?: { nodeSelectorTerms?: Array<{
    matchFields?: Array<{ key: string; operator: string; values?: string[] }>;
    matchExpressions?: Array<{ key: string; operator: string; values?: string[] }>;
  }> } } };
  containers?: Array<{ name: string; image?: string }>;
}

/** One Job as the runner saw it. */
export interface HeldJob {
  namespace: string;
  name: string;
  /** the node its Pod was bound to */
  node: string;
  pod: string;
  /** the claims its Pod mounts */
  claims: string[];
  state: 'running' | 'succeeded' | 'failed' | 'deleted';
}

export interface HeldJobs {
  /** every Job seen, in the order they were created */
  readonly jobs: HeldJob[];
  /** the most Jobs running at once so far */
  readonly mostAtOnce: number;
  running(): HeldJob[];
  /** ends a running Job's Pod: its container terminated with `message`, exit 0 (succeeded) or 1 */
  finish(namespace: string, name: string, outcome: { message: string; succeeded: boolean }): void;
  /** resolves once `probe` holds, asked now and after every Job the runner starts or ends */
  until<T>(probe: () => T | undefined | false | null): Promise<T>;
  stop(): void;
}

export function heldJobs(cluster: Cluster, options: { nodes?: string[] } = {}): HeldJobs {
  const nodes = options.nodes ?? ['node-a'];
  const jobs: HeldJob[] = [];
  let mostAtOnce = 0;
  const waiters = new Set<() => void>();
  const changed = () => { for (const wake of [...waiters]) wake(); };
  const now = () => new Date().toISOString().replace(/\.\d+Z$/, 'Z');

  const place = (spec: PodTemplateSpec): string => {
    if (spec.nodeName) return spec.nodeName;
    for (const term of spec.affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution?.nodeSelectorTerms ?? []) {
      const field = term.matchFields?.find((f) => f.key === 'metadata.name' && f.operator === 'In')?.values?.[0];
      if (field) return field;
      const host = term.matchExpressions?.find((e) => e.key === 'kubernetes.io/hostname' && e.operator === 'In')?.values?.[0];
      if (host) return host;
    }
    return spec.nodeSelector?.['kubernetes.io/hostname'] ?? nodes[0]!;
  };

  const start = (job: KubeObject) => {
    const namespace = job.metadata.namespace!;
    const name = job.metadata.name!;
    if (jobs.some((j) => j.namespace === namespace && j.name === name && j.state === 'running')) return;
    const template = ((job.spec as { template?: { metadata?: { labels?: Record<string, string> }; spec?: PodTemplateSpec } }).template) ?? {};
    const spec = structuredClone(template.spec ?? {}) as PodTemplateSpec & { volumes?: Array<{ persistentVolumeClaim?: { claimName?: string } }> };
    const node = place(spec);
    const podName = `${name}-${jobs.length.toString(36).padStart(5, '0')}`;
    cluster.create(PODS, {
      apiVersion: 'v1', kind: 'Pod',
      metadata: {
        name: podName, namespace,
        labels: { ...template.metadata?.labels, 'job-name': name, 'controller-uid': job.metadata.uid!, 'batch.kubernetes.io/job-name': name },
        ownerReferences: [{ apiVersion: 'batch/v1', kind: 'Job', name, uid: job.metadata.uid!, controller: true, blockOwnerDeletion: true }],
      },
      spec: { ...spec, nodeName: node },
    });
    const pod = cluster.get(PODS, podName, namespace)!;
    const containers = (spec.containers ?? []).map((c) => ({ name: c.name, image: c.image, ready: true, restartCount: 0, state: { running: { startedAt: now() } } }));
    cluster.updateStatus(PODS, { ...pod, status: { phase: 'Running', startTime: now(), containerStatuses: containers } });
    jobs.push({ namespace, name, node, pod: podName, claims: (spec.volumes ?? []).flatMap((v) => (v.persistentVolumeClaim?.claimName ? [v.persistentVolumeClaim.claimName] : [])), state: 'running' });
    mostAtOnce = Math.max(mostAtOnce, jobs.filter((j) => j.state === 'running').length);
    changed();
  };

  const unsubscribe = cluster.subscribe((event) => {
    if (event.ref.group !== JOBS.group || event.ref.resource !== JOBS.resource) return;
    if (event.type === 'ADDED') start(event.object);
    if (event.type === 'DELETED') {
      for (const j of jobs) if (j.namespace === event.object.metadata.namespace && j.name === event.object.metadata.name && j.state === 'running') j.state = 'deleted';
      changed();
    }
  });

  return {
    jobs,
    get mostAtOnce() { return mostAtOnce; },
    running: () => jobs.filter((j) => j.state === 'running'),
    finish(namespace, name, outcome) {
      const held = jobs.find((j) => j.namespace === namespace && j.name === name && j.state === 'running');
      if (!held) throw new Error(`no running Job ${namespace}/${name}`);
      const pod = cluster.get(PODS, held.pod, namespace)!;
      const statuses = ((pod.status as { containerStatuses?: Array<Record<string, unknown>> }).containerStatuses ?? []).map((c) => ({
        ...c, ready: false,
        state: { terminated: { exitCode: outcome.succeeded ? 0 : 1, reason: outcome.succeeded ? 'Completed' : 'Error', message: outcome.message, startedAt: now(), finishedAt: now() } },
      }));
      cluster.updateStatus(PODS, { ...pod, status: { ...(pod.status as object), phase: outcome.succeeded ? 'Succeeded' : 'Failed', containerStatuses: statuses } });
      const job = cluster.get(JOBS, name, namespace)!;
      const condition = outcome.succeeded
        ? { type: 'Complete', status: 'True', lastProbeTime: now(), lastTransitionTime: now() }
        : { type: 'Failed', status: 'True', reason: 'BackoffLimitExceeded', message: 'Job has reached the specified backoff limit', lastProbeTime: now(), lastTransitionTime: now() };
      cluster.updateStatus(JOBS, {
        ...job,
        status: { ...(job.status as object), startTime: now(), ...(outcome.succeeded ? { succeeded: 1, completionTime: now() } : { failed: 1 }), conditions: [condition] },
      });
      held.state = outcome.succeeded ? 'succeeded' : 'failed';
      changed();
    },
    until: <T>(probe: () => T | undefined | false | null) => new Promise<T>((resolve) => {
      const ask = () => {
        const value = probe();
        if (!value) return;
        waiters.delete(ask);
        resolve(value);
      };
      waiters.add(ask);
      ask();
    }),
    stop: unsubscribe,
  };
}
