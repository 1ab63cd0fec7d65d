// One hardened Job for every tool the charm runs in the cluster (the volume movers, the control-plane copies). The
// owner supplies only its containers and their own volumes; the template adds what every such Job must have:
// - no service-account token: the tools talk to S3 and databases, never to the Kubernetes API, and a token mounted
//   next to the store's credentials would only widen what a compromised image could reach;
// - a non-root identity, no privilege escalation, every capability dropped, the runtime's default seccomp profile
//   (the Pod Security Standards' "restricted" profile, kubernetes/pod-security-admission policy/check_*.go);
// - the Istio sidecar opt-out: profile namespaces have injection on, and a sidecar never exits, so the Job would
//   never complete (istio/istio pkg/kube/inject: the `sidecar.istio.io/inject: "false"` annotation on the Pod);
// - one backoff (the tools retry their own requests; a second Pod would repeat a deterministic failure), a deadline,
//   a TTL, and the labels that find every object of a run;
// - the store's CA chain as a file from the run's Secret, named by RCLONE_CA_CERT (rclone's global --ca-cert) in the
//   containers that reach the store.
import type { KubeObject } from '../kube/types.ts';

export const LABEL_MANAGED_BY = 'app.kubernetes.io/managed-by';
export const MANAGED_BY = 'kubeflow-upgrader';
export const LABEL_BACKUP_ID = 'kubeflow-upgrader/backup-id';
export const ISTIO_INJECT = 'sidecar.istio.io/inject';

/** Failed Jobs stay a day for `kubectl logs`; the owners delete successful ones at once. */
export const DEFAULT_JOB_TTL_SECONDS = 24 * 60 * 60;
/** A Job that has not finished in six hours is stuck, not slow. */
export const DEFAULT_JOB_DEADLINE_SECONDS = 6 * 60 * 60;
/** A Pod that is not running after five minutes is not going to start by itself (a pull, a quota, no node). */
export const DEFAULT_START_TIMEOUT_SECONDS = 300;

/** Key of the per-run Secret holding the store's PEM CA chain; mounted as a file because rclone wants a path. */
export const STORE_CA_KEY = 'store-ca.crt';
const STORE_CA_VOLUME = 'store-ca';
export const STORE_CA_DIR = '/etc/kubeflow-upgrader/store-ca';

/** Who the containers run as. `fsGroup` makes a mounted claim's files the group's (kubernetes pkg/volume/volume_linux.go). */
export interface JobIdentity {
  runAsUser: number;
  runAsGroup: number;
  /** left out where the Job mounts a claim whose files must keep their group (the kubelet changes it on mount) */
  fsGroup?: number;
}

/**
 * The volume movers run as the user of Kubeflow's notebook images (jovyan, uid 1000, gid 100: kubeflow/kubeflow
 * components/example-notebook-servers/base/Dockerfile NB_UID/NB_GID) with the notebook controller's fsGroup 100
 * (components/notebook-controller/controllers/notebook_controller.go DefaultFSGroup): the files a notebook wrote are
 * its group's, so a backup can read them and a restore writes files its notebook can change.
 */
export const VOLUME_MOVER_IDENTITY: JobIdentity = { runAsUser: 1000, runAsGroup: 100, fsGroup: 100 };
/** The control-plane copies touch only their own scratch space (and ML Metadata's claim): an unprivileged nobody. */
export const CONTROL_PLANE_IDENTITY: JobIdentity = { runAsUser: 65532, runAsGroup: 65532, fsGroup: 65532 };

export interface Container {
  name: string;
  [field: string]: unknown;
}

export interface HardenedJobInput {
  name: string;
  namespace: string;
  backupId: string;
  /** the owner's labels (component, operation, copy kind), besides managed-by and backup id */
  labels: Record<string, string>;
  /** on the Job and its Pod */
  annotations?: Record<string, string>;
  identity: JobIdentity;
  activeDeadlineSeconds: number;
  ttlSecondsAfterFinished?: number;
  /** run one after another before `containers`, each only if the one before succeeded */
  initContainers?: Container[];
  containers: Container[];
  /** the owner's own volumes (claims, scratch) */
  volumes?: unknown[];
  /** the run's Secret holds STORE_CA_KEY: mount it into these containers and point RCLONE_CA_CERT at it */
  storeCa?: { secretName: string; containers: string[] };
  /** Pod placement (a node affinity or a node name), when the owner needs one */
  placement?: { affinity?: unknown; nodeName?: string };
}

