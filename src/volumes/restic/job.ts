// The restic mover: one Job per PVC in the hardened template (src/jobs/template.ts), running the official restic image
// against the profile namespace's repository in the backup bucket (`<prefix>/restic/<namespace>`, like Velero's
// `<prefix>/restic/<namespace>`). What it depends on in restic 0.14 (restic/restic at v0.14.0):
// - `init` writes repository format version 2 by default (internal/restic/config.go StableRepoVersion = 2), the
//   version whose packs are compressed (`--compression`, cmd/restic/global.go); 0.13 and older cannot read it.
// - `backup --json` prints status lines (message_type "status": files_done, total_files, bytes_done, total_bytes) and
//   one summary (files_new, files_changed, files_unmodified, data_added, total_bytes_processed, snapshot_id as the
//   short id), internal/ui/backup/json.go; RESTIC_PROGRESS_FPS sets how often (cmd/restic/progress.go).
// - A backup takes a non-exclusive lock, so several movers write one repository at once; a lock is stale after 30
//   minutes, or sooner when its process on the same host is gone (internal/restic/lock.go Stale), and `unlock` removes
//   only stale locks unless told --remove-all (cmd/restic/cmd_unlock.go). A killed mover's lock therefore never blocks
//   another backup or a restore; the next prune, which needs the repository to itself, removes it once stale.
// - Every blob restic reads is decrypted and its MAC checked (internal/repository), so `restore` of a pinned snapshot
//   id writes only what the repository's key holder stored.
import type { KubeObject } from '../../kube/types.ts';
import { buildRunSecret, STORE_CA_DIR, STORE_CA_KEY } from '../../jobs/template.ts';
import { normalizePrefix } from '../../store/layout.ts';
import { moverLabels, type MoveOperation } from '../labels.ts';
import type { ResourceList } from '../resources.ts';
import type { MoverS3Settings } from '../settings.ts';
import { buildVolumeMoverJob, TERMINATION_LOG, VOLUME_MOUNT_PATH } from '../job.ts';

/** `<prefix>/restic/<namespace>`: the key prefix of a profile namespace's repository in the backup bucket. */
export function resticRepositoryKey(s3: Pick<MoverS3Settings, 'path'>, namespace: string): string {
  return [normalizePrefix(s3.path), 'restic', namespace].filter((part) => part !== '').join('/');
}

/** restic's S3 location: `s3:<endpoint>/<bucket>/<key>` (restic internal/backend/s3/config.go ParseConfig). */
export function resticRepositoryUrl(s3: MoverS3Settings, namespace: string): string {
  return `s3:${s3.endpoint.replace(/\/+$/, '')}/${s3.bucket}/${resticRepositoryKey(s3, namespace)}`;
}

/** Tags that tie a snapshot to its backup, namespace and PVC (restic tags are free text; a comma separates tags). */
export function snapshotTags(backupId: string, namespace: string, pvc: string): string[] {
  return [`kfu-backup=${backupId}`, `kfu-namespace=${namespace}`, `kfu-pvc=${pvc}`];
}

/** The restic image's system roots: Alpine's ca-certificates (restic/restic docker/Dockerfile installs it). */
export const SYSTEM_ROOTS = '/etc/ssl/certs/ca-certificates.crt';

const log = '"$log"';
/**
 * Every restic Job's start (the movers', and prune's: src/volumes/restic/prune.ts): the log and error files, and
 * restic's options for the bucket. Every restic command opens the
 * repository, which runs the key's scrypt KDF (about 0.7 s of CPU with the parameters `init` calibrates, measured in
 * docs/performance.md), and every command that locks lists and loads all other lock files. restic 0.14 retries loading
 * a lock file that another process has just removed ten times, about 44 s in all (restic/restic internal/backend/
 * backend_retry.go, issue #1523, fixed in 0.17), so a mover runs as few commands as it can and takes a lock only where
 * the repository must not change under it: metadata reads (`cat config`, `list`) run with --no-lock.
 */
