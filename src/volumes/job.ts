// Builders for the plain-file engine's per-run credentials Secret and rclone mover Job, and the hardened volume mover
// Job every engine's mover is (buildVolumeMoverJob). Pure functions: the engine and the orchestration decide when.
import type { KubeObject } from '../kube/types.ts';
import { buildHardenedJob, buildRunSecret, VOLUME_MOVER_IDENTITY } from '../jobs/template.ts';
import { ANNOTATION_PVC, moverLabels, type MoveOperation } from './labels.ts';
import { REMOTE_NAME, rcloneBehaviourEnv, rcloneRemoteEnv } from './rclone-env.ts';
import { containerResources, type ResourceList } from './resources.ts';
import type { MoverS3Settings } from './settings.ts';
import type { FilesAccess } from './files-gateway.ts';

export const MOVER_CONTAINER = 'mover';
export const VOLUME_MOUNT_PATH = '/volume';
export const TERMINATION_LOG = '/dev/termination-log';

/**
 * One script for both directions, one pass over the data: `--checksum` compares files already on the other side by
 * hash, and rclone verifies every transferred file's hash against what the other side stored, so the copy is the
 * checksum check. Its final stats line (JSON log) becomes the termination message, which the kubelet turns into
 * terminated.message; on failure the log goes to stderr, where FallbackToLogsOnError picks up rclone's last error.
 * While it runs, the log file is followed onto stdout, so its stats lines (every 10 s) reach the Pod's log, where the
 * mover reads the progress. (A separate `rclone check` + `rclone size` pass would add a large share of the copy's
 * time again, docs/performance.md.)
 *
 * A backup with an earlier copy of the PVC (MOVER_COPY_DEST) first copies that copy inside the bucket, then syncs the
 * volume onto it: files equal in size and MD5 stay as copied, changed and new ones are uploaded, gone ones deleted.
 * Not `--copy-dest`: rclone looks a file up there only when the new location lacks it, from its march's SrcOnly
 * callback, which runs one file after another within a directory (rclone/rclone fs/march/march.go processJob,
 * fs/sync/sync.go SrcOnly, the same from 1.60 to 1.75), three requests in a row per file; a flat folder of many files
 * then took far longer than uploading it. A bucket-to-bucket copy runs on `--transfers` (CopyObject and a HEAD per
 * file), and the sync compares each file with the listing's ETag on `--checkers`, sending nothing for an equal one.
 * The finished tree's size (`rclone size`, one listing) tells reused bytes from uploaded ones: whatever the sync did
 * not upload was copied inside the bucket.
 */
/** The `rclone copy` flags of the mover (with rcloneBehaviourEnv()); the bench's direct copy uses the same ones. */
export const MOVER_COPY_FLAGS = ['--checksum', '--use-json-log', '--stats', '10s', '--stats-log-level', 'NOTICE'] as const;

/**
 * Copies in flight while an earlier backup's copy is copied inside the bucket. Each is a request and a wait for the S3
 * service, no bytes through the node, so more run at once than uploads (RCLONE_TRANSFERS); the S3 service's own limits
 * (AWS: thousands of writes per second per prefix) are far above, and rclone backs off on SlowDown.
 */
export const REUSE_COPY_TRANSFERS = 32;

/** rclone logs its stats three times per progress interval, so each reading finds a line at most a third as old. */
export function statsPeriodSeconds(progressIntervalMs: number): number {
  return Math.max(1, Math.round(progressIntervalMs / 3000));
}

/** `rclone <verb> <flags> <from> <to>`, its log onto the followed file; a failure puts the log on stderr and ends the script. */
const rcloneStep = (verb: string, from: string, to: string) => [
  `if ! rclone ${verb} ${MOVER_COPY_FLAGS.join(' ')} --stats "\${MOVER_STATS_PERIOD:-10s}" "${from}" "${to}" 2>>"$log"; then`,
  '  cat "$log" >&2',
  '  exit 1',
  'fi',
];

