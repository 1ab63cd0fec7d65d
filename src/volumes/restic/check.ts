// verify-backup's look into the restic repositories whose snapshots a backup's manifest pins: one Job per repository,
// in the hardened template (src/jobs/template.ts), running the restic image with the repository password from the
// run's Secret, as the movers do. What it depends on in restic 0.14 (restic/restic at v0.14.0):
// - `check` (cmd/restic/cmd_check.go) loads every index and snapshot, lists the packs and compares their sizes with the
//   index ("pack <id>: does not exist", "unexpected file size"), then walks every tree of every snapshot, each blob
//   read with its MAC checked; only with --read-data(-subset) does it read data packs, hashing each whole pack (its
//   name is its sha256: "Pack ID does not match, want …, got …") before each blob's MAC (internal/checker/checker.go).
//   A byte changed in a data pack is therefore found only by a read of that pack.
// - `check` takes the exclusive lock (lockRepoExclusive), so it refuses while a backup holds its non-exclusive one
//   ("repository is already locked by …", internal/restic/lock.go); `unlock` first removes locks that are stale only.
// - It prints its progress bars ("[0:01] 40.00%  2 / 5 packs") as lines on a non-terminal when RESTIC_PROGRESS_FPS
//   is set (cmd/restic/progress.go), which the Pod's log carries.
// - A deleted snapshot file breaks nothing that check looks at (no tree references it), so each pinned id is looked
//   up in `snapshots --json` (the repository's snapshot files, never the cache: --no-cache).
// The repository is never created here: a missing one is a finding.
import { createHash } from 'node:crypto';
import pLimit from 'p-limit';
import type { KubeObject } from '../../kube/types.ts';
import { buildHardenedJob, buildRunSecret, LABEL_BACKUP_ID, LABEL_MANAGED_BY, MANAGED_BY, STORE_CA_DIR, STORE_CA_KEY, VOLUME_MOVER_IDENTITY } from '../../jobs/template.ts';
import type { StartRemedies } from '../../jobs/start-watch.ts';
import { neutralWording, type Wording } from '../../errors/remedy.ts';
import { createOrReplace } from '../adopt.ts';
import { MOVER_CONTAINER, TERMINATION_LOG } from '../job.ts';
import { JOBS, SECRETS, type VolumeKube } from '../kube-port.ts';
import { LABEL_COMPONENT, LABEL_OPERATION, COMPONENT } from '../labels.ts';
import { followJobLog } from '../job-watch.ts';
import { jobSucceeded } from '../outcome.ts';
import { containerResources, type ResourceList } from '../resources.ts';
import type { MoverS3Settings } from '../settings.ts';
import { DEFAULT_JOB_DEADLINE_SECONDS, DEFAULT_PROGRESS_INTERVAL_MS, DEFAULT_START_TIMEOUT_SECONDS } from '../settings.ts';
import { resticRepositoryKey, resticRepositoryUrl } from './job.ts';
import { runResticJobToEnd } from './run-job.ts';
import { CONTROL_PLANE_REPOSITORY } from '../../controlplane/restic-password.ts';
import { describeReadData, readDataFlag, type ReadData } from './read-data.ts';

/**
 * A repository to check: a profile namespace's, with the snapshots the backup pins in it, per PVC; or the control-plane
 * repository's (src/controlplane/restic-password.ts), per part (`what` then names the kind).
 */
export interface RepositoryToCheck {
  namespace: string;
  pinned: Array<{ pvc: string; snapshot: string; what?: string }>;
}

export type RepositoryStatus = 'ok' | 'damaged' | 'not-checked';

export interface RepositoryCheck {
  namespace: string;
  /** s3://bucket/<prefix>/restic/<namespace> */
  repository: string;
  status: RepositoryStatus;
  /** what was read: the structure, and all or part of the data */
  checked: string;
  /** the pinned snapshots, all found when the status is ok */
  snapshots: number;
  /** ok with read-data: how many data packs restic read back and checked */
  packsRead?: number;
  /** damaged or not checked: what is wrong, as one clause */
  problem?: string;
}

