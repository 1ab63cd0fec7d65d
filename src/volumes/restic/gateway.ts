// The repository gateway: how a restic mover in a profile namespace reaches its namespace's repository without ever
// holding a bucket credential. For the length of one run, a hardened Job in the model's namespace (where no profile user
// can read anything) runs `rclone serve restic` over the bucket's `<path>/restic/` folder (rclone/rclone
// cmd/serve/restic), behind a ClusterIP Service:
// - `--private-repos`: user `<ns>` reaches `/<ns>/` only; anything else answers 403 (measured with Debian's rclone 1.60,
//   ../shared/reference/restic-gateway.md);
// - `--append-only` for backups and restores: nothing stored can be deleted or overwritten through it, restic's own
//   lock files aside (rclone serve restic allows those deletes); prune and the key Job reach the bucket from the model's
//   namespace instead;
// - HTTPS with a certificate made for the run (gateway-credentials.ts), which the movers trust with --cacert, and one
//   user per namespace with a password made for the run, in the htpasswd file only the gateway's Secret holds.
// The movers reach it as `rest:https://<ns>:<password>@<service>.<model namespace>.svc:8443/<ns>/`. Neither end has an
// Istio sidecar (label and annotation `sidecar.istio.io/inject: "false"`), so in Charmed Kubeflow, which installs no
// PeerAuthentication and no NetworkPolicy, nothing stands in the way (../shared/reference/ckf-istio.md, section 5).
// The gateway binds the Pod's own IP (the downward API's status.podIP), which a real Pod network gives each Pod.
import { createHash } from 'node:crypto';
import type { KubeObject } from '../../kube/types.ts';
import { buildHardenedJob, buildRunSecret, CONTROL_PLANE_IDENTITY, ISTIO_INJECT, STORE_CA_DIR, STORE_CA_KEY } from '../../jobs/template.ts';
import { storeRemote } from '../../jobs/rclone-remote.ts';
import { waitUntilStarted } from '../../jobs/watch.ts';
import type { StartRemedies } from '../../jobs/start-watch.ts';
import { JOBS, SECRETS, type MoverResource, type VolumeKube } from '../kube-port.ts';
import { moverLabels } from '../labels.ts';
import type { MoveOperation } from '../labels.ts';
import { containerResources, type ResourceList } from '../resources.ts';
import type { MoverS3Settings } from '../settings.ts';
import { resticRepositoryKey } from './job.ts';
import { htpasswdOf, makeGatewayCertificate, makeGatewayUsers, type GatewayUser } from './gateway-credentials.ts';

export const SERVICES: MoverResource = { group: '', version: 'v1', resource: 'services', kind: 'Service' };
export const ENDPOINTS: MoverResource = { group: '', version: 'v1', resource: 'endpoints', kind: 'Endpoints' };

export const GATEWAY_PORT = 8443;
/** The gateway's rclone speaks HTTP/1.1 only (see buildGatewayObjects). */
export const GATEWAY_HTTP1_ONLY = { name: 'GODEBUG', value: 'http2server=0' } as const;
const GATEWAY_CONTAINER = 'gateway';
const GATEWAY_DIR = '/etc/kubeflow-upgrader/gateway';
const LABEL_GATEWAY = 'kubeflow-upgrader/gateway';
const REMOTE = 'kfustore';

export interface GatewayRequest {
  /** the backup's id: names and labels the run's objects, as it does the movers' */
  runId: string;
  operation: MoveOperation;
  /** the model's namespace (the CLI: --job-namespace), where no profile user can read */
  namespace: string;
  /** the profile namespaces whose repositories the run reaches */
  namespaces: readonly string[];
  s3: MoverS3Settings;
  /** an image with rclone: the control-plane copies' */
  image: string;
  /** the run's deadline: the gateway stops serving with it at the latest */
  activeDeadlineSeconds: number;
  startTimeoutSeconds: number;
  resources?: ResourceList | undefined;
  remedies: StartRemedies;
  signal?: AbortSignal | undefined;
}