export const MOVER_SCRIPT = [
  'set -eu',
  // Through the run's plain-file gateway (files-gateway.ts): its host key pinned, the run's password obscured as rclone
  // wants it in a remote's config, read from the Secret on stdin (never an argument), then gone from the environment.
  'if [ -n "${MOVER_KNOWN_HOSTS:-}" ]; then',
  '  printf \'%s\\n\' "$MOVER_KNOWN_HOSTS" > /tmp/known_hosts',
  '  RCLONE_CONFIG_KFUSTORE_PASS=$(printf \'%s\' "$MOVER_GATEWAY_PASSWORD" | rclone obscure -)',
  '  export RCLONE_CONFIG_KFUSTORE_PASS',
  '  unset MOVER_GATEWAY_PASSWORD',
  // The gateway's Service may still refuse for a moment after its endpoint is ready, until kube-proxy programs it
  // (kubernetes pkg/proxy/iptables/proxier.go; --iptables-min-sync-period, 1 s by default), and rclone does not retry
  // a refused SSH connection: the mover tries again four times a second (each try only starts rclone), for at most a
  // minute.
  '  tries=0',
  '  until rclone lsf --max-depth 1 kfustore: > /dev/null 2> /tmp/reach.err; do',
  '    grep -q "connect: connection refused" /tmp/reach.err && [ "$tries" -lt 240 ] || break',
  '    tries=$((tries + 1))',
  '    sleep 0.25',
  '  done',
  'fi',
  'log=/tmp/mover.log',
  ': > "$log"',
  'tail -f "$log" &',
  // however the script ends, the follower goes with it: left running it would hold the container's output open
  'follower=$!',
  'trap \'kill "$follower" 2>/dev/null || true\' EXIT',
  // A restore through the gateway: a PVC backed up empty left no object, so its folder is not there, which rclone's sftp
  // client calls "directory not found" where S3 lists nothing; either way there is nothing to copy.
  'if [ -n "${MOVER_ABSENT_IS_EMPTY:-}" ] && ! rclone lsf --max-depth 1 "$MOVER_SOURCE" > /dev/null 2>>"$log"; then',
  '  if ! grep -q "directory not found" "$log"; then',
  '    cat "$log" >&2',
  '    exit 1',
  '  fi',
  `  printf '{"volumeMover":2,"copy":{"stats":{"bytes":0,"transfers":0,"checks":0,"errors":0}}}' > ${TERMINATION_LOG}`,
  '  exit 0',
  'fi',
  // MOVER_SEEDED: the gateway already copied the earlier backup's copy into the target, inside the bucket
  'if [ -z "${MOVER_COPY_DEST:-}" ] && [ -z "${MOVER_SEEDED:-}" ]; then',
  ...rcloneStep('copy', '$MOVER_SOURCE', '$MOVER_TARGET').map((line) => `  ${line}`),
  `  printf '{"volumeMover":2,"copy":%s}' "$(grep '"stats"' "$log" | tail -n 1)" > ${TERMINATION_LOG}`,
  '  exit 0',
  'fi',
  // With an earlier backup of this PVC: its copy is copied inside the bucket, then the volume synced onto that. The
  // copy only saves uploads: if it fails (that backup pruned meanwhile), the sync uploads whatever is missing.
  'if [ -n "${MOVER_COPY_DEST:-}" ]; then',
  `  rclone copy ${MOVER_COPY_FLAGS.join(' ')} --transfers ${REUSE_COPY_TRANSFERS} --stats "\${MOVER_STATS_PERIOD:-10s}" "$MOVER_COPY_DEST" "$MOVER_TARGET" 2>>"$log" || true`,
  'fi',
  ...rcloneStep('sync', '$MOVER_SOURCE', '$MOVER_TARGET'),
  // an empty volume synced through the gateway leaves no folder, which sftp calls "directory not found": nothing stored
  'if ! tree=$(rclone size --json "$MOVER_TARGET" 2>>"$log"); then',
  '  if [ -z "${MOVER_KNOWN_HOSTS:-}" ] || ! tail -n 1 "$log" | grep -q "directory not found"; then',
  '    cat "$log" >&2',
  '    exit 1',
  '  fi',
  '  tree=\'{"count":0,"bytes":0}\'',
  'fi',
  `printf '{"volumeMover":2,"copy":%s,"tree":%s}' "$(grep '"stats"' "$log" | tail -n 1)" "$tree" > ${TERMINATION_LOG}`,
].join('\n');