export interface ResticCheckOptions {
  backupId: string;
  /** where the check Jobs and their Secret are made: the charm's model namespace, the CLI's --job-namespace */
  jobNamespace: string;
  repositories: RepositoryToCheck[];
  s3: MoverS3Settings;
  /** each repository's password: its namespace's (src/volumes/restic/password.ts) */
  password: (namespace: string) => string;
  /** whether the passwords come from an encryption key (without one a wrong password cannot be the key's fault) */
  keyed: boolean;
  image: string;
  readData: ReadData;
  concurrency?: number;
  startTimeoutSeconds?: number;
  resources?: ResourceList | undefined;
  /** what the image setting and the retry are called at the edge */
  wording?: Wording;
  imageSetting?: string;
  resourcesSetting?: string;
  activeDeadlineSeconds?: number;
  progressIntervalMs?: number;
  onProgress?: (line: string) => void;
  signal?: AbortSignal;
}

const OPERATION = 'verify';
const MISSING_MARK = 'kfu-pinned-snapshot-missing';

export const RESTIC_CHECK_SCRIPT = [
  'set -eu',
  'log=/tmp/check.log',
  'err=/tmp/check.err',
  ': > "$log"',
  ': > "$err"',
  'tail -f "$log" &',
  'follower=$!',
  'trap \'kill "$follower" 2>/dev/null || true\' EXIT',
  // restic's errors, the last 3000 bytes (a termination message holds 4096), as the message; the Job fails
  `report() { tail -c 3000 "$err" > ${TERMINATION_LOG}; exit 1; }`,
  'set -- -o "s3.bucket-lookup=$MOVER_BUCKET_LOOKUP"',
  `if [ -f "${STORE_CA_DIR}/${STORE_CA_KEY}" ]; then set -- "$@" --cacert "${STORE_CA_DIR}/${STORE_CA_KEY}"; fi`,
  // opens the repository (a missing one or a wrong password ends here, and nothing is created)
  'restic "$@" cat config > /dev/null 2>> "$err" || report',
  'restic "$@" unlock > /dev/null 2>> "$err" || true',
  'status=0',
  // check holds the exclusive lock: stopped (the Pod deleted, its deadline passed), restic removes its lock only on an
  // interrupt (cmd/restic/cleanup.go listens for SIGINT alone), so the kubelet's SIGTERM to this shell becomes one;
  // otherwise the lock would refuse every backup of the namespace until stale (30 minutes, another host's)
  'restic "$@" check ${CHECK_READ_DATA:+"$CHECK_READ_DATA"} >> "$log" 2>> "$err" &',
  'checker=$!',
  'trap \'kill -INT "$checker" 2>/dev/null || true; wait "$checker" 2>/dev/null || true; exit 143\' TERM',
  'wait "$checker" || status=1',
  'trap - TERM',
  'if restic "$@" snapshots --json --no-cache > /tmp/snapshots.json 2>> "$err"; then',
  '  for id in $CHECK_SNAPSHOTS; do',
  `    grep -q "\\"id\\":\\"$id\\"" /tmp/snapshots.json || { echo "${MISSING_MARK} $id" >> "$err"; status=1; }`,
  '  done',
  'else',
  '  status=1',
  'fi',
  '[ "$status" = 0 ] || report',
  // the read's final progress line, "[0:03] 100.00%  12 / 12 packs", says how many data packs were read
  'packs=$(grep -o \'[0-9]* / [0-9]* packs\' "$log" | tail -n 1 | cut -d" " -f1)',
  `printf '{"resticCheck":"ok","packsRead":%s}' "\${packs:-0}" > ${TERMINATION_LOG}`,
].join('\n');

function shortHash(text: string, length: number): string {
  return createHash('sha256').update(text).digest('hex').slice(0, length);
}

/** The same name for one repository of one backup on every run, so a rerun adopts a check still running. */
export function checkJobName(backupId: string, namespace: string): string {
  return `kfu-verify-${shortHash(`${backupId}/${namespace}`, 16)}`;
}

