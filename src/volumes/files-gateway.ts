// The plain-file gateway: how an rclone mover in a profile namespace copies its volume to and from the bucket without
// ever holding a bucket credential, the plain-file counterpart of the restic repository gateway (restic/gateway.ts).
// For the length of one run, `rclone serve sftp` in the model's namespace (./gateway-pod.ts) serves one folder per
// namespace: `backups/<id>/volumes/<ns>/` of the run's backup, and nothing else.
// - Who is who: rclone asks an auth proxy for each login (rclone/rclone cmd/serve/proxy: the program reads the user and
//   password as JSON on stdin, indented, and prints the config of the backend that user gets). Ours answers only a
//   user named after a namespace of the run, with that namespace's password made for the run, and gives it an alias of
//   its own folder as the root: `..` and `/` stay inside it (measured with Debian's rclone 1.60: a listing of `..` shows
//   the user's own folder, another namespace's folder is "directory not found").
// - A restore's gateway is `--read-only`: its movers can read their folder and change nothing. A backup's movers write
//   only into the new backup's folder of their namespace: what earlier backups stored is outside their root, so they
//   can neither read nor delete it. The unchanged files of an earlier backup of a PVC (src/volumes/reuse.ts) are copied
//   inside the bucket by the gateway itself before it serves, where the mover used to copy them.
// - The movers check the server by its host key, made for the run and pinned in their known_hosts
//   (`[*]:<port> ssh-ed25519 …`, golang.org/x/crypto/ssh/knownhosts: a wildcard host with the port, as rclone's sftp
//   backend checks `[host]:port`); a wrong key is refused ("knownhosts: key mismatch", measured).
// - Hashes: rclone's sftp backend asks the server to run `md5sum`, which `rclone serve sftp` answers from the backend
//   (cmd/serve/sftp/connection.go), so `--checksum` still compares every file by MD5, the S3 object's own.
import { generateKeyPairSync } from 'node:crypto';
import { buildGatewayPod, GATEWAY_DIR, GATEWAY_REMOTE, runGatewayPod, type GatewayObjects, type GatewayRequest, type GatewayServing } from './gateway-pod.ts';
import type { VolumeKube } from './kube-port.ts';
import { makeGatewayUsers, type GatewayUser } from './restic/gateway-credentials.ts';
import { remotePath } from './settings.ts';
import { backupKeys } from '../store/layout.ts';

export const FILES_GATEWAY_PORT = 8022;

/** An earlier backup's copy of a PVC, copied inside the bucket into the run's folder before the gateway serves. */
export interface SeedCopy {
  namespace: string;
  pvc: string;
  /** the earlier backup's id */
  from: string;
}

export interface FilesGatewayRequest extends GatewayRequest {
  /** backup only: the copies the gateway makes before it serves */
  seeds?: readonly SeedCopy[];
}

/** What a namespace's movers are given: where the server is, who they are, and the key the server must show. */
export interface FilesAccess {
  host: string;
  port: number;
  user: string;
  password: string;
  /** the known_hosts line pinning the run's host key */
  knownHosts: string;
}

export interface RunningFilesGateway {
  access(namespace: string): FilesAccess;
  /** every password of the run, for masking */
  secrets: string[];
  stop(): Promise<void>;
}

/** The run's host key: ed25519, the private key as PKCS#8 PEM (golang.org/x/crypto/ssh ParseRawPrivateKey reads it). */
export function makeHostKey(): { privateKey: string; knownHosts: string } {
  const { privateKey, publicKey } = generateKeyPairSync('ed25519');
  const raw = Buffer.from(publicKey.export({ format: 'jwk' }).x!, 'base64url');
  // the SSH wire form: string "ssh-ed25519", string <32-byte key> (RFC 8709 section 4)
  const string = (b: Buffer) => Buffer.concat([Buffer.from([0, 0, 0, b.length]), b]);
  const wire = Buffer.concat([string(Buffer.from('ssh-ed25519')), string(raw)]);
  return {
    privateKey: privateKey.export({ format: 'pem', type: 'pkcs8' }).toString(),
    knownHosts: `[*]:${FILES_GATEWAY_PORT} ssh-ed25519 ${wire.toString('base64')}`,
  };
}