export const RESTIC_SCRIPT_START = [
  'set -eu',
  'log=/tmp/mover.log',
  'err=/tmp/mover.err',
  ': > "$log"',
  ': > "$err"',
  'tail -f "$log" &',
  'follower=$!',
  'trap \'kill "$follower" 2>/dev/null || true\' EXIT',
  'fail() { cat "$err" >&2; exit 1; }',
  'set -- -o "s3.bucket-lookup=$MOVER_BUCKET_LOOKUP"',
  'if [ -n "${MOVER_STORAGE_CLASS:-}" ]; then set -- "$@" -o "s3.storage-class=$MOVER_STORAGE_CLASS"; fi',
  `if [ -f "${STORE_CA_DIR}/${STORE_CA_KEY}" ]; then set -- "$@" --cacert "${STORE_CA_DIR}/${STORE_CA_KEY}"; fi`,
  // restic's --cacert replaces the system roots (restic internal/backend/http_transport.go) and may be given again: the
  // system's roots file as Go finds it, SSL_CERT_FILE first (golang/go src/crypto/x509/root_unix.go)
  `if [ -n "\${MOVER_SYSTEM_ROOTS:-}" ]; then roots="\${SSL_CERT_FILE:-${SYSTEM_ROOTS}}"; [ ! -f "$roots" ] || set -- "$@" --cacert "$roots"; fi`,
  // `locking restic ARGS`: runs a command that loads the other lock files (unlock, backup, restore), output to the log.
  // When restic starts its ~44 s of retries on a lock file that is gone (its "Load(<lock/...>) ... retrying" warning,
  // printed while it checks the other locks, before it reads or writes any data), the mover interrupts it (SIGINT:
  // restic removes the locks it registered, restic cmd/restic/cleanup.go) and runs it again, at most three times.
  // Through the gateway (MOVER_VIA_GATEWAY), its Service may still refuse connections for a moment after its endpoint
  // is ready: kube-proxy programs the rule a sync later (kubernetes pkg/proxy/iptables/proxier.go, a port without
  // endpoints is REJECTed until then; --iptables-min-sync-period, 1 s by default). restic 0.14 gives up on the first
  // refused request, so a command that failed only that way runs again, four times a second (a refused connect costs
  // restic only its start, and a restore's movers would otherwise begin up to a second after its gateway serves), for
  // at most MOVER_GATEWAY_WAIT_SECONDS: a minute by default; a restore's, whose gateway starts beside its movers
  // (./restore-gateway.ts), as long as that gateway may take to start. A proxy that accepts a connection before its
  // backend listens (kube-proxy's userspace relay, pkg/proxy/userspace/proxier.go) resets it instead: a reset of the
  // first request, the repository's config, is the same not-yet-serving gateway and is retried alike.
  'refused=0',
  'gateway_refused() {',
  '  [ -n "${MOVER_VIA_GATEWAY:-}" ] && [ "$refused" -lt $((${MOVER_GATEWAY_WAIT_SECONDS:-60} * 4)) ] && tail -n "+$1" "$err" | grep -qE "connect: connection refused|unable to open config file: .*connection reset by peer" || return 1',
  '  refused=$((refused + 1))',
  '  sleep 0.25',
  '}',
  'locking() {',
  '  tries=0',
  '  while :; do',
  '    rm -f /tmp/restic.pid /tmp/restic.status',
  '    from=$(($(wc -l < "$err") + 1))',
  '    ( "$@" >> "$log" 2>> "$err" & echo $! > /tmp/restic.pid; st=0; wait $! || st=$?; echo "$st" > /tmp/restic.status ) &',
  '    vanished=',
  '    while [ ! -s /tmp/restic.status ]; do',
  '      sleep 0.1',
  '      if [ -z "$vanished" ] && [ "$tries" -lt 3 ] && [ -s /tmp/restic.pid ] && tail -n "+$from" "$err" | grep -q "^Load(<lock/"; then',
  '        vanished=1',
  '        kill -INT "$(cat /tmp/restic.pid)" 2>/dev/null || true',
  '      fi',
  '    done',
  '    status=$(cat /tmp/restic.status)',
  '    if [ "$status" -ne 0 ] && gateway_refused "$from"; then continue; fi',
  '    [ -n "$vanished" ] || return "$status"',
  '    tries=$((tries + 1))',
  '  done',
  '}',
];
/** The one file of an empty volume's snapshot (a name no restore writes): see RESTIC_BACKUP_SCRIPT. */
export const EMPTY_VOLUME_MARKER = '.kubeflow-upgrader-empty-volume';

/**
 * The backup, one restic command in the common case: every command opens the repository (the key's scrypt KDF, and a
 * cache that starts empty in every Pod), so the backup runs first and the mover looks at why only when it fails:
 * - no repository: restic fails before it takes a lock or reads a file, with "unable to open config file: ... Is there
 *   a repository at the following location?" (restic cmd/restic/global.go open: it stats the config first). The mover
 *   runs `init` and the backup again. A mover racing it loses `init` (on S3 "repository master key and config already
 *   initialized", internal/repository/repository.go Init; "config file already exists" from the local and sftp
 *   backends) and runs the backup again too; any other `init` failure is the mover's.
 * - an exclusive lock (a prune's, live or left by a killed one): restic's "repository is already locked exclusively"
 *   (internal/restic/lock.go alreadyLockedError; a backup's own lock is non-exclusive and waits for no other). `unlock`
 *   removes only stale locks (cmd/restic/cmd_unlock.go), so a live prune still stops the retried backup, with restic's
 *   words; a stale one is gone and the backup goes on. A killed mover's non-exclusive lock never stops a backup: the
 *   next prune removes it (src/volumes/restic/prune.ts runs `unlock` first).
 * - anything else (a wrong password: "wrong password or no key found") fails the mover with restic's sentence.
 * The summary names the snapshot by its short id only (restic internal/ui/backup/json.go Finish: snapshotID.Str());
 * the product turns it into the full id from the bucket's listing after the Job (src/volumes/restic/snapshot-id.ts),
 * where another restic command would open the repository once more.
 */
