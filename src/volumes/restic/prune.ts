// The Job that forgets a deleted backup's snapshots in one namespace's restic repository and prunes it, in the
// hardened template (src/jobs/template.ts), with the bucket credentials and the repository password from a per-run
// Secret as the movers have them. What it depends on in restic 0.14 (restic/restic at v0.14.0):
// - `forget <id>...` removes exactly the snapshots named (cmd/restic/cmd_forget.go: explicit ids skip every policy),
//   warns "Ignoring ..., no matching ID found" for an id that is not there and still exits 0, so a rerun converges;
//   with `--prune` it runs prune on the same repository under the same exclusive lock, and only when it removed a
//   snapshot (cmd_forget.go runPruneWithRepo), so a run whose snapshots are already gone runs `prune` by itself.
// - forget and prune take the exclusive lock, which fails at once ("repository is already locked") while any other
//   lock restic can load exists, before anything is deleted (internal/restic/lock.go checkForOtherLocks). A lock file
//   that does not decrypt under the repository's key is passed over there ("ignore lock": measured with Debian's restic
//   0.14, a garbage file under locks/ neither stops `forget --prune` nor goes with `unlock`). A lock is stale after 30
//   minutes, or sooner when it was taken on the same host by a process that is gone (lock.go Stale); one dated ahead
//   is never stale. `unlock` removes only stale locks (cmd/restic/cmd_unlock.go), `list locks --no-lock` lists every
//   lock file without taking one, and `cat lock <id>` (with --no-lock) prints one decrypted, or fails.
// - prune deletes packs no snapshot uses and repacks mostly unused ones (cmd/restic/cmd_prune.go, --max-unused 5 %
//   by default); every blob a remaining snapshot references stays.
import type { KubeObject } from '../../kube/types.ts';
import { buildHardenedJob, buildRunSecret, DEFAULT_JOB_DEADLINE_SECONDS, DEFAULT_JOB_TTL_SECONDS, DEFAULT_START_TIMEOUT_SECONDS, VOLUME_MOVER_IDENTITY } from '../../jobs/template.ts';
import { createHash } from 'node:crypto';
import { createOrReplace } from '../adopt.ts';
import { MOVER_CONTAINER, TERMINATION_LOG } from '../job.ts';
import { JOBS, SECRETS, type VolumeKube } from '../kube-port.ts';
import { moverLabels } from '../labels.ts';
import { jobSucceeded } from '../outcome.ts';
import { containerResources, type ResourceList } from '../resources.ts';
import type { MoverS3Settings } from '../settings.ts';
import { RESTIC_SCRIPT_START, resticRepositoryEnv } from './job.ts';
import { resticJobFailureReason, runResticJobToEnd } from './run-job.ts';

/** `check` reports the lock files left after `unlock`; `prune` forgets MOVER_FORGET's snapshots and prunes. */
export type ResticPruneMode = 'check' | 'prune';

const SNAPSHOT_ID = /^[0-9a-f]{64}$/;
/** printf of the answer (with its arguments) into the termination message */
const say = (json: string, args = '') => `printf '${json}'${args ? ` ${args}` : ''} > ${TERMINATION_LOG}`;

/** At most this many locks are read into a check's answer: a termination message holds 4096 bytes. */
export const LOCKS_SHOWN = 12;

export const RESTIC_PRUNE_SCRIPT = [
  ...RESTIC_SCRIPT_START,
  'restic "$@" unlock 2>> "$err" || true',
  // check: each lock file left, decrypted when it decrypts (`null` when not), for the engine to judge (src/prune/restic.ts)
  'if [ "$MOVER_MODE" = check ]; then',
  '  if ! ids=$(restic "$@" list locks --no-lock 2>> "$err"); then fail; fi',
  '  count=0; shown=0; found=""',
  '  for id in $ids; do',
  '    count=$((count + 1))',
  `    [ "$shown" -lt ${LOCKS_SHOWN} ] || continue`,
  '    shown=$((shown + 1))',
  // a lock id is 64 hex digits (restic's file names); anything else is not put into the JSON as it is
  '    case "$id" in *[!0-9a-f]*) continue ;; esac',
  '    lock=$(restic "$@" --no-lock cat lock "$id" 2>> "$err" | tr -d \'\\n\') || lock=""',
  '    case "$lock" in "{"*"}") ;; *) lock=null ;; esac',
  '    found="$found{\\"id\\":\\"$id\\",\\"lock\\":$lock},"',
  '  done',
  `  printf '{"resticPrune":"locks","count":%s,"locks":[%s]}' "$count" "\${found%,}" > ${TERMINATION_LOG}`,
  '  exit 0',
  'fi',
  // MOVER_FORGET holds full snapshot ids only (checked before the Job is built), so it splits into words safely.
  'if ! restic "$@" forget --prune $MOVER_FORGET >> "$log" 2>> "$err"; then',
  `  if grep -q "already locked" "$err"; then ${say('{"resticPrune":"locked","locks":1}')}; exit 0; fi`,
  '  fail',
  'fi',
  'ignored=$(grep -c "^Ignoring " "$err" || true)',
  'if [ "$ignored" -eq "$(echo $MOVER_FORGET | wc -w)" ]; then',
  '  if ! restic "$@" prune >> "$log" 2>> "$err"; then fail; fi',
  'fi',
  'total=$(grep "total prune:" "$log" | tail -n 1 | sed \'s/^total prune: *//\' | tr -d \'"\\\\\')',
  say('{"resticPrune":"pruned","ignored":%s,"totalPrune":"%s"}', '"$ignored" "$total"'),
].join('\n');

