// The fields of Jobs and Pods the simulated components read, and the small helpers they share.
// Upstream: kubernetes/kubernetes staging/src/k8s.io/api/batch/v1/types.go (JobSpec) and
// staging/src/k8s.io/api/core/v1/types.go (PodSpec, NodeAffinity); only the fields the simulation honours are typed.
import type { KubeObject } from '../../../src/kube/types.ts';
import type { ContainerSpec } from './container.ts';

export interface JobSpec {
  backoffLimit?: number;
  activeDeadlineSeconds?: number;
  ttlSecondsAfterFinished?: number;
  template?: { metadata?: { labels?: Record<string, string>; annotations?: Record<string, string> }; spec?: Record<string, unknown> };
}

export interface PodSpec {
  nodeName?: string;
  nodeSelector?: Record<string, string>;
  affinity?: { nodeAffinity?: { requiredDuringSchedulingIgnoredDuringExecution?: { nodeSelectorTerms?: { matchFields?: { key: string; values?: string[] }[]; matchExpressions?: { key: string; values?: string[] }[] }[] } } };
  initContainers?: ContainerSpec[];
  containers?: ContainerSpec[];
  volumes?: { persistentVolumeClaim?: { claimName: string } }[];
}

/** `<namespace>/<name>`, the key a controller's work queue uses (client-go tools/cache MetaNamespaceKeyFunc). */
export const key = (namespace: string | undefined, name: string | undefined) => `${namespace ?? ''}/${name ?? ''}`;
export const now = () => new Date().toISOString();
/** The object without its resourceVersion: a status write that replaces whatever is current. */
export const fresh = (object: KubeObject): KubeObject => ({ ...object, metadata: { ...object.metadata, resourceVersion: undefined } });

/** A Job with a true Complete or Failed condition (kubernetes/kubernetes pkg/controller/job/util/utils.go, IsJobFinished). */
export function isFinishedJob(job: KubeObject): boolean {
  const conditions = ((job.status as { conditions?: { type: string; status: string }[] } | undefined)?.conditions ?? []);
  return conditions.some((c) => (c.type === 'Complete' || c.type === 'Failed') && c.status === 'True');
}