export interface CredentialsSecretInput {
  name: string;
  namespace: string;
  backupId: string;
  operation: MoveOperation;
  s3: MoverS3Settings;
  /** through the run's plain-file gateway (files-gateway.ts) */
  gateway?: FilesAccess | undefined;
}

const GATEWAY_PASSWORD_KEY = 'MOVER_GATEWAY_PASSWORD';

export function buildCredentialsSecret(input: CredentialsSecretInput): KubeObject {
  if (input.gateway) {
    // through the gateway: the run's password of this namespace, and no bucket credential
    return buildRunSecret({
      name: input.name, namespace: input.namespace, backupId: input.backupId, labels: moverLabels(input.backupId, input.operation),
      data: { [GATEWAY_PASSWORD_KEY]: input.gateway.password },
    });
  }
  return buildRunSecret({
    name: input.name, namespace: input.namespace, backupId: input.backupId, labels: moverLabels(input.backupId, input.operation),
    data: rcloneRemoteEnv(input.s3), caChain: input.s3.tlsCaChain,
  });
}

export interface MoverJobInput {
  name: string;
  namespace: string;
  /** the PVC whose data it moves, and its namespace above */
  pvc: string;
  /**
   * where the Job runs and what it mounts when that is not the PVC itself: a claim of the model's namespace made for
   * it (a snapshot's, ./snapshot; a hand-over's, ./rebind.ts)
   */
  mount?: { namespace: string; claim: string } | undefined;
  backupId: string;
  operation: MoveOperation;
  image: string;
  secretName: string;
  /** `bucket/prefix/backups/<id>/volumes/<ns>/<pvc>`; through a gateway, `<pvc>` (the gateway's root is the namespace's folder) */
  remotePath: string;
  /** through the run's plain-file gateway (files-gateway.ts): the Secret then holds its password, and no bucket credential */
  gateway?: FilesAccess | undefined;
  /** through the gateway, backup only: it copied an earlier backup's copy of the PVC into the target before serving */
  seeded?: boolean;
  s3: MoverS3Settings;
  /** pin to this node: a ReadWriteOnce volume can only be mounted where it already is */
  nodeName?: string;
  activeDeadlineSeconds: number;
  ttlSecondsAfterFinished: number;
  /** seconds between rclone's stats lines (default 10) */
  statsPeriodSeconds?: number;
  /** backup only: `bucket/prefix/backups/<earlier id>/volumes/<ns>/<pvc>`, copied inside the bucket before the sync */
  copyDestPath?: string;
  /** requests and limits of the container (`volume-mover-resources`); undefined sets neither */
  resources?: ResourceList | undefined;
}

/** The mover's container and its volumes, in the hardened Job template (src/jobs/template.ts). */
export function buildMoverJob(input: MoverJobInput): KubeObject {
  const backup = input.operation === 'backup';
  const remote = `${REMOTE_NAME}:${input.remotePath}`;
  const secretEnv = (input.gateway ? [GATEWAY_PASSWORD_KEY] : Object.keys(rcloneRemoteEnv(input.s3))).map((key) => ({
    name: key,
    valueFrom: { secretKeyRef: { name: input.secretName, key } },
  }));
  const plainEnv = Object.entries({
    ...rcloneBehaviourEnv(),
    ...(input.gateway ? gatewayRemoteEnv(input.gateway) : {}),
    ...(backup && input.gateway && input.seeded ? { MOVER_SEEDED: '1' } : {}),
    ...(!backup && input.gateway ? { MOVER_ABSENT_IS_EMPTY: '1' } : {}),
    ...(input.statsPeriodSeconds ? { MOVER_STATS_PERIOD: `${input.statsPeriodSeconds}s` } : {}),
    ...(backup && input.copyDestPath && !input.gateway ? { MOVER_COPY_DEST: `${REMOTE_NAME}:${input.copyDestPath}` } : {}),
    MOVER_SOURCE: backup ? VOLUME_MOUNT_PATH : remote,
    MOVER_TARGET: backup ? remote : VOLUME_MOUNT_PATH,
  }).map(([name, value]) => ({ name, value }));

  // through the gateway the store's CA means nothing to the mover: it checks the gateway's host key
  const base = input.gateway ? { ...input, s3: { ...input.s3, tlsCaChain: undefined } } : input;
  return buildVolumeMoverJob(base, MOVER_SCRIPT, [...secretEnv, ...plainEnv], input.nodeName ? nodeAffinity(input.nodeName) : undefined);
}

