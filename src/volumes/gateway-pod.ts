// What every gateway of a run is made of, whichever protocol it serves (restic's REST API in restic/gateway.ts, SFTP
// over the plain-file folders in files-gateway.ts): a hardened Job in the model's namespace (where no profile user can
// read anything) holding the bucket credentials in its own Secret, behind a ClusterIP Service that sends the movers only
// to a ready Pod, started for one run and removed with it.
// - Neither end has an Istio sidecar (label and annotation `sidecar.istio.io/inject: "false"`), so in Charmed Kubeflow,
//   which installs no PeerAuthentication and no NetworkPolicy, nothing stands in the way (../shared/reference/ckf-istio.md,
//   section 5).
// - The server binds the Pod's own IP (the downward API's status.podIP), which a real Pod network gives each Pod.
// - The Service's endpoint is the sign the gateway serves: the Endpoints controller lists the Pod once its readiness
//   probe (a TCP connect) passes (kubernetes pkg/kubelet/prober, pkg/controller/endpoint).
import { createHash } from 'node:crypto';
import type { KubeObject } from '../kube/types.ts';
import { buildHardenedJob, buildRunSecret, CONTROL_PLANE_IDENTITY, ISTIO_INJECT } from '../jobs/template.ts';
import { storeRemote, type RemoteEnvironment } from '../jobs/rclone-remote.ts';
import { waitUntilStarted } from '../jobs/watch.ts';
import type { StartRemedies } from '../jobs/start-watch.ts';
import { JOBS, SECRETS, type MoverResource, type VolumeKube } from './kube-port.ts';
import { moverLabels, type MoveOperation } from './labels.ts';
import { containerResources, type ResourceList } from './resources.ts';
import type { MoverS3Settings } from './settings.ts';

export const SERVICES: MoverResource = { group: '', version: 'v1', resource: 'services', kind: 'Service' };
export const CONFIGMAPS: MoverResource = { group: '', version: 'v1', resource: 'configmaps', kind: 'ConfigMap' };
export const ENDPOINTS: MoverResource = { group: '', version: 'v1', resource: 'endpoints', kind: 'Endpoints' };

/** Where the gateway's own files (its Secret's items) are mounted in its container. */
export const GATEWAY_DIR = '/etc/kubeflow-upgrader/gateway';
/** Where a gateway's code (its ConfigMap's items) is mounted, when it brings its own. */
export const GATEWAY_CODE_DIR = '/etc/kubeflow-upgrader/gateway-code';
/** The bucket as an rclone remote inside the gateway, from environment variables only (src/jobs/rclone-remote.ts). */
export const GATEWAY_REMOTE = 'kfustore';
const GATEWAY_CONTAINER = 'gateway';
const LABEL_GATEWAY = 'kubeflow-upgrader/gateway';

/** How a run asks for a gateway, whichever it serves. */
export interface GatewayRequest {
  /** the backup's id: names and labels the run's objects, as it does the movers' */
  runId: string;
  operation: MoveOperation;
  /** the model's namespace (the CLI: --job-namespace), where no profile user can read */
  namespace: string;
  /** the profile namespaces the run reaches */
  namespaces: readonly string[];
  s3: MoverS3Settings;
  /** an image with rclone: the control-plane copies' */
  image: string;
  /** a restic restore's gateway image (../engine.ts NODE_GATEWAY_IMAGE when none) and the setting that names it */
  restoreImage?: string | undefined;
  restoreImageSetting?: string | undefined;
  /** the run's deadline: the gateway stops serving with it at the latest */
  activeDeadlineSeconds: number;
  startTimeoutSeconds: number;
  resources?: ResourceList | undefined;
  remedies: StartRemedies;
  signal?: AbortSignal | undefined;
}