/** One lock file a check found: restic's lock as `cat lock` prints it, or null when it did not decrypt. */
export interface SeenLock {
  id: string;
  lock: { time?: unknown; exclusive?: unknown; hostname?: unknown; pid?: unknown } | null;
}

export type ResticPruneResult =
  /** prune: restic refused its exclusive lock */
  | { state: 'locked'; locks: number }
  /** check: the lock files left after `unlock` (`count` of them; at most LOCKS_SHOWN read) */
  | { state: 'locks'; count: number; locks: SeenLock[] }
  /** `ignored`: snapshots already gone; `totalPrune`: restic's "total prune:" line (blobs and size removed) */
  | { state: 'pruned'; ignored: number; totalPrune: string };

export function parseResticPrune(message: string | undefined): ResticPruneResult | undefined {
  try {
    const parsed = JSON.parse(message ?? '') as { resticPrune?: unknown; locks?: unknown; ignored?: unknown; totalPrune?: unknown; count?: unknown };
    const whole = (n: unknown) => (typeof n === 'number' && Number.isInteger(n) && n >= 0 ? n : undefined);
    if (parsed.resticPrune === 'locks' && whole(parsed.count) !== undefined && Array.isArray(parsed.locks)) {
      const locks = parsed.locks.flatMap((entry: unknown): SeenLock[] => {
        const { id, lock } = (entry ?? {}) as { id?: unknown; lock?: unknown };
        if (typeof id !== 'string' || !/^[0-9a-f]{64}$/.test(id)) return [];
        return [{ id, lock: lock !== null && typeof lock === 'object' && !Array.isArray(lock) ? lock as SeenLock['lock'] : null }];
      });
      return { state: 'locks', count: whole(parsed.count)!, locks };
    }
    if (parsed.resticPrune === 'locked' && whole(parsed.locks) !== undefined) return { state: 'locked', locks: whole(parsed.locks)! };
    if (parsed.resticPrune === 'pruned' && whole(parsed.ignored) !== undefined) {
      return { state: 'pruned', ignored: whole(parsed.ignored)!, totalPrune: typeof parsed.totalPrune === 'string' ? parsed.totalPrune : '' };
    }
  } catch {
    // not ours: judged below
  }
  return undefined;
}

export interface ResticPruneJobInput {
  /** names and labels the run's objects, like a backup id does a mover's */
  runId: string;
  /** the repository's namespace */
  namespace: string;
  /** where the Job runs, when not in the repository's namespace (that namespace is gone) */
  jobNamespace?: string | undefined;
  mode: ResticPruneMode;
  /** prune: the full ids of the snapshots to forget */
  snapshots: readonly string[];
  image: string;
  secretName: string;
  s3: MoverS3Settings;
  activeDeadlineSeconds: number;
  ttlSecondsAfterFinished: number;
  resources?: ResourceList | undefined;
}

const shortHash = (text: string) => createHash('sha256').update(text).digest('hex').slice(0, 16);

export function resticPruneJobName(runId: string, namespace: string, mode: ResticPruneMode): string {
  return `kfu-prune-${mode === 'check' ? 'check-' : ''}${shortHash(`${runId}/${namespace}`)}`;
}

export function resticPruneSecretName(runId: string): string {
  return `kfu-prune-creds-${shortHash(runId).slice(0, 12)}`;
}

