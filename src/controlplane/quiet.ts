// A restore loads dumps and rewrites buckets under the workloads that write them. mysql-k8s's own restore guide
// stops new connections first and Canonical's CKF control-plane guide stops pipelines and experiments: so before any
// write, every workload that writes a part being restored must have no ready replicas, and a refusal names each one
// with the command that stops it.
import type { KubeObject } from '../kube/types.ts';
import type { MoverResource, VolumeKube } from '../volumes/kube-port.ts';

export const STATEFULSETS: MoverResource = { group: 'apps', version: 'v1', resource: 'statefulsets', kind: 'StatefulSet' };
export const DEPLOYMENTS: MoverResource = { group: 'apps', version: 'v1', resource: 'deployments', kind: 'Deployment' };

export type QuietPart = 'kfp-db' | 'katib-db' | 'minio' | 'mlmd';

/**
 * Who writes each part, by the name of its workload in Charmed Kubeflow (the sidecar charm's application, one
 * StatefulSet each: canonical/kfp-operators charms/kfp-api — the only KFP charm related to the database and to
 * MinIO — kfp-persistence and kfp-schedwf, which drive it; canonical/katib-operators charms/katib-db-manager) and
 * upstream (kubeflow/pipelines and kubeflow/katib manifests: ml-pipeline, ml-pipeline-persistenceagent,
 * ml-pipeline-scheduledworkflow, katib-db-manager Deployments).
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
  kind: 'StatefulSet' | 'Deployment';
  name: string;
  namespace: string;
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

/** One sentence: what is running and how to stop each. */
export function notQuietSentence(busy: BusyWorkload[]): string {
  const each = busy.map((w) => `${w.kind} ${w.namespace}/${w.name} has ${w.ready} ready replica(s) (stop it: ${w.stop})`).join('; ');
  return `Restore refused before any write: the control plane is not quiet: ${each}. Scale them back up after the restore.`;
}
