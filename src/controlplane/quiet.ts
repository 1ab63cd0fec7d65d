// A restore loads dumps and rewrites buckets under the workloads that write them. mysql-k8s's own restore guide
// stops new connections first and Canonical's CKF control-plane guide stops pipelines and experiments: so before any
// write, every workload that writes a part being restored must have no ready replicas, no pipeline run may have a pod
// still running, and no Katib trial may still run; a refusal names each one with the command that stops it.
import type { KubeObject } from '../kube/types.ts';
import { PODS, type MoverResource, type VolumeKube } from '../volumes/kube-port.ts';

export const STATEFULSETS: MoverResource = { group: 'apps', version: 'v1', resource: 'statefulsets', kind: 'StatefulSet' };
export const DEPLOYMENTS: MoverResource = { group: 'apps', version: 'v1', resource: 'deployments', kind: 'Deployment' };

export type QuietPart = 'kfp-db' | 'katib-db' | 'minio' | 'mlmd';

/**
 * Who writes each part, by the name of its workload in Charmed Kubeflow (the sidecar charm's application, one
 * StatefulSet each: canonical/kfp-operators charms/kfp-api — the only KFP charm related to the database, and one of
 * several related to MinIO (kfp-ui, kfp-profile-controller and argo-controller are too, but only read it or hand its
 * keys to the pipeline pods) — kfp-persistence and kfp-schedwf, which drive it; canonical/katib-operators
 * charms/katib-db-manager) and upstream (kubeflow/pipelines and kubeflow/katib manifests: ml-pipeline,
 * ml-pipeline-persistenceagent, ml-pipeline-scheduledworkflow, katib-db-manager Deployments). The pipeline runs and
 * the Katib trials in the profile namespaces write too: see busyRuns.
 */
const KFP_WRITERS = ['kfp-api', 'kfp-persistence', 'kfp-schedwf', 'ml-pipeline', 'ml-pipeline-persistenceagent', 'ml-pipeline-scheduledworkflow'];
export const WRITERS: Record<QuietPart, readonly string[]> = {
  'kfp-db': KFP_WRITERS,
  minio: KFP_WRITERS,
  'katib-db': ['katib-db-manager'],
  // ML Metadata: the mlmd charm's own server owns the SQLite file (canonical/mlmd-operator), kfp-metadata-writer
  // writes through it; upstream: metadata-grpc-deployment and metadata-writer.
  mlmd: ['mlmd', 'kfp-metadata-writer', 'metadata-grpc-deployment', 'metadata-writer'],
};

export interface BusyWorkload {
  /** a controller's workload, an Argo Workflow (a pipeline run) with running pods, or a Katib Experiment with running trials */
  kind: 'StatefulSet' | 'Deployment' | 'Workflow' | 'Experiment';
  name: string;
  namespace: string;
  /** ready replicas of a StatefulSet or Deployment; running (or pending) pods of a Workflow or an Experiment's trials */
  ready: number;
  /** the command that stops it: Juju's for an application's StatefulSet, kubectl's otherwise */
  stop: string;
}

function readyReplicas(object: KubeObject): number {
  const ready = (object.status as { readyReplicas?: number } | undefined)?.readyReplicas;
  return typeof ready === 'number' ? ready : 0;
}

function stopCommand(kind: BusyWorkload['kind'], object: KubeObject): string {
  const name = object.metadata.name!;
  // A sidecar charm's StatefulSet carries its application's scale, which Juju manages: scale it through Juju.
  if (kind === 'StatefulSet' && object.metadata.labels?.['app.kubernetes.io/managed-by'] === 'juju') return `juju scale-application ${name} 0`;
  return `kubectl -n ${object.metadata.namespace} scale ${kind.toLowerCase()} ${name} --replicas=0`;
}

/** The writers of `parts` in `namespace` that still have ready replicas. */
export async function busyWriters(kube: VolumeKube, namespace: string, parts: Iterable<QuietPart>): Promise<BusyWorkload[]> {
  const names = [...new Set([...parts].flatMap((part) => WRITERS[part]))];
  const busy: BusyWorkload[] = [];
  for (const name of names) {
    for (const [resource, kind] of [[STATEFULSETS, 'StatefulSet'], [DEPLOYMENTS, 'Deployment']] as const) {
      const object = await kube.get(resource, namespace, name);
      if (object && readyReplicas(object) > 0) busy.push({ kind, name, namespace, ready: readyReplicas(object), stop: stopCommand(kind, object) });
    }
  }
  return busy;
}