/** A gateway serving: what each namespace's movers are given, and how it is taken down. */
export interface RunningGateway {
  /** the restic repository URL of a namespace, with that namespace's user and password for this run */
  repository(namespace: string): string;
  /** the PEM the movers pass to restic's --cacert */
  certificate: string;
  /** every password of the run, for masking */
  secrets: string[];
  stop(): Promise<void>;
}

const shortHash = (text: string) => createHash('sha256').update(text).digest('hex').slice(0, 12);

export function gatewayName(runId: string, operation: MoveOperation): string {
  return `kfu-gateway-${shortHash(`${operation}/${runId}`)}`;
}

/** The names the certificate covers: every way a Pod's resolver completes the Service's name (search domains). */
export function gatewayHostnames(name: string, namespace: string): string[] {
  return [`${name}.${namespace}.svc`, `${name}.${namespace}.svc.cluster.local`, `${name}.${namespace}`];
}

/** The gateway's script: the Pod's IP from the downward API, the bucket's restic folder as an environment-only remote. */
export function gatewayScript(remoteRoot: string, appendOnly: boolean, dir = GATEWAY_DIR): string {
  return `set -eu\n${[
    `exec rclone serve restic "${REMOTE}:${remoteRoot}" --addr "$POD_IP:${GATEWAY_PORT}"`,
    `  --cert ${dir}/tls.crt --key ${dir}/tls.key --htpasswd ${dir}/htpasswd`,
    `  --private-repos${appendOnly ? ' --append-only' : ''} --cache-dir /tmp/rclone-cache`,
  ].join(' \\\n')}`;
}

export interface GatewayObjects {
  secret: KubeObject;
  job: KubeObject;
  service: KubeObject;
}