/** What one gateway serves: its script, its port, the files only it reads. */
export interface GatewayServing {
  /** names the gateway apart from the run's other one (a restore may fill restic and plain-file volumes in turn) */
  kind: 'restic' | 'files' | 'restic-restore';
  port: number;
  portName: string;
  /** `sh -c` script of the container; it finds `files` under GATEWAY_DIR and the bucket as GATEWAY_REMOTE */
  script: string;
  /** the Secret's items besides the bucket credentials, mounted read-only under GATEWAY_DIR */
  files: Record<string, string>;
  /** plain environment of the container */
  env?: Record<string, string>;
  /** how long the gateway may take, once running, to serve (it may copy before it serves); default the start timeout + 60 s */
  readyTimeoutMs?: number;
  /** the image, when not the request's (rclone's) */
  image?: string;
  /** the container's command, when not `sh -c script` */
  command?: string[];
  /** the bucket's settings and keys as the container reads them; default the rclone remote GATEWAY_REMOTE */
  remote?: RemoteEnvironment;
  /** the gateway's own code, not secret: a ConfigMap's items, mounted read-only under GATEWAY_CODE_DIR */
  code?: Record<string, string>;
  /**
   * false: no readiness probe, so the Pod is ready once its container runs. For a gateway whose clients already retry
   * its refused connections four times a second: a probe runs at most once a second (kubernetes
   * pkg/kubelet/prober/worker.go, the first at the container's start, before the server listens), so it held them about
   * a second after the gateway served. Default true.
   */
  probeReadiness?: boolean;
}

export interface GatewayObjects {
  secret: KubeObject;
  job: KubeObject;
  service: KubeObject;
  /** the gateway's code, when it brings its own (GatewayServing.code) */
  configMap?: KubeObject;
}

const shortHash = (text: string) => createHash('sha256').update(text).digest('hex').slice(0, 12);

export function gatewayName(runId: string, operation: MoveOperation, kind: GatewayServing['kind'] = 'restic'): string {
  // the restic gateway's name predates the plain-file one: it keeps it, so a rerun still finds what a dead run left
  return `kfu-gateway-${shortHash(kind === 'restic' ? `${operation}/${runId}` : `${kind}/${operation}/${runId}`)}`;
}

/** The names a certificate covers: every way a Pod's resolver completes the Service's name (search domains). */
export function gatewayHostnames(name: string, namespace: string): string[] {
  return [`${name}.${namespace}.svc`, `${name}.${namespace}.svc.cluster.local`, `${name}.${namespace}`];
}

export function buildGatewayPod(request: GatewayRequest, serving: GatewayServing): GatewayObjects {
  const name = gatewayName(request.runId, request.operation, serving.kind);
  const remote = serving.remote ?? storeRemote(GATEWAY_REMOTE, request.s3);
  // the movers' labels, so that prune removes what a killed run left (src/prune/movers.ts), and its own for the Service
  const labels = { ...moverLabels(request.runId, request.operation), [LABEL_GATEWAY]: name };
  const secret = buildRunSecret({
    name, namespace: request.namespace, backupId: request.runId, labels,
    data: { ...remote.secret, ...serving.files },
    caChain: request.s3.tlsCaChain,
  });
  const job = buildHardenedJob({
    name, namespace: request.namespace, backupId: request.runId, labels,
    annotations: { [ISTIO_INJECT]: 'false' },
    identity: CONTROL_PLANE_IDENTITY,
    activeDeadlineSeconds: request.activeDeadlineSeconds,
    volumes: [
      { name: 'tmp', emptyDir: {} },
      { name: 'gateway', secret: { secretName: name, items: Object.keys(serving.files).map((key) => ({ key, path: key })) } },
      ...(serving.code ? [{ name: 'gateway-code', configMap: { name, items: Object.keys(serving.code).map((key) => ({ key, path: key })) } }] : []),
    ],
    containers: [{
      name: GATEWAY_CONTAINER,
      image: serving.image ?? request.image,
      command: serving.command ?? ['sh', '-c', serving.script],
      env: [
        ...Object.keys(remote.secret).map((key) => ({ name: key, valueFrom: { secretKeyRef: { name, key } } })),
        ...Object.entries({ ...remote.plain, ...serving.env, HOME: '/tmp' }).map(([key, value]) => ({ name: key, value })),
        { name: 'POD_IP', valueFrom: { fieldRef: { fieldPath: 'status.podIP' } } },
      ],
      ports: [{ name: serving.portName, containerPort: serving.port, protocol: 'TCP' }],
      // Ready once it accepts connections: the Service sends movers only to a ready Pod (kubernetes pkg/kubelet/prober)
      ...(serving.probeReadiness === false ? {} : { readinessProbe: { tcpSocket: { port: serving.port }, periodSeconds: 1 } }),
      volumeMounts: [
        { name: 'tmp', mountPath: '/tmp' }, { name: 'gateway', mountPath: GATEWAY_DIR, readOnly: true },
        ...(serving.code ? [{ name: 'gateway-code', mountPath: GATEWAY_CODE_DIR, readOnly: true }] : []),
      ],
      resources: containerResources(request.resources),
    }],
    ...(request.s3.tlsCaChain ? { storeCa: { secretName: name, containers: [GATEWAY_CONTAINER] } } : {}),
  });
  // the Pod also carries the opt-out as a label, the form Istio prefers (../shared/reference/ckf-istio.md, section 1)
  const template = (job.spec as { template: { metadata: { labels: Record<string, string> } } }).template;
  template.metadata.labels = { ...template.metadata.labels, [ISTIO_INJECT]: 'false' };
  const service: KubeObject = {
    apiVersion: 'v1', kind: 'Service',
    metadata: { name, namespace: request.namespace, labels: { ...labels } },
    spec: { type: 'ClusterIP', selector: { [LABEL_GATEWAY]: name }, ports: [{ name: serving.portName, port: serving.port, targetPort: serving.portName, protocol: 'TCP' }] },
  };
  const configMap: KubeObject | undefined = serving.code
    ? { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: request.namespace, labels: { ...labels } }, data: { ...serving.code } }
    : undefined;
  return { secret, job, service, ...(configMap ? { configMap } : {}) };
}