export const RESTIC_BACKUP_SCRIPT = [
  ...RESTIC_SCRIPT_START,
  // From inside the volume, the snapshot's root is the volume's root (restic archiver: a relative target "." has no
  // path components), so a restore writes the files at the PVC's root again.
  `cd "${VOLUME_MOUNT_PATH}"`,
  // restic 0.14 refuses to save a snapshot of an empty tree ("snapshot is empty", restic/restic internal/archiver/
  // archiver.go), so an empty volume is saved as one empty marker file (made in the scratch /tmp; `--stdin` of no bytes
  // fails the same way), which every restore leaves out.
  'what=.',
  `if [ -z "$(ls -A)" ]; then mkdir -p /tmp/empty-volume && : > /tmp/empty-volume/${EMPTY_VOLUME_MARKER} && cd /tmp/empty-volume && what=${EMPTY_VOLUME_MARKER}; fi`,
  'backup() { locking restic "$@" backup --json --host kubeflow-upgrader --tag "$MOVER_TAGS" ${MOVER_PARENT:+--parent "$MOVER_PARENT"} $what; }',
  'if ! backup "$@"; then',
  '  if grep -q "Is there a repository at the following location" "$err"; then',
  '    if ! restic "$@" init > /dev/null 2>> "$err"; then grep -q -e "config already initialized" -e "config file already exists" "$err" || fail; fi',
  '  elif grep -q "is already locked" "$err"; then',
  '    locking restic "$@" unlock || fail',
  '  else',
  '    fail',
  '  fi',
  '  : > "$err"',
  '  backup "$@" || fail',
  'fi',
  'summary=$(grep \'"message_type":"summary"\' "$log" | tail -n 1)',
  '[ -n "$summary" ] || fail',
  'empty=false',
  'if [ "$what" != . ]; then empty=true; fi',
  `printf '{"volumeMover":"restic","summary":%s,"empty":%s}' "$summary" "$empty" > ${TERMINATION_LOG}`,
].join('\n');

/**
 * The restore, one restic command in the common case. The size it reports is the backup's (files and bytes restic
 * counted then, kept in the authenticated manifest), not `restic stats`, which would open the repository once more.
 */
export const RESTIC_RESTORE_SCRIPT = [
  ...RESTIC_SCRIPT_START,
  // A restore never creates the repository: a missing one fails with restic's own sentence.
  // The restore holds a non-exclusive lock, so a prune cannot remove packs under it. Only an exclusive lock stops it:
  // a live one (a prune running) fails the mover; a stale one (a killed prune) is removed and the restore runs again.
  `if ! locking restic "$@" restore "$MOVER_SNAPSHOT" --exclude "/${EMPTY_VOLUME_MARKER}" --target "${VOLUME_MOUNT_PATH}"; then`,
  '  grep -q "is already locked" "$err" || fail',
  '  locking restic "$@" unlock || fail',
  '  : > "$err"',
  `  locking restic "$@" restore "$MOVER_SNAPSHOT" --exclude "/${EMPTY_VOLUME_MARKER}" --target "${VOLUME_MOUNT_PATH}" || fail`,
  'fi',
  `printf '{"volumeMover":"restic","restored":"%s"}' "$MOVER_SNAPSHOT" > ${TERMINATION_LOG}`,
].join('\n');

/**
 * How a mover reaches its namespace's repository through the run's gateway (gateway.ts): the repository URL with that
 * namespace's user and run password, and the certificate restic trusts with --cacert. No bucket credential.
 */
export interface GatewayAccess {
  repository: string;
  certificate: string;
  /** restic also trusts the image's system roots (the restore gateway redirects to a bucket behind a public CA) */
  systemRoots?: boolean | undefined;
  /** how long the mover retries the gateway's refused connections, in seconds (default 60) */
  waitSeconds?: number | undefined;
}

export interface ResticSecretInput {
  name: string;
  namespace: string;
  backupId: string;
  operation: MoveOperation;
  s3: MoverS3Settings;
  password: string;
  /** through the run's gateway: then the Secret holds no bucket credential */
  gateway?: GatewayAccess | undefined;
}

/**
 * The run's Secret: the repository password and how to reach the repository: through the gateway (its URL with the run's
 * user and password, its certificate), or (Jobs of the model's namespace only) the bucket credentials and its CA chain.
 */