export function hardenedLabels(backupId: string, labels: Record<string, string>): Record<string, string> {
  return { [LABEL_MANAGED_BY]: MANAGED_BY, [LABEL_BACKUP_ID]: backupId, ...labels };
}

function hardenContainer(container: Container, storeCa: HardenedJobInput['storeCa']): Container {
  const securityContext = {
    ...(container.securityContext as Record<string, unknown> | undefined),
    allowPrivilegeEscalation: false,
    runAsNonRoot: true,
    capabilities: { drop: ['ALL'] },
  };
  if (!storeCa?.containers.includes(container.name)) return { ...container, securityContext };
  const env = [...((container.env as unknown[] | undefined) ?? []), { name: 'RCLONE_CA_CERT', value: `${STORE_CA_DIR}/${STORE_CA_KEY}` }];
  const volumeMounts = [...((container.volumeMounts as unknown[] | undefined) ?? []), { name: STORE_CA_VOLUME, mountPath: STORE_CA_DIR, readOnly: true }];
  return { ...container, env, volumeMounts, securityContext };
}

export function buildHardenedJob(input: HardenedJobInput): KubeObject {
  const labels = hardenedLabels(input.backupId, input.labels);
  const storeCa = input.storeCa;
  const volumes = [
    ...(input.volumes ?? []),
    ...(storeCa ? [{ name: STORE_CA_VOLUME, secret: { secretName: storeCa.secretName, items: [{ key: STORE_CA_KEY, path: STORE_CA_KEY }] } }] : []),
  ];
  const podSpec: Record<string, unknown> = {
    restartPolicy: 'Never',
    automountServiceAccountToken: false,
    securityContext: {
      runAsNonRoot: true,
      runAsUser: input.identity.runAsUser,
      runAsGroup: input.identity.runAsGroup,
      ...(input.identity.fsGroup !== undefined ? { fsGroup: input.identity.fsGroup } : {}),
      seccompProfile: { type: 'RuntimeDefault' },
    },
    ...(input.initContainers?.length ? { initContainers: input.initContainers.map((c) => hardenContainer(c, storeCa)) } : {}),
    containers: input.containers.map((c) => hardenContainer(c, storeCa)),
    ...(volumes.length > 0 ? { volumes } : {}),
    ...(input.placement?.affinity ? { affinity: input.placement.affinity } : {}),
    ...(input.placement?.nodeName ? { nodeName: input.placement.nodeName } : {}),
  };
  return {
    apiVersion: 'batch/v1',
    kind: 'Job',
    metadata: { name: input.name, namespace: input.namespace, labels, ...(input.annotations ? { annotations: { ...input.annotations } } : {}) },
    spec: {
      backoffLimit: 0,
      activeDeadlineSeconds: input.activeDeadlineSeconds,
      ttlSecondsAfterFinished: input.ttlSecondsAfterFinished ?? DEFAULT_JOB_TTL_SECONDS,
      template: {
        metadata: { labels, annotations: { [ISTIO_INJECT]: 'false', ...input.annotations } },
        spec: podSpec,
      },
    },
  };
}

/** The run's Secret: `data` (credentials, the CA chain under STORE_CA_KEY) base64-encoded as the API wants. */
export function buildRunSecret(input: { name: string; namespace: string; backupId: string; labels: Record<string, string>; data: Record<string, string>; caChain?: string | undefined }): KubeObject {
  const data: Record<string, string> = {};
  for (const [key, value] of Object.entries(input.data)) data[key] = Buffer.from(value).toString('base64');
  if (input.caChain) data[STORE_CA_KEY] = Buffer.from(input.caChain).toString('base64');
  return {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name: input.name, namespace: input.namespace, labels: hardenedLabels(input.backupId, input.labels) },
    type: 'Opaque',
    data,
  };
}