export function buildGatewayObjects(request: GatewayRequest, users: readonly GatewayUser[], cert: { certificate: string; privateKey: string }): GatewayObjects {
  const name = gatewayName(request.runId, request.operation);
  const remote = storeRemote(REMOTE, request.s3);
  // the movers' labels, so that prune removes what a killed run left (src/prune/movers.ts), and its own for the Service
  const labels = { ...moverLabels(request.runId, request.operation), [LABEL_GATEWAY]: name };
  const secret = buildRunSecret({
    name, namespace: request.namespace, backupId: request.runId, labels,
    data: { ...remote.secret, htpasswd: htpasswdOf(users), 'tls.crt': cert.certificate, 'tls.key': cert.privateKey },
    caChain: request.s3.tlsCaChain,
  });
  const remoteRoot = `${request.s3.bucket}/${resticRepositoryKey(request.s3, '')}`.replace(/\/+$/, '');
  const job = buildHardenedJob({
    name, namespace: request.namespace, backupId: request.runId, labels,
    annotations: { [ISTIO_INJECT]: 'false' },
    identity: CONTROL_PLANE_IDENTITY,
    activeDeadlineSeconds: request.activeDeadlineSeconds,
    volumes: [
      { name: 'tmp', emptyDir: {} },
      { name: 'gateway', secret: { secretName: name, items: ['htpasswd', 'tls.crt', 'tls.key'].map((key) => ({ key, path: key })) } },
    ],
    containers: [{
      name: GATEWAY_CONTAINER,
      image: request.image,
      command: ['sh', '-c', gatewayScript(remoteRoot, true)],
      env: [
        ...Object.keys(remote.secret).map((key) => ({ name: key, valueFrom: { secretKeyRef: { name, key } } })),
        ...Object.entries({ ...remote.plain, HOME: '/tmp' }).map(([key, value]) => ({ name: key, value })),
        { name: 'POD_IP', valueFrom: { fieldRef: { fieldPath: 'status.podIP' } } },
        // HTTP/1.1 only: Go's net/http serves HTTP/2 over TLS unless GODEBUG says http2server=0 (golang/go
        // src/net/http/server.go onceSetNextProtoDefaults). A restore moves every pack through here, and one HTTP/1.1
        // connection per request in flight costs both ends less CPU per byte than HTTP/2's frames over one connection
        // (docs/performance.md, the repository gateway section).
        GATEWAY_HTTP1_ONLY,
      ],
      ports: [{ name: 'restic', containerPort: GATEWAY_PORT, protocol: 'TCP' }],
      // Ready once it accepts connections: the Service sends movers only to a ready Pod (kubernetes pkg/kubelet/prober)
      readinessProbe: { tcpSocket: { port: GATEWAY_PORT }, periodSeconds: 1 },
      volumeMounts: [{ name: 'tmp', mountPath: '/tmp' }, { name: 'gateway', mountPath: GATEWAY_DIR, readOnly: true }],
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
    spec: { type: 'ClusterIP', selector: { [LABEL_GATEWAY]: name }, ports: [{ name: 'restic', port: GATEWAY_PORT, targetPort: 'restic', protocol: 'TCP' }] },
  };
  return { secret, job, service };
}

/** Whether an Endpoints object lists a ready address for the gateway's port (kubernetes pkg/controller/endpoint). */
function hasReadyAddress(endpoints: KubeObject | undefined): boolean {
  const subsets = (endpoints as { subsets?: { addresses?: unknown[] }[] } | undefined)?.subsets ?? [];
  return subsets.some((s) => (s.addresses?.length ?? 0) > 0);
}

/**
 * Starts the run's gateway and resolves once its Service has a ready endpoint; throws one sentence (the Pod's reason)
 * when it does not start within the start timeout, having removed what it made.
 */
export async function startGateway(kube: VolumeKube, request: GatewayRequest): Promise<RunningGateway> {
  const name = gatewayName(request.runId, request.operation);
  const users = makeGatewayUsers(request.namespaces);
  const hosts = gatewayHostnames(name, request.namespace);
  const cert = await makeGatewayCertificate(hosts, Math.ceil(request.activeDeadlineSeconds / 3600) + 1);
  const objects = buildGatewayObjects(request, users, cert);
  const stop = async () => {
    await kube.delete(SERVICES, request.namespace, name).catch(() => undefined);
    await kube.delete(JOBS, request.namespace, name).catch(() => undefined);
    await kube.delete(SECRETS, request.namespace, name).catch(() => undefined);
  };
  // A dead run's gateway of the same backup goes first: its users and certificate are not this run's.
  await stop();
  await kube.waitFor(JOBS, request.namespace, name, (o) => o === undefined, { timeoutMs: 120_000, ...(request.signal ? { signal: request.signal } : {}) });
  try {
    await kube.create(SECRETS, objects.secret);
    await kube.create(SERVICES, objects.service);
    await kube.create(JOBS, objects.job);
    const ready = kube.waitFor(ENDPOINTS, request.namespace, name, hasReadyAddress, {
      timeoutMs: request.startTimeoutSeconds * 1000 + 60_000, ...(request.signal ? { signal: request.signal } : {}),
    });
    ready.catch(() => undefined);
    await waitUntilStarted(kube, request.namespace, name, request.startTimeoutSeconds, ready, request.remedies, 'repository gateway Job');
    await ready;
  } catch (error) {
    await stop();
    throw error;
  }
  const passwords = new Map(users.map((u) => [u.namespace, u.password]));
  return {
    repository(namespace) {
      const password = passwords.get(namespace);
      if (!password) throw new Error(`The repository gateway of run ${request.runId} has no user for namespace ${namespace}.`);
      return `rest:https://${namespace}:${password}@${hosts[0]}:${GATEWAY_PORT}/${namespace}/`;
    },
    certificate: cert.certificate,
    secrets: [...passwords.values()],
    stop,
  };
}

/** Where the movers find the gateway's certificate: the store CA path the hardened template mounts (STORE_CA_KEY). */
export const GATEWAY_CA_PATH = `${STORE_CA_DIR}/${STORE_CA_KEY}`;
