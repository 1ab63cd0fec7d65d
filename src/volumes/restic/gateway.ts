// The repository gateway: how a restic backup mover in a profile namespace reaches its namespace's repository without
// ever holding a bucket credential (a restore's movers reach theirs through ./restore-gateway.ts, which redirects each
// read to the bucket instead of passing the bytes through). For the length of one run, a hardened Job in the model's
// namespace (where no profile user can read anything) runs `rclone serve restic` over the bucket's `<path>/restic/`
// folder (rclone/rclone cmd/serve/restic), behind a ClusterIP Service:
// - `--private-repos`: user `<ns>` reaches `/<ns>/` only; anything else answers 403 (measured with Debian's rclone 1.60,
//   ../shared/reference/restic-gateway.md);
// - `--append-only`: nothing stored can be deleted or overwritten through it, restic's own
//   lock files aside (rclone serve restic allows those deletes); prune and the key Job reach the bucket from the model's
//   namespace instead;
// - HTTPS with a certificate made for the run (gateway-credentials.ts), which the movers trust with --cacert, and one
//   user per namespace with a password made for the run, in the htpasswd file only the gateway's Secret holds.
// The movers reach it as `rest:https://<ns>:<password>@<service>.<model namespace>.svc:8443/<ns>/`. The Job, its
// Service, the Pod network and how it starts are every gateway's (../gateway-pod.ts).
import { buildGatewayPod, gatewayHostnames, gatewayName, GATEWAY_DIR, GATEWAY_REMOTE, runGatewayPod, type GatewayObjects, type GatewayRequest, type GatewayServing } from '../gateway-pod.ts';
import { STORE_CA_DIR, STORE_CA_KEY } from '../../jobs/template.ts';
import type { VolumeKube } from '../kube-port.ts';
import { resticRepositoryKey } from './job.ts';
import { htpasswdOf, makeGatewayCertificate, makeGatewayUsers, type GatewayUser } from './gateway-credentials.ts';

export { SERVICES, ENDPOINTS, gatewayName, gatewayHostnames, type GatewayRequest, type GatewayObjects } from '../gateway-pod.ts';

export const GATEWAY_PORT = 8443;
/** The gateway's rclone speaks HTTP/1.1 only (see resticServing). */
export const GATEWAY_HTTP1_ONLY = { name: 'GODEBUG', value: 'http2server=0' } as const;

/** A gateway serving: what each namespace's movers are given, and how it is taken down. */
export interface RunningGateway {
  /** the restic repository URL of a namespace, with that namespace's user and password for this run */
  repository(namespace: string): string;
  /** the PEM the movers pass to restic's --cacert */
  certificate: string;
  /** the movers also trust their image's system roots (they follow redirects to a bucket behind a public CA) */
  systemRoots?: boolean;
  /** every password of the run, for masking */
  secrets: string[];
  /** when the gateway is not waited for before the movers start: settles once it serves, or with why it does not */
  ready?: Promise<void>;
  /** how long a mover retries the gateway's refused connections (default 60 s: it served before the movers started) */
  waitSeconds?: number;
  stop(): Promise<void>;
}

/** The gateway's script: the Pod's IP from the downward API, the bucket's restic folder as an environment-only remote. */
export function gatewayScript(remoteRoot: string, appendOnly: boolean, dir = GATEWAY_DIR): string {
  return `set -eu\n${[
    `exec rclone serve restic "${GATEWAY_REMOTE}:${remoteRoot}" --addr "$POD_IP:${GATEWAY_PORT}"`,
    `  --cert ${dir}/tls.crt --key ${dir}/tls.key --htpasswd ${dir}/htpasswd`,
    `  --private-repos${appendOnly ? ' --append-only' : ''} --cache-dir /tmp/rclone-cache`,
  ].join(' \\\n')}`;
}

function resticServing(request: GatewayRequest, users: readonly GatewayUser[], cert: { certificate: string; privateKey: string }): GatewayServing {
  const remoteRoot = `${request.s3.bucket}/${resticRepositoryKey(request.s3, '')}`.replace(/\/+$/, '');
  return {
    kind: 'restic', port: GATEWAY_PORT, portName: 'restic', script: gatewayScript(remoteRoot, true),
    files: { htpasswd: htpasswdOf(users), 'tls.crt': cert.certificate, 'tls.key': cert.privateKey },
    // HTTP/1.1 only: Go's net/http serves HTTP/2 over TLS unless GODEBUG says http2server=0 (golang/go
    // src/net/http/server.go onceSetNextProtoDefaults). A restore moves every pack through here, and one HTTP/1.1
    // connection per request in flight costs both ends less CPU per byte than HTTP/2's frames over one connection
    // (docs/performance.md, the repository gateway section).
    env: { [GATEWAY_HTTP1_ONLY.name]: GATEWAY_HTTP1_ONLY.value },
  };
}

export function buildGatewayObjects(request: GatewayRequest, users: readonly GatewayUser[], cert: { certificate: string; privateKey: string }): GatewayObjects {
  return buildGatewayPod(request, resticServing(request, users, cert));
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
  const serving = resticServing(request, users, cert);
  const { stop } = await runGatewayPod(kube, request, serving, buildGatewayPod(request, serving), 'repository gateway Job');
  return { ...gatewayUsersAccess(request.runId, users, hosts[0]!, 'repository gateway'), certificate: cert.certificate, stop };
}

/** Each namespace's repository URL at `host` with its user and run password, and every password for masking. */
export function gatewayUsersAccess(runId: string, users: readonly GatewayUser[], host: string, noun: string): Pick<RunningGateway, 'repository' | 'secrets'> {
  const passwords = new Map(users.map((u) => [u.namespace, u.password]));
  return {
    repository(namespace) {
      const password = passwords.get(namespace);
      if (!password) throw new Error(`The ${noun} of run ${runId} has no user for namespace ${namespace}.`);
      return `rest:https://${namespace}:${password}@${host}:${GATEWAY_PORT}/${namespace}/`;
    },
    secrets: [...passwords.values()],
  };
}

/** Where the movers find the gateway's certificate: the store CA path the hardened template mounts (STORE_CA_KEY). */
export const GATEWAY_CA_PATH = `${STORE_CA_DIR}/${STORE_CA_KEY}`;
