// The restore's repository gateway: how a restic mover in a profile namespace reads its namespace's repository without
// a bucket credential and without a second copy of every byte. The backup's gateway (./gateway.ts, `rclone serve
// restic`) passes every pack through itself: a second TLS end and a copy per byte, which on a CPU-bound restore cost
// ~5-6 CPU s per GiB (docs/performance.md). This one, our own (./redirect-gateway/), speaks restic's REST protocol with
// the same users, passwords, certificate and private-repos rule, answers HEAD and listings from S3 and every GET of a
// file with a 307 redirect to a presigned S3 URL of exactly that object, so restic reads the bytes from S3 itself. It
// writes only lock files (the restore's non-exclusive lock: ./job.ts RESTIC_RESTORE_SCRIPT).
// It runs as every gateway does (../gateway-pod.ts): a hardened Job in the model's namespace holding the bucket keys in
// its own Secret, behind a ClusterIP Service, here with the official node image and its code in a ConfigMap.
// The movers follow the redirects to the bucket's endpoint, so they trust its CA as well as the gateway's: both
// certificates are in the one file they pass to restic's --cacert, and where the bucket has no private CA the image's
// system roots are added (restic's --cacert replaces the system roots: restic/restic internal/backend/http_transport.go).
import { NODE_GATEWAY_IMAGE } from '../engine.ts';
import { buildGatewayPod, gatewayHostnames, gatewayName, GATEWAY_CODE_DIR, GATEWAY_DIR, launchGatewayPod, type GatewayObjects, type GatewayRequest, type GatewayServing } from '../gateway-pod.ts';
import { STORE_CA_DIR, STORE_CA_KEY } from '../../jobs/template.ts';
import type { VolumeKube } from '../kube-port.ts';
import { GATEWAY_PORT, gatewayUsersAccess, type RunningGateway } from './gateway.ts';
import { htpasswdOf, makeGatewayCertificate, makeGatewayUsers, type GatewayCertificate, type GatewayUser } from './gateway-credentials.ts';
import { resticRepositoryKey } from './job.ts';
import { RESTORE_GATEWAY_FILE, restoreGatewayBundle } from './restore-gateway-bundle.ts';

/** How long a presigned URL is valid: restic follows it at once, and a load it retries asks the gateway again. */
export const PRESIGN_SECONDS = 300;

export function restoreServing(request: GatewayRequest, users: readonly GatewayUser[], cert: GatewayCertificate, bundle: string): GatewayServing {
  const s3 = request.s3;
  return {
    kind: 'restic-restore', port: GATEWAY_PORT, portName: 'restic', script: '',
    // its movers start beside it and retry its refused connections (./job.ts gateway_refused): a probe would only delay them
    probeReadiness: false,
    image: request.restoreImage || NODE_GATEWAY_IMAGE,
    command: ['node', `${GATEWAY_CODE_DIR}/${RESTORE_GATEWAY_FILE}`],
    code: { [RESTORE_GATEWAY_FILE]: bundle },
    files: { htpasswd: htpasswdOf(users), 'tls.crt': cert.certificate, 'tls.key': cert.privateKey },
    // the bucket's keys as the gateway reads them (./redirect-gateway/main.ts), from its own Secret only
    remote: {
      secret: { AWS_ACCESS_KEY_ID: s3.accessKey, AWS_SECRET_ACCESS_KEY: s3.secretKey },
      plain: {
        GATEWAY_S3_ENDPOINT: s3.endpoint, GATEWAY_S3_BUCKET: s3.bucket, GATEWAY_S3_REGION: s3.region ?? '',
        GATEWAY_S3_PATH_STYLE: String(s3.uriStyle !== 'host'),
      },
    },
    env: {
      GATEWAY_DIR, GATEWAY_PORT: String(GATEWAY_PORT), GATEWAY_ROOT: resticRepositoryKey(s3, '').replace(/\/+$/, ''),
      GATEWAY_PRESIGN_SECONDS: String(PRESIGN_SECONDS),
      ...(s3.tlsCaChain ? { GATEWAY_S3_CA_FILE: `${STORE_CA_DIR}/${STORE_CA_KEY}` } : {}),
    },
  };
}

export function buildRestoreGatewayObjects(request: GatewayRequest, users: readonly GatewayUser[], cert: GatewayCertificate, bundle: string): GatewayObjects {
  return buildGatewayPod(request, restoreServing(request, users, cert, bundle));
}

/** What a mover passes to --cacert: the gateway's certificate, then the bucket's private CA when it has one. */
export function moverTrust(gatewayCertificate: string, s3: GatewayRequest['s3']): string {
  return s3.tlsCaChain ? `${gatewayCertificate.trimEnd()}\n${s3.tlsCaChain.trimEnd()}\n` : gatewayCertificate;
}

/**
 * Makes the run's restore gateway and returns without waiting for it to serve: the movers' Pods start meanwhile (a
 * Pod's start here and the gateway's are about a second each, docs/performance.md), and each mover retries the
 * gateway's refused connections (./job.ts gateway_refused: kube-proxy REJECTs a Service without a ready endpoint,
 * kubernetes pkg/proxy/iptables/proxier.go) for as long as the gateway may take to start. `ready` says when it serves,
 * or rejects with the Pod's reason.
 */
export async function startRestoreGateway(kube: VolumeKube, request: GatewayRequest): Promise<RunningGateway> {
  const name = gatewayName(request.runId, request.operation, 'restic-restore');
  const users = makeGatewayUsers(request.namespaces);
  const hosts = gatewayHostnames(name, request.namespace);
  const [cert, bundle] = await Promise.all([
    makeGatewayCertificate(hosts, Math.ceil(request.activeDeadlineSeconds / 3600) + 1),
    restoreGatewayBundle(),
  ]);
  const serving = restoreServing(request, users, cert, bundle);
  // a Pod that cannot pull the image names the setting that gave it, or the pinned image a mirror must hold
  const setting = request.restoreImage && request.restoreImageSetting;
  const pinned = { ...request, remedies: { ...request.remedies, imageSetting: () => setting || `the nodes' registry mirror of ${NODE_GATEWAY_IMAGE} (or restore-gateway-image)` } };
  const { stop, ready } = await launchGatewayPod(kube, pinned, serving, buildGatewayPod(request, serving), 'restore gateway Job');
  ready.catch(() => undefined);
  return {
    ...gatewayUsersAccess(request.runId, users, hosts[0]!, 'restore gateway'),
    certificate: moverTrust(cert.certificate, request.s3),
    systemRoots: !request.s3.tlsCaChain && request.s3.endpoint.startsWith('https:'),
    ready,
    // its Pod's start, then its readiness, as launchGatewayPod waits for them
    waitSeconds: request.startTimeoutSeconds + 60,
    stop,
  };
}
