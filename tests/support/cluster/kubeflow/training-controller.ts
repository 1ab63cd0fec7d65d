// The training operator, simulated after kubeflow/training-operator v1.9.0 pkg/controller.v1/common/job.go
// (ReconcileJobs) and the per-framework reconcilers (pkg/controller.v1/<framework>/*_controller.go): a job gets one
// Pod per replica, named <job>-<replica type>-<index> (common/pod.go GenGeneralName) and controlled by the job, and
// the Created and Running conditions. What a restore must get right, as upstream has it: a job whose status has a
// Succeeded or Failed condition that is True is finished (pkg/util/status.go IsFinished) and gets no Pod; a job with
// spec.runPolicy.suspend gets no Pod and the Suspended condition.
import type { KubeObject } from '../../../../src/kube/types.ts';
import type { InProcessApi, ResourceRef } from '../contract.ts';
import { refs } from './refs.ts';
import { controllerOwnerKeys, controllerReference, keyOf, peek, reconciler, splitKey } from './reconciler.ts';

/** each training kind, its plural and the spec field holding its replica specs (pkg/apis/kubeflow.org/v1) */
export const trainingKinds: ReadonlyArray<{ kind: string; resource: string; replicaSpecs: string }> = [
  { kind: 'PyTorchJob', resource: 'pytorchjobs', replicaSpecs: 'pytorchReplicaSpecs' },
  { kind: 'TFJob', resource: 'tfjobs', replicaSpecs: 'tfReplicaSpecs' },
  { kind: 'MPIJob', resource: 'mpijobs', replicaSpecs: 'mpiReplicaSpecs' },
  { kind: 'XGBoostJob', resource: 'xgboostjobs', replicaSpecs: 'xgbReplicaSpecs' },
  { kind: 'PaddleJob', resource: 'paddlejobs', replicaSpecs: 'paddleReplicaSpecs' },
  { kind: 'JAXJob', resource: 'jaxjobs', replicaSpecs: 'jaxReplicaSpecs' },
  // training-operator v1.8.0 pkg/controller.v1/mxnet (mxnet_types.go: mxReplicaSpecs)
  { kind: 'MXJob', resource: 'mxjobs', replicaSpecs: 'mxReplicaSpecs' },
];

const jobNameLabel = 'training.kubeflow.org/job-name';

interface Condition {
  type: string;
  status: string;
  reason?: string;
}

interface ReplicaSpec {
  replicas?: number;
  template?: { metadata?: KubeObject['metadata']; spec?: unknown };
}

const holds = (job: KubeObject, type: string) =>
  ((job.status as { conditions?: Condition[] } | undefined)?.conditions ?? []).some((c) => c.type === type && c.status === 'True');

/** pkg/util/status.go IsFinished */
export function isJobFinished(job: KubeObject): boolean {
  return holds(job, 'Succeeded') || holds(job, 'Failed');
}

function withCondition(job: KubeObject, condition: Condition): Record<string, unknown> {
  const status = (job.status ?? {}) as { conditions?: Condition[] };
  return { ...status, conditions: [...(status.conditions ?? []).filter((c) => c.type !== condition.type), condition] };
}

function reconcileJob(api: InProcessApi, ref: ResourceRef, replicaSpecsField: string, key: string): void {
  const { namespace, name } = splitKey(key);
  const job = peek(api, ref, name, namespace);
  if (!job || job.metadata.deletionTimestamp) return;
  // ReconcileJobs: a finished job is cleaned up and left alone; nothing is started for it
  if (isJobFinished(job)) return;
  const kind = job.kind;
  const owned = api.list(refs.pods, { namespace, labelSelector: `${jobNameLabel}=${name}` });
  if ((job.spec as { runPolicy?: { suspend?: boolean } } | undefined)?.runPolicy?.suspend === true) {
    for (const pod of owned) api.delete(refs.pods, pod.metadata.name!, namespace);
    if (!holds(job, 'Suspended')) api.updateStatus(ref, { ...job, status: withCondition(job, { type: 'Suspended', status: 'True', reason: `${kind}Suspended` }) });
    return;
  }
  const specs = ((job.spec ?? {}) as Record<string, Record<string, ReplicaSpec> | undefined>)[replicaSpecsField] ?? {};
  const present = new Set(owned.map((pod) => pod.metadata.name));
  for (const [type, spec] of Object.entries(specs)) {
    for (let index = 0; index < (spec.replicas ?? 1); index++) {
      const podName = `${name}-${type.toLowerCase()}-${index}`;
      if (present.has(podName)) continue;
      api.create(refs.pods, {
        apiVersion: 'v1', kind: 'Pod',
        metadata: {
          name: podName, namespace,
          labels: { ...(spec.template?.metadata?.labels ?? {}), [jobNameLabel]: name, 'training.kubeflow.org/replica-type': type.toLowerCase(), 'training.kubeflow.org/replica-index': String(index) },
          ownerReferences: [controllerReference(job)],
        },
        spec: spec.template?.spec ?? { containers: [] },
      });
    }
  }
  let status = job.status as Record<string, unknown> | undefined;
  if (!holds(job, 'Created')) status = withCondition({ ...job, status }, { type: 'Created', status: 'True', reason: `${kind}Created` });
  if (!holds({ ...job, status }, 'Running')) status = withCondition({ ...job, status }, { type: 'Running', status: 'True', reason: `${kind}Running` });
  if (status !== job.status) api.updateStatus(ref, { ...job, status });
}

export function trainingController() {
  return reconciler({
    name: 'training-operator',
    delayMs: 10,
    watches: trainingKinds.flatMap(({ kind, resource }) => {
      const ref = { group: 'kubeflow.org', resource };
      return [
        { ref, keys: (o: KubeObject) => [`${resource}|${keyOf(o)}`] },
        { ref: refs.pods, keys: (o: KubeObject, type: string) => (type === 'DELETED' ? controllerOwnerKeys(kind)(o).map((k) => `${resource}|${k}`) : []) },
      ];
    }),
    reconcile: (api, key) => {
      const bar = key.indexOf('|');
      const resource = key.slice(0, bar);
      const entry = trainingKinds.find((k) => k.resource === resource)!;
      reconcileJob(api, { group: 'kubeflow.org', resource }, entry.replicaSpecs, key.slice(bar + 1));
    },
  });
}