export function buildResticSecret(input: ResticSecretInput): KubeObject {
  const labels = moverLabels(input.backupId, input.operation);
  if (input.gateway) {
    return buildRunSecret({
      name: input.name, namespace: input.namespace, backupId: input.backupId, labels,
      data: { RESTIC_REPOSITORY: input.gateway.repository, RESTIC_PASSWORD: input.password }, caChain: input.gateway.certificate,
    });
  }
  return buildRunSecret({
    name: input.name, namespace: input.namespace, backupId: input.backupId, labels,
    data: { AWS_ACCESS_KEY_ID: input.s3.accessKey, AWS_SECRET_ACCESS_KEY: input.s3.secretKey, RESTIC_PASSWORD: input.password },
    caChain: input.s3.tlsCaChain,
  });
}

export interface ResticJobInput {
  name: string;
  namespace: string;
  pvc: string;
  /** a claim of the model's namespace the Job mounts instead of the PVC (../job.ts MoverJobInput) */
  mount?: { namespace: string; claim: string } | undefined;
  backupId: string;
  operation: MoveOperation;
  image: string;
  secretName: string;
  s3: MoverS3Settings;
  nodeAffinity?: unknown;
  activeDeadlineSeconds: number;
  ttlSecondsAfterFinished: number;
  resources?: ResourceList | undefined;
  /** backup: the PVC's newest snapshot, which restic compares against (size, mtime, ctime, inode) */
  parent?: string | undefined;
  /** restore: the snapshot the authenticated manifest pins */
  snapshot?: string | undefined;
  /** restic's status lines per second (RESTIC_PROGRESS_FPS) */
  progressFps?: number;
  /** through the run's gateway (the Secret then holds the repository URL and the gateway's certificate) */
  gateway?: GatewayAccess | undefined;
}

/**
 * What every restic Job's container gets: the run Secret's keys, and the namespace's repository with restic's settings.
 * Through the gateway the repository's URL comes from the Secret (it holds the run's password), and there are no
 * bucket keys to give.
 */
export function resticRepositoryEnv(s3: MoverS3Settings, namespace: string, secretName: string, viaGateway = false): unknown[] {
  const secretEnv = (viaGateway ? ['RESTIC_REPOSITORY', 'RESTIC_PASSWORD'] : ['AWS_ACCESS_KEY_ID', 'AWS_SECRET_ACCESS_KEY', 'RESTIC_PASSWORD'])
    .map((key) => ({ name: key, valueFrom: { secretKeyRef: { name: secretName, key } } }));
  const plainEnv = Object.entries({
    ...(viaGateway ? {} : { RESTIC_REPOSITORY: resticRepositoryUrl(s3, namespace) }),
    RESTIC_CACHE_DIR: '/tmp/restic-cache',
    HOME: '/tmp',
    MOVER_BUCKET_LOOKUP: s3.uriStyle === 'host' ? 'dns' : 'path',
    ...(s3.region ? { AWS_DEFAULT_REGION: s3.region } : {}),
    ...(s3.storageClass ? { MOVER_STORAGE_CLASS: s3.storageClass } : {}),
  }).map(([name, value]) => ({ name, value }));
  return [...secretEnv, ...plainEnv];
}

export function buildResticJob(input: ResticJobInput): KubeObject {
  const backup = input.operation === 'backup';
  const plainEnv = Object.entries({
    // With --json and no FPS, restic prints 60 status lines a second (cmd/restic/progress.go); one per stats period.
    RESTIC_PROGRESS_FPS: String(input.progressFps ?? 0.1),
    ...(backup ? { MOVER_TAGS: snapshotTags(input.backupId, input.namespace, input.pvc).join(',') } : {}),
    ...(backup && input.parent ? { MOVER_PARENT: input.parent } : {}),
    ...(!backup && input.snapshot ? { MOVER_SNAPSHOT: input.snapshot } : {}),
    ...(input.gateway ? { MOVER_VIA_GATEWAY: '1' } : {}),
    ...(input.gateway?.systemRoots ? { MOVER_SYSTEM_ROOTS: '1' } : {}),
    ...(input.gateway?.waitSeconds ? { MOVER_GATEWAY_WAIT_SECONDS: String(input.gateway.waitSeconds) } : {}),
  }).map(([name, value]) => ({ name, value }));
  const env = [...resticRepositoryEnv(input.s3, input.namespace, input.secretName, input.gateway !== undefined), ...plainEnv];
  // through the gateway its certificate is the one the Secret carries as the store's CA: mounted, restic gets --cacert
  const s3 = input.gateway ? { ...input.s3, tlsCaChain: input.gateway.certificate } : input.s3;
  return buildVolumeMoverJob({ ...input, s3 }, backup ? RESTIC_BACKUP_SCRIPT : RESTIC_RESTORE_SCRIPT, env, input.nodeAffinity);
}
