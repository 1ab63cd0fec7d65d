// Where ML Metadata lives in Charmed Kubeflow 1.9/1.10: canonical/mlmd-operator runs the MLMD server on SQLite,
// `connection_config: {sqlite: {filename_uri: "file:/data/mlmd.db"}}` (src/charm.py), with `/data` the charm's
// filesystem storage `mlmd-data` (metadata.yaml / charmcraft.yaml). Juju gives a sidecar charm's storage to its
// StatefulSet as a volumeClaimTemplate labelled `storage.juju.is/name: <storage>` and
// `app.kubernetes.io/managed-by: juju` (juju/juju, the Kubernetes provider's application_test.go TestEnsureStateful:
// template `<app>-<storage>-<app uuid>`), and the StatefulSet controller names unit n's claim
// `<template>-<statefulset>-<n>` (kubernetes pkg/controller/statefulset stateful_set_utils.go).
import type { KubeObject } from '../kube/types.ts';
import { PODS, PVCS, type VolumeKube } from '../volumes/kube-port.ts';
import type { SqliteOnClaim } from './jobs.ts';
import { STATEFULSETS } from './quiet.ts';

export const MLMD_APPLICATION = 'mlmd';
export const MLMD_STORAGE = 'mlmd-data';
/** the file inside the storage: mlmd mounts the storage at /data and opens /data/mlmd.db */
export const MLMD_FILE = 'mlmd.db';
const JUJU_STORAGE_LABEL = 'storage.juju.is/name';

export type MlmdLookup = { found: true; target: SqliteOnClaim } | { found: false; reason: string };

interface ClaimTemplate { metadata?: { name?: string; labels?: Record<string, string> } }

/** Finds unit 0's `mlmd-data` claim of the mlmd application in `namespace`. */
export async function findMlmdStorage(kube: VolumeKube, namespace: string, application = MLMD_APPLICATION): Promise<MlmdLookup> {
  const set = await kube.get(STATEFULSETS, namespace, application);
  if (!set) return { found: false, reason: `there is no ${application} StatefulSet in namespace ${namespace}` };
  const templates = ((set.spec as { volumeClaimTemplates?: ClaimTemplate[] } | undefined)?.volumeClaimTemplates ?? []);
  const template = templates.find((t) => t.metadata?.labels?.[JUJU_STORAGE_LABEL] === MLMD_STORAGE);
  if (!template?.metadata?.name) return { found: false, reason: `the ${application} StatefulSet has no Juju storage ${MLMD_STORAGE}` };
  const claim = `${template.metadata.name}-${application}-0`;
  const pvc = await kube.get(PVCS, namespace, claim);
  if (!pvc) return { found: false, reason: `the ${MLMD_STORAGE} claim ${claim} of ${application}/0 does not exist` };
  // A claim not bound to a volume holds no data and would keep the copy Job Pending.
  if ((pvc.status as { phase?: string } | undefined)?.phase !== 'Bound') return { found: false, reason: `the ${MLMD_STORAGE} claim ${claim} is not bound` };
  const pod: KubeObject | undefined = await kube.get(PODS, namespace, `${application}-0`);
  const nodeName = (pod?.spec as { nodeName?: string } | undefined)?.nodeName;
  const owner = ownerOf(pod ?? podTemplateOf(set), template.metadata.name);
  return { found: true, target: { claim, file: MLMD_FILE, ...(nodeName ? { nodeName } : {}), ...(owner ? { owner } : {}) } };
}

interface SecurityContext { runAsUser?: number; runAsGroup?: number }
interface PodLike { spec?: { securityContext?: SecurityContext & { fsGroup?: number }; containers?: { name?: string; volumeMounts?: { name?: string }[]; securityContext?: SecurityContext }[] } }
const MLMD_CONTAINER = 'mlmd-grpc-server';

function podTemplateOf(set: KubeObject): KubeObject | undefined {
  const template = (set.spec as { template?: { spec?: unknown } } | undefined)?.template;
  return template ? ({ apiVersion: 'v1', kind: 'Pod', metadata: {}, spec: template.spec } as KubeObject) : undefined;
}

/**
 * The `uid:gid` the container that mounts the storage runs as, when the Pod says (its container's securityContext over
 * the Pod's, as the kubelet applies them: Kubernetes API reference, SecurityContext runAsUser/runAsGroup); undefined
 * when it does not, as under Pebble, which runs mlmd as the rock's user (then the storage folder's owner tells).
 */
function ownerOf(pod: KubeObject | undefined, volume: string): string | undefined {
  const spec = (pod as PodLike | undefined)?.spec;
  if (!spec) return undefined;
  // Not Juju's `charm` container, which mounts the storage too but runs the charm, not mlmd: the workload container
  // (mlmd-grpc-server in canonical/mlmd-operator) is the one that opens the database.
  const workloads = (spec.containers ?? []).filter((c) => c.name !== 'charm');
  const container = workloads.find((c) => c.name === MLMD_CONTAINER) ?? workloads.find((c) => c.volumeMounts?.some((m) => m.name === volume));
  const uid = container?.securityContext?.runAsUser ?? spec.securityContext?.runAsUser;
  if (uid === undefined || !Number.isInteger(uid)) return undefined;
  const gid = container?.securityContext?.runAsGroup ?? spec.securityContext?.runAsGroup ?? spec.securityContext?.fsGroup ?? uid;
  return `${uid}:${gid}`;
}

/** The "not covered" sentence when ML Metadata's storage cannot be found. */
export function mlmdNotCoveredSentence(reason: string): string {
  return `control plane not covered: ML Metadata (SQLite ${MLMD_FILE} on mlmd's ${MLMD_STORAGE} storage): ${reason}.`;
}