/** The gateway as the mover's remote (rclone's sftp backend), its password added by the script (MOVER_SCRIPT). */
function gatewayRemoteEnv(access: FilesAccess): Record<string, string> {
  const at = `RCLONE_CONFIG_${REMOTE_NAME.toUpperCase()}_`;
  return {
    [`${at}TYPE`]: 'sftp',
    [`${at}HOST`]: access.host,
    [`${at}PORT`]: String(access.port),
    [`${at}USER`]: access.user,
    [`${at}KNOWN_HOSTS_FILE`]: '/tmp/known_hosts',
    MOVER_KNOWN_HOSTS: access.knownHosts,
  };
}

/** Only this node: a ReadWriteOnce volume in use can be mounted only where it already is. */
/** What every volume mover's Job is made of, whichever tool it runs (rclone here, restic in restic/job.ts). */
export type VolumeMoverJobBase = Pick<MoverJobInput, 'name' | 'namespace' | 'pvc' | 'mount' | 'backupId' | 'operation' | 'image' | 'secretName' | 's3' | 'activeDeadlineSeconds' | 'ttlSecondsAfterFinished' | 'resources'>;

/**
 * A mover's hardened Job (src/jobs/template.ts): its PVC mounted at VOLUME_MOUNT_PATH (read-only for a backup), a
 * scratch /tmp, one container running `script` with `env`, the store's CA where the store has one, and pinned by
 * `affinity` where a ReadWriteOnce volume must be mounted on its node.
 */
export function buildVolumeMoverJob(input: VolumeMoverJobBase, script: string, env: unknown[], affinity: unknown): KubeObject {
  const backup = input.operation === 'backup';
  return buildHardenedJob({
    name: input.name,
    // a claim made for the mover (a snapshot's, a hand-over's) is mounted where it was made (the model's namespace), the user's PVC where it is
    namespace: input.mount?.namespace ?? input.namespace,
    backupId: input.backupId,
    labels: moverLabels(input.backupId, input.operation),
    // the PVC whose data it moves, also where the Job mounts a claim made for it
    annotations: { [ANNOTATION_PVC]: input.pvc },
    identity: VOLUME_MOVER_IDENTITY,
    activeDeadlineSeconds: input.activeDeadlineSeconds,
    ttlSecondsAfterFinished: input.ttlSecondsAfterFinished,
    volumes: [
      { name: 'data', persistentVolumeClaim: { claimName: input.mount?.claim ?? input.pvc, readOnly: backup } },
      { name: 'tmp', emptyDir: {} },
    ],
    containers: [
      {
        name: MOVER_CONTAINER,
        image: input.image,
        command: ['sh', '-c', script],
        env,
        volumeMounts: [
          { name: 'data', mountPath: VOLUME_MOUNT_PATH, readOnly: backup },
          { name: 'tmp', mountPath: '/tmp' },
        ],
        terminationMessagePath: TERMINATION_LOG,
        terminationMessagePolicy: 'FallbackToLogsOnError',
        resources: containerResources(input.resources),
      },
    ],
    ...(input.s3.tlsCaChain ? { storeCa: { secretName: input.secretName, containers: [MOVER_CONTAINER] } } : {}),
    ...(affinity ? { placement: { affinity } } : {}),
  });
}

export function nodeAffinity(nodeName: string): unknown {
  return {
    nodeAffinity: {
      requiredDuringSchedulingIgnoredDuringExecution: {
        nodeSelectorTerms: [{ matchFields: [{ key: 'metadata.name', operator: 'In', values: [nodeName] }] }],
      },
    },
  };
}