export function checkSecretName(backupId: string): string {
  return `kfu-verify-creds-${shortHash(backupId, 12)}`;
}

/** The volume movers' labels with operation "verify", so that prune-backups removes what a dead run left. */
export function checkLabels(backupId: string): Record<string, string> {
  return { [LABEL_MANAGED_BY]: MANAGED_BY, [LABEL_COMPONENT]: COMPONENT, [LABEL_BACKUP_ID]: backupId, [LABEL_OPERATION]: OPERATION };
}

/** The Secret key of one repository's password: the check Jobs of every repository share the run's Secret. */
export function checkPasswordKey(namespace: string): string {
  return `restic-password.${namespace}`;
}

/**
 * The run's Secret, in the job namespace (never a profile's): the bucket credentials and each checked repository's
 * password under its own key, which only that repository's Job reads.
 */
export function buildCheckSecret(input: { name: string; namespace: string; backupId: string; s3: MoverS3Settings; passwords: Record<string, string> }): KubeObject {
  const passwords = Object.fromEntries(Object.entries(input.passwords).map(([namespace, password]) => [checkPasswordKey(namespace), password]));
  return buildRunSecret({
    name: input.name, namespace: input.namespace, backupId: input.backupId, labels: checkLabels(input.backupId),
    data: { AWS_ACCESS_KEY_ID: input.s3.accessKey, AWS_SECRET_ACCESS_KEY: input.s3.secretKey, ...passwords },
    caChain: input.s3.tlsCaChain,
  });
}

export interface CheckJobInput {
  name: string;
  /** where the Job runs */
  namespace: string;
  /** whose repository it checks */
  repositoryNamespace: string;
  backupId: string;
  image: string;
  secretName: string;
  s3: MoverS3Settings;
  snapshots: string[];
  readData: ReadData;
  activeDeadlineSeconds: number;
  resources?: ResourceList | undefined;
  progressFps: number;
}

/** The check's Job: no volume but its scratch /tmp (restic's temporary cache), read-only towards the repository. */
export function buildCheckJob(input: CheckJobInput): KubeObject {
  const secretEnv = [...['AWS_ACCESS_KEY_ID', 'AWS_SECRET_ACCESS_KEY'].map((key) => [key, key]), ['RESTIC_PASSWORD', checkPasswordKey(input.repositoryNamespace)]]
    .map(([name, key]) => ({ name, valueFrom: { secretKeyRef: { name: input.secretName, key } } }));
  const flag = readDataFlag(input.readData);
  const plainEnv = Object.entries({
    RESTIC_REPOSITORY: resticRepositoryUrl(input.s3, input.repositoryNamespace),
    RESTIC_CACHE_DIR: '/tmp/restic-cache',
    HOME: '/tmp',
    MOVER_BUCKET_LOOKUP: input.s3.uriStyle === 'host' ? 'dns' : 'path',
    ...(input.s3.region ? { AWS_DEFAULT_REGION: input.s3.region } : {}),
    RESTIC_PROGRESS_FPS: String(input.progressFps),
    CHECK_SNAPSHOTS: input.snapshots.join(' '),
    ...(flag ? { CHECK_READ_DATA: flag } : {}),
  }).map(([name, value]) => ({ name, value }));
  return buildHardenedJob({
    name: input.name,
    namespace: input.namespace,
    backupId: input.backupId,
    labels: checkLabels(input.backupId),
    annotations: { 'kubeflow-upgrader/restic-repository': input.repositoryNamespace },
    identity: VOLUME_MOVER_IDENTITY,
    activeDeadlineSeconds: input.activeDeadlineSeconds,
    volumes: [{ name: 'tmp', emptyDir: {} }],
    containers: [{
      name: MOVER_CONTAINER,
      image: input.image,
      command: ['sh', '-c', RESTIC_CHECK_SCRIPT],
      env: [...secretEnv, ...plainEnv],
      volumeMounts: [{ name: 'tmp', mountPath: '/tmp' }],
      terminationMessagePath: TERMINATION_LOG,
      terminationMessagePolicy: 'FallbackToLogsOnError',
      resources: containerResources(input.resources),
    }],
    ...(input.s3.tlsCaChain ? { storeCa: { secretName: input.secretName, containers: [MOVER_CONTAINER] } } : {}),
  });
}