/**
 * Pods of pipeline runs and Katib trials, in any namespace (they run in the profile namespaces). Argo labels every
 * pod of a Workflow `workflows.argoproj.io/workflow: <workflow>` (argoproj/argo-workflows workflow/common/common.go
 * LabelKeyWorkflow); KFP v2's driver and launcher in those pods write MLMD and the artifacts in MinIO, and the run's
 * state reaches the KFP database. Katib puts `katib.kubeflow.org/trial` and `katib.kubeflow.org/experiment` on every
 * trial pod (kubeflow/katib pkg/controller.v1beta1/consts/const.go LabelTrialName, LabelExperimentName;
 * pkg/controller.v1beta1/util InjectLabelsToPodTemplate); its metrics collector reports through katib-db-manager.
 */
const WORKFLOW_LABEL = 'workflows.argoproj.io/workflow';
const TRIAL_LABEL = 'katib.kubeflow.org/trial';
const EXPERIMENT_LABEL = 'katib.kubeflow.org/experiment';
const RUN_PARTS: Record<'Workflow' | 'Experiment', readonly QuietPart[]> = { Workflow: ['kfp-db', 'minio', 'mlmd'], Experiment: ['katib-db'] };

/** A pod that has not finished: Pending (about to run) or Running (Kubernetes PodPhase). */
function unfinished(pod: KubeObject): boolean {
  const phase = (pod.status as { phase?: string } | undefined)?.phase;
  return phase === 'Pending' || phase === 'Running';
}

/**
 * The commands that stop each: a Workflow stops on `spec.shutdown: Stop` (what `argo stop` sets: argoproj/argo-workflows
 * pkg/apis/workflow/v1alpha1 ShutdownStrategy), and KFP shows the run as stopped; Katib has no way to pause an
 * Experiment, so its trials are waited for or the Experiment deleted.
 */
function stopRun(kind: 'Workflow' | 'Experiment', namespace: string, name: string): string {
  return kind === 'Workflow'
    ? `kubectl -n ${namespace} patch workflow ${name} --type merge -p '{"spec":{"shutdown":"Stop"}}', or wait for the run to end`
    : `wait for its trials to end (kubectl -n ${namespace} get trials -l ${EXPERIMENT_LABEL}=${name}), or kubectl -n ${namespace} delete experiment ${name}`;
}

/** The pipeline runs and Katib experiments with unfinished pods that write one of `parts`. */
export async function busyRuns(kube: VolumeKube, parts: Iterable<QuietPart>): Promise<BusyWorkload[]> {
  const wanted = new Set(parts);
  const busy: BusyWorkload[] = [];
  for (const [kind, label, owner] of [['Workflow', WORKFLOW_LABEL, WORKFLOW_LABEL], ['Experiment', TRIAL_LABEL, EXPERIMENT_LABEL]] as const) {
    if (!RUN_PARTS[kind].some((part) => wanted.has(part))) continue;
    const counts = new Map<string, { namespace: string; name: string; pods: number }>();
    for (const pod of await kube.list(PODS, '', label)) {
      const name = pod.metadata.labels?.[owner];
      if (!name || !unfinished(pod)) continue;
      const namespace = pod.metadata.namespace ?? '';
      const key = `${namespace}/${name}`;
      const entry = counts.get(key) ?? { namespace, name, pods: 0 };
      entry.pods++;
      counts.set(key, entry);
    }
    for (const { namespace, name, pods } of [...counts.values()].sort((a, b) => `${a.namespace}/${a.name}`.localeCompare(`${b.namespace}/${b.name}`))) {
      busy.push({ kind, name, namespace, ready: pods, stop: stopRun(kind, namespace, name) });
    }
  }
  return busy;
}

function busyText(w: BusyWorkload): string {
  if (w.kind === 'Workflow') return `pipeline run (Workflow) ${w.namespace}/${w.name} has ${w.ready} pod(s) running (stop it: ${w.stop})`;
  if (w.kind === 'Experiment') return `Katib Experiment ${w.namespace}/${w.name} has ${w.ready} trial pod(s) running (${w.stop})`;
  return `${w.kind} ${w.namespace}/${w.name} has ${w.ready} ready replica(s) (stop it: ${w.stop})`;
}

/** One sentence: what is running and how to stop each. */
export function notQuietSentence(busy: BusyWorkload[]): string {
  const each = busy.map(busyText).join('; ');
  const scaled = busy.some((w) => w.kind === 'StatefulSet' || w.kind === 'Deployment');
  return `Restore refused before any write: the control plane is not quiet: ${each}.${scaled ? ' Scale them back up after the restore.' : ''}`;
}