/** Whether an Endpoints object lists a ready address (kubernetes pkg/controller/endpoint). */
function hasReadyAddress(endpoints: KubeObject | undefined): boolean {
  const subsets = (endpoints as { subsets?: { addresses?: unknown[] }[] } | undefined)?.subsets ?? [];
  return subsets.some((s) => (s.addresses?.length ?? 0) > 0);
}

/** A gateway serving: the host the movers reach it at, and how it is taken down. */
export interface ServingGateway {
  host: string;
  stop(): Promise<void>;
}

/** A gateway whose objects are made: `ready` settles once its Service has a ready endpoint, or with why it has none. */
export interface LaunchedGateway extends ServingGateway {
  ready: Promise<void>;
}

/**
 * Makes a gateway's objects (a dead run's gateway of the same name goes first) and returns without waiting for it to
 * serve: `ready` resolves once its Service has a ready endpoint, and rejects with one sentence (the Pod's reason) when
 * it does not start within the start timeout. Whoever launches it stops it, whatever `ready` says.
 */
export async function launchGatewayPod(kube: VolumeKube, request: GatewayRequest, serving: GatewayServing, objects: GatewayObjects, noun: string): Promise<LaunchedGateway> {
  const name = gatewayName(request.runId, request.operation, serving.kind);
  const stop = async () => {
    await kube.delete(SERVICES, request.namespace, name).catch(() => undefined);
    await kube.delete(JOBS, request.namespace, name).catch(() => undefined);
    await kube.delete(SECRETS, request.namespace, name).catch(() => undefined);
    if (serving.code) await kube.delete(CONFIGMAPS, request.namespace, name).catch(() => undefined);
  };
  const signal = request.signal ? { signal: request.signal } : {};
  // A dead run's gateway of the same backup goes first: its users and keys are not this run's.
  await stop();
  await kube.waitFor(JOBS, request.namespace, name, (o) => o === undefined, { timeoutMs: 120_000, ...signal });
  try {
    await kube.create(SECRETS, objects.secret);
    if (objects.configMap) await kube.create(CONFIGMAPS, objects.configMap);
    await kube.create(SERVICES, objects.service);
    await kube.create(JOBS, objects.job);
  } catch (error) {
    await stop();
    throw error;
  }
  const endpoint = kube.waitFor(ENDPOINTS, request.namespace, name, hasReadyAddress, {
    timeoutMs: serving.readyTimeoutMs ?? request.startTimeoutSeconds * 1000 + 60_000, ...signal,
  });
  endpoint.catch(() => undefined);
  const ready = waitUntilStarted(kube, request.namespace, name, request.startTimeoutSeconds, endpoint, request.remedies, noun).then(() => endpoint).then(() => undefined);
  return { host: gatewayHostnames(name, request.namespace)[0]!, stop, ready };
}

/**
 * Starts a gateway and resolves once its Service has a ready endpoint; throws one sentence (the Pod's reason) when it
 * does not start within the start timeout, having removed what it made. `noun` names it in that sentence.
 */
export async function runGatewayPod(kube: VolumeKube, request: GatewayRequest, serving: GatewayServing, objects: GatewayObjects, noun: string): Promise<ServingGateway> {
  const { host, stop, ready } = await launchGatewayPod(kube, request, serving, objects, noun);
  try {
    await ready;
  } catch (error) {
    await stop();
    throw error;
  }
  return { host, stop };
}