/** The newest progress line of a running check: "[0:04] 40.00%  2 / 5 packs" (or snapshots). */
export function parseCheckProgress(log: string): { done: number; total: number; unit: string } | undefined {
  for (const line of log.split(/[\r\n]/).reverse()) {
    const m = /^\[[\d:]+\]\s+[\d.]+%\s+(\d+) \/ (\d+) (packs|snapshots)\s*$/.exec(line.trim());
    if (m) return { done: Number(m[1]), total: Number(m[2]), unit: m[3]! };
  }
  return undefined;
}

const short = (id: string) => id.slice(0, 8);

/** A successful check's termination message: the data packs it read, or undefined when it is not one. */
export function parseCheckSuccess(message: string | undefined): number | undefined {
  try {
    const parsed = JSON.parse(message ?? '') as { resticCheck?: unknown; packsRead?: unknown };
    return parsed.resticCheck === 'ok' && typeof parsed.packsRead === 'number' && Number.isInteger(parsed.packsRead) && parsed.packsRead >= 0 ? parsed.packsRead : undefined;
  } catch {
    return undefined;
  }
}

/**
 * What a failed check found, as one clause, from restic's error lines and the pinned ids the script did not find;
 * `damaged` when the repository itself is wrong, otherwise it could not be checked (locked, unreachable, wrong key).
 */
export function judgeCheckFailure(
  message: string | undefined, pinned: RepositoryToCheck['pinned'], secrets: string[], wording: Wording = neutralWording, keyed = true,
): { status: 'damaged' | 'not-checked'; problem: string } {
  const lines = (message ?? '').split('\n').map((l) => l.trim()).filter(Boolean);
  const damage: string[] = [];
  const missing = lines.flatMap((l) => (l.startsWith(`${MISSING_MARK} `) ? [l.slice(MISSING_MARK.length + 1)] : []));
  for (const line of lines) {
    let m: RegExpExecArray | null;
    if ((m = /Pack ID does not match, want ([0-9a-f]+)/.exec(line))) damage.push(`pack ${short(m[1]!)} does not match its hash (its bytes were changed or damaged in the bucket)`);
    else if ((m = /^pack ([0-9a-f]{64}): does not exist/.exec(line))) damage.push(`pack ${short(m[1]!)} is missing`);
    else if ((m = /^pack ([0-9a-f]{64}): unexpected file size/.exec(line))) damage.push(`pack ${short(m[1]!)} has another size than its index records`);
    else if ((m = /^pack ([0-9a-f]+) contains \d+ errors?/.exec(line))) damage.push(`pack ${short(m[1]!)} holds blobs that fail their authentication (MAC)`);
    else if (/ciphertext verification failed|is damaged/.test(line) && !/^(Fatal: )?config or key/.test(line)) damage.push('data fails its authentication (MAC): it was changed or damaged in the bucket');
    else if ((m = /^error for tree ([0-9a-f]+)/.exec(line))) damage.push(`tree ${short(m[1]!)} cannot be read whole (a pack it needs is missing or damaged)`);
    else if (/not found in index|is empty or not indexed/.test(line)) damage.push('a blob a snapshot needs is in no index');
  }
  const missingPvcs = pinned.filter((p) => missing.includes(p.snapshot));
  if (missingPvcs.length > 0) {
    const names = missingPvcs.map((p) => `${p.pvc} (${short(p.snapshot)})`).join(', ');
    const what = missingPvcs[0]!.what ?? 'PVC';
    damage.unshift(missingPvcs.length === 1 ? `the snapshot pinned for ${what} ${names} is not in the repository` : `the snapshots pinned for ${what}s ${names} are not in the repository`);
  }
  const distinct = [...new Set(damage)];
  if (distinct.length > 0) {
    const more = distinct.length > 2 ? `, and ${distinct.length - 2} more problem${distinct.length - 2 === 1 ? '' : 's'}` : '';
    return { status: 'damaged', problem: `${distinct.slice(0, 2).join('; ')}${more}` };
  }
  const text = lines.join('\n');
  if (/already locked/.test(text)) {
    return { status: 'not-checked', problem: `the repository is locked by another restic (a backup or a prune of this location is running): ${wording.remedy({ fix: 'verify-again' })} once it has ended` };
  }
  if (/wrong password or no key found/.test(text)) {
    return keyed
      ? { status: 'not-checked', problem: `the repository does not open with the password of this ${wording.term({ term: 'encryption-key' })}: its data was written under another key` }
      : { status: 'not-checked', problem: `the repository does not open without an ${wording.term({ term: 'encryption-key' })}: its data was written under a key, which verify needs to read it` };
  }
  if (/Is there a repository at the following location|unable to open config file/.test(text)) {
    return { status: 'damaged', problem: 'there is no restic repository there any more (its config is gone from the bucket)' };
  }
  if (/^(Fatal: )?config or key .* is damaged/m.test(text)) {
    return { status: 'damaged', problem: 'its config or key fails its authentication (changed or damaged in the bucket)' };
  }
  // restic's closing "repository contains errors" says only that something went wrong; the lines before it say what
  const telling = lines.filter((l) => !/^(Fatal: )?repository contains errors$/.test(l));
  const chosen = [...telling].reverse().find((l) => /^Fatal: /.test(l))
    ?? [...telling].reverse().find((l) => /error|Error|failed|invalid/.test(l)) ?? telling.at(-1) ?? 'restic failed without saying why';
  let reason = chosen.replace(/^Fatal: /, '');
  for (const secret of secrets) if (secret.length >= 4) reason = reason.split(secret).join('***');
  return { status: 'not-checked', problem: `restic could not check it: ${reason.length > 300 ? `${reason.slice(0, 297)}...` : reason}` };
}