/** The Job: no volume of a user, only a scratch /tmp for restic's cache; labelled as a mover so leftovers are found. */
export function buildResticPruneJob(input: ResticPruneJobInput): KubeObject {
  if (input.mode === 'prune' && (input.snapshots.length === 0 || input.snapshots.some((s) => !SNAPSHOT_ID.test(s)))) {
    throw new Error('A restic prune Job forgets full snapshot ids only.');
  }
  const env = [
    ...resticRepositoryEnv(input.s3, input.namespace, input.secretName),
    { name: 'MOVER_MODE', value: input.mode },
    { name: 'MOVER_FORGET', value: input.snapshots.join(' ') },
  ];
  return buildHardenedJob({
    name: resticPruneJobName(input.runId, input.namespace, input.mode),
    namespace: input.jobNamespace ?? input.namespace,
    backupId: input.runId,
    labels: moverLabels(input.runId, 'prune'),
    identity: VOLUME_MOVER_IDENTITY,
    activeDeadlineSeconds: input.activeDeadlineSeconds,
    ttlSecondsAfterFinished: input.ttlSecondsAfterFinished,
    volumes: [{ name: 'tmp', emptyDir: {} }],
    containers: [{
      name: MOVER_CONTAINER,
      image: input.image,
      command: ['sh', '-c', RESTIC_PRUNE_SCRIPT],
      env,
      volumeMounts: [{ name: 'tmp', mountPath: '/tmp' }],
      terminationMessagePath: TERMINATION_LOG,
      terminationMessagePolicy: 'FallbackToLogsOnError',
      resources: containerResources(input.resources),
    }],
    ...(input.s3.tlsCaChain ? { storeCa: { secretName: input.secretName, containers: [MOVER_CONTAINER] } } : {}),
  });
}

export interface ResticPruneRun {
  runId: string;
  namespace: string;
  jobNamespace?: string | undefined;
  mode: ResticPruneMode;
  snapshots: readonly string[];
  s3: MoverS3Settings;
  password: string;
  image: string;
  startTimeoutSeconds?: number;
  activeDeadlineSeconds?: number;
  resources?: ResourceList | undefined;
  signal?: AbortSignal;
}

/** Runs one check or prune Job (in the repository's namespace unless told) and reads its answer; its Secret goes in every case. */
export async function runResticPruneJob(kube: VolumeKube, run: ResticPruneRun): Promise<ResticPruneResult> {
  const secretName = resticPruneSecretName(run.runId);
  const where = run.jobNamespace ?? run.namespace;
  const deadline = run.activeDeadlineSeconds ?? DEFAULT_JOB_DEADLINE_SECONDS;
  const job = buildResticPruneJob({
    runId: run.runId, namespace: run.namespace, jobNamespace: run.jobNamespace, mode: run.mode, snapshots: run.snapshots, image: run.image, secretName, s3: run.s3,
    activeDeadlineSeconds: deadline, ttlSecondsAfterFinished: DEFAULT_JOB_TTL_SECONDS, resources: run.resources,
  });
  const jobName = job.metadata.name ?? '';
  await createOrReplace(kube, SECRETS, buildRunSecret({
    name: secretName, namespace: where, backupId: run.runId, labels: moverLabels(run.runId, 'prune'),
    data: { AWS_ACCESS_KEY_ID: run.s3.accessKey, AWS_SECRET_ACCESS_KEY: run.s3.secretKey, RESTIC_PASSWORD: run.password },
    caChain: run.s3.tlsCaChain,
  }));
  try {
    const ran = await runResticJobToEnd(kube, job, {
      deadlineSeconds: deadline, startTimeoutSeconds: run.startTimeoutSeconds ?? DEFAULT_START_TIMEOUT_SECONDS,
      remedies: { imageSetting: () => 'volume-mover-image', resourcesSetting: 'volume-mover-resources' }, noun: 'restic prune Job', signal: run.signal,
    });
    if (!jobSucceeded(ran.finished)) {
      throw new Error(`restic prune Job ${jobName} failed: ${resticJobFailureReason(ran, [run.s3.secretKey, run.password], deadline, 'restic failed')}`);
    }
    const result = parseResticPrune(ran.message);
    if (!result) throw new Error(`restic prune Job ${jobName} completed without reporting what it did`);
    await kube.delete(JOBS, where, jobName);
    return result;
  } finally {
    await kube.delete(SECRETS, where, secretName).catch(() => undefined);
  }
}