/**
 * The auth proxy (rclone cmd/serve/proxy): the login's user and password from rclone's indented JSON; a user that is
 * not a DNS label, or a password that is not the run's hex, is no login at all. The answer is an alias of the user's
 * own folder under GATEWAY_ROOT (the bucket remote), the users and their passwords in GATEWAY_USERS (both from the
 * gateway's environment, which rclone passes on to the program).
 */
export const AUTH_PROXY = [
  '#!/bin/sh',
  'input=$(cat)',
  'field() { printf \'%s\\n\' "$input" | sed -n "s/^[[:space:]]*\\"$1\\": \\"\\([a-z0-9-]*\\)\\",\\{0,1\\}\\$/\\1/p"; }',
  'user=$(field user)',
  'pass=$(field pass)',
  '[ -n "$user" ] && [ -n "$pass" ] || exit 1',
  'want=$(sed -n "s/^$user \\([0-9a-f]*\\)\\$/\\1/p" "$GATEWAY_USERS")',
  '[ -n "$want" ] && [ "$want" = "$pass" ] || exit 1',
  // `_root`, which rclone requires, is the path inside the backend: the alias's own root is the whole answer
  'printf \'{"type":"alias","remote":"%s/%s","_root":""}\' "$GATEWAY_ROOT" "$user"',
  '',
].join('\n');

/** The gateway's script: first the seed copies (inside the bucket; one that fails only costs uploads), then the server. */
export function filesGatewayScript(readOnly: boolean, dir = GATEWAY_DIR): string {
  return [
    'set -eu',
    `while read -r from to; do`,
    `  rclone copy --checksum --transfers 32 "${GATEWAY_REMOTE}:$from" "${GATEWAY_REMOTE}:$to" || echo "the copy of $from was not made; its files are uploaded instead" >&2`,
    `done < ${dir}/seeds`,
    `exec rclone serve sftp --addr "$POD_IP:${FILES_GATEWAY_PORT}" --key ${dir}/host.key --auth-proxy "sh ${dir}/auth-proxy"${readOnly ? ' --read-only' : ''} --cache-dir /tmp/rclone-cache`,
  ].join('\n');
}

function filesServing(request: FilesGatewayRequest, users: readonly GatewayUser[], hostKey: string): GatewayServing {
  const folder = (id: string) => remotePath(request.s3, backupKeys(id).volumesFolder);
  const seeds = (request.seeds ?? []).map((s) => `${folder(s.from)}/${s.namespace}/${s.pvc} ${folder(request.runId)}/${s.namespace}/${s.pvc}\n`).join('');
  const root = JSON.stringify(`${GATEWAY_REMOTE}:${folder(request.runId)}`).slice(1, -1);
  return {
    kind: 'files', port: FILES_GATEWAY_PORT, portName: 'sftp', script: filesGatewayScript(request.operation === 'restore'),
    files: { users: users.map((u) => `${u.namespace} ${u.password}\n`).join(''), 'host.key': hostKey, 'auth-proxy': AUTH_PROXY, seeds },
    env: { GATEWAY_ROOT: root, GATEWAY_USERS: `${GATEWAY_DIR}/users` },
    // the seed copies come first: as long as the run may last
    ...(seeds ? { readyTimeoutMs: request.activeDeadlineSeconds * 1000 } : {}),
  };
}

export function buildFilesGatewayObjects(request: FilesGatewayRequest, users: readonly GatewayUser[], hostKey: string): GatewayObjects {
  return buildGatewayPod(request, filesServing(request, users, hostKey));
}

export async function startFilesGateway(kube: VolumeKube, request: FilesGatewayRequest): Promise<RunningFilesGateway> {
  const users = makeGatewayUsers(request.namespaces);
  const key = makeHostKey();
  const serving = filesServing(request, users, key.privateKey);
  const { host, stop } = await runGatewayPod(kube, request, serving, buildGatewayPod(request, serving), 'plain-file gateway Job');
  const passwords = new Map(users.map((u) => [u.namespace, u.password]));
  return {
    access(namespace) {
      const password = passwords.get(namespace);
      if (!password) throw new Error(`The plain-file gateway of run ${request.runId} has no user for namespace ${namespace}.`);
      return { host, port: FILES_GATEWAY_PORT, user: namespace, password, knownHosts: key.knownHosts };
    },
    secrets: [...passwords.values()],
    stop,
  };
}