/**
 * Checks each repository in its own Job, at most `concurrency` at once, and says per repository whether it is whole
 * and holds every pinned snapshot. Throws only when a Job cannot be run at all (it does not start, it is deleted):
 * then nothing is known of the repository. The run's Secret is deleted in every case.
 */
export async function checkResticRepositories(kube: VolumeKube, options: ResticCheckOptions): Promise<RepositoryCheck[]> {
  const wording = options.wording ?? neutralWording;
  const interval = options.progressIntervalMs ?? DEFAULT_PROGRESS_INTERVAL_MS;
  const deadline = options.activeDeadlineSeconds ?? DEFAULT_JOB_DEADLINE_SECONDS;
  const remedies: StartRemedies = { imageSetting: () => options.imageSetting ?? 'volume-mover-image', resourcesSetting: options.resourcesSetting ?? 'volume-mover-resources' };
  const secretName = checkSecretName(options.backupId);
  const checked = describeReadData(options.readData, wording);
  const say = (line: string) => options.onProgress?.(line);
  await createOrReplace(kube, SECRETS, buildCheckSecret({ name: secretName, namespace: options.jobNamespace, backupId: options.backupId, s3: options.s3,
    passwords: Object.fromEntries(options.repositories.map((repo) => [repo.namespace, options.password(repo.namespace)])),
  }));
  const limit = pLimit(options.concurrency ?? 2);
  try {
    return await Promise.all(options.repositories.map((repo) => limit(async (): Promise<RepositoryCheck> => {
      const repository = `s3://${options.s3.bucket}/${resticRepositoryKey(options.s3, repo.namespace)}`;
      const job = buildCheckJob({
        name: checkJobName(options.backupId, repo.namespace), namespace: options.jobNamespace, repositoryNamespace: repo.namespace,
        backupId: options.backupId, image: options.image, secretName, s3: options.s3, snapshots: repo.pinned.map((p) => p.snapshot),
        readData: options.readData, activeDeadlineSeconds: deadline, resources: options.resources, progressFps: 1 / Math.max(1, Math.round(interval / 3000)),
      });
      const jobName = job.metadata.name ?? '';
      say(`checking the restic repository of ${repo.namespace} (${repo.pinned.length} pinned snapshot(s); ${checked})`);
      const { finished, message } = await runResticJobToEnd(kube, job, {
        deadlineSeconds: deadline, startTimeoutSeconds: options.startTimeoutSeconds ?? DEFAULT_START_TIMEOUT_SECONDS, remedies, noun: 'restic check Job', signal: options.signal,
        whileRunning: (finishing) => followJobLog(kube, options.jobNamespace, jobName, finishing, interval, {
          read: parseCheckProgress, keyOf: (p) => `${p.done}/${p.total}/${p.unit}`, tailLines: 5,
          report: (p) => say(`restic check of ${repo.namespace}: ${p.done}/${p.total} ${p.unit} checked`),
        }),
      });
      const base = { namespace: repo.namespace, repository, checked, snapshots: repo.pinned.length };
      let result: RepositoryCheck;
      if (jobSucceeded(finished)) {
        const packsRead = parseCheckSuccess(message);
        if (packsRead === undefined) throw new Error(`its restic check Job ${jobName} completed without reporting its result`);
        result = { ...base, status: 'ok', ...(options.readData.mode === 'none' ? {} : { packsRead, checked: `${checked}, ${packsRead} pack(s) read` }) };
        await kube.delete(JOBS, options.jobNamespace, jobName);
      } else {
        // a failed Job stays for `kubectl logs` until its TTL
        result = { ...base, ...judgeCheckFailure(message, repo.pinned, [options.s3.secretKey, options.password(repo.namespace)], wording, options.keyed) };
      }
      say(`restic repository of ${repo.namespace}: ${result.status === 'ok' ? 'ok' : `${result.status}, ${result.problem}`}`);
      return result;
    })));
  } finally {
    await kube.delete(SECRETS, options.jobNamespace, secretName);
  }
}

/** The repositories a backup's volume index pins snapshots in, one per profile namespace. */
export function repositoriesToCheck(volumes: ReadonlyArray<{ namespace: string; pvc: string; unbound?: boolean | undefined; restic?: { snapshot: string } | undefined }>): RepositoryToCheck[] {
  const byNamespace = new Map<string, RepositoryToCheck>();
  for (const v of volumes) {
    if (v.unbound || !v.restic) continue;
    const repo = byNamespace.get(v.namespace) ?? { namespace: v.namespace, pinned: [] };
    repo.pinned.push({ pvc: v.pvc, snapshot: v.restic.snapshot });
    byNamespace.set(v.namespace, repo);
  }
  return [...byNamespace.values()].sort((a, b) => a.namespace.localeCompare(b.namespace));
}

/**
 * verify's verdict with the repositories: a damaged one makes the backup corrupt; one that could not be checked makes
 * it not verifiable (unless the archive is corrupt already).
 */
export function verdictWithRepositories<S extends string>(status: S, checks: readonly RepositoryCheck[]): S | 'corrupt' | 'not-verifiable' {
  if (status !== 'ok') return status;
  if (checks.some((c) => c.status === 'damaged')) return 'corrupt';
  if (checks.some((c) => c.status === 'not-checked')) return 'not-verifiable';
  return status;
}

/** A repository that is not ok, as a sentence for verify's problems. */
export function repositoryProblemSentence(check: RepositoryCheck): string | undefined {
  if (check.status === 'ok') return undefined;
  const what = check.namespace === CONTROL_PLANE_REPOSITORY
    ? `The control-plane restic repository (${check.repository})`
    : `The restic repository of namespace ${check.namespace} (${check.repository})`;
  return check.status === 'damaged' ? `${what} is damaged: ${check.problem}.` : `${what} could not be checked: ${check.problem}.`;
}
