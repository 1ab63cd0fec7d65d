// Converging the profile namespaces' restic repositories on their passwords (src/volumes/restic/password.ts): each
// must open with its namespace's password of the current `encryption-key`, and with nothing else. Two changes end here:
// - a changed `encryption-key` (src/charm/restic-key.ts, the CLI's --previous-encryption-key-file): the new key's
//   password is added, authenticated by the previous key's, so older snapshots stay readable;
// - the migration from v1, when every repository had the same password (`legacyResticPassword`): each repository gets
//   its namespace's password, authenticated by the shared one.
// restic keeps one master key per repository and stores it once per password, wrapped under that password (restic/restic
// internal/repository/key.go AddKey); `restic key add --new-password-file` opens the repository with a current
// password and writes another key file for the new one (cmd/restic/cmd_key.go addKey). The data is not encrypted
// again: every password opens the same master key. Once the new password is proven to open the repository, every
// other key file is removed (`key list --json`, `key remove <id>`, authenticated by the new password, since restic
// refuses to remove the key it was opened with: cmd/restic/cmd_key.go deleteKey), so the previous key's password and
// the shared v1 one stop opening it. Removing a key file does not change the master key: docs/reliability.md says
// what that means for a leaked password.
//
// One Job from the hardened template (src/jobs/template.ts) does every repository it is given, one after another,
// in the charm's own namespace (the CLI's --job-namespace), never in a profile namespace: its Secret holds the
// previous and the shared passwords, which open other namespaces' repositories. Per repository:
// - it opens with the new password (`restic cat config`): only the other keys are removed, if any are left;
// - else the first previous password that opens it adds the new one, which must then open it, and the others go;
// - a repository no password opens is reported apart ("locked").
// Each step is checked again on a rerun, so a Job that died half-way converges: only the old key (add), both (remove
// the old), only the new (nothing). The Job mounts no claim and runs as nobody.
import { createHash } from 'node:crypto';
import type { KubeObject } from '../../kube/types.ts';
import { buildHardenedJob, buildRunSecret, CONTROL_PLANE_IDENTITY, STORE_CA_DIR, STORE_CA_KEY } from '../../jobs/template.ts';
import { JOBS, SECRETS, type VolumeKube } from '../kube-port.ts';
import { jobSucceeded } from '../outcome.ts';
import { MOVER_CONTAINER, TERMINATION_LOG } from '../job.ts';
import type { MoverS3Settings } from '../settings.ts';
import { createOrReplace } from '../adopt.ts';
import { resticJobFailureReason, runResticJobToEnd } from './run-job.ts';
import { resticRepositoryUrl } from './job.ts';
import { RESTIC_IMAGE } from '../engine.ts';
import { isKeyed, legacyResticPassword, resticPassword } from './password.ts';

export const REKEY_COMPONENT = 'restic-rekey';
const LABEL_COMPONENT = 'app.kubernetes.io/component';

/**
 * The script. The passwords come from the environment, one line `<namespace> <new> <previous>...` each of
 * REKEY_PASSWORDS (hex, or the fixed unkeyed password: no spaces), into files of the Job's private /tmp (restic reads
 * the new one only from a file), and out of the environment. Each repository is one line `<namespace> <restic URL>`
 * of REKEY_REPOSITORIES; namespaces are DNS labels, so they name files and go into the JSON report as they are.
 */
export const REKEY_SCRIPT = `set -eu
umask 077
err=/tmp/rekey.err
: > "$err"
mkdir -p /tmp/pw
printf '%s\\n' "$REKEY_PASSWORDS" | while read -r ns new olds; do
  [ -n "$ns" ] || continue
  printf '%s' "$new" > "/tmp/pw/$ns.new"
  i=0
  for old in $olds; do i=$((i + 1)); printf '%s' "$old" > "/tmp/pw/$ns.old.$i"; done
done
unset REKEY_PASSWORDS RESTIC_PASSWORD
opts="-o s3.bucket-lookup=$MOVER_BUCKET_LOOKUP"
if [ -f "${STORE_CA_DIR}/${STORE_CA_KEY}" ]; then opts="$opts --cacert ${STORE_CA_DIR}/${STORE_CA_KEY}"; fi
# restic on the current repository with the password of file $1 (opts holds no spaces but its separators)
r() { pw=$1; shift; restic -r "$repo" $opts --password-file "$pw" "$@"; }
# restic's words when no key file opens with the password (internal/repository/repository.go SearchKey); any other
# failure (S3, a lock) makes the repository failed, not locked
opens() {
  if r "$1" cat config > /dev/null 2>> "$err"; then return 0; fi
  tail -n 3 "$err" | grep -q "wrong password or no key found" || other=1
  return 1
}
fail() { failed="$failed $ns"; echo "$ns: $(tail -n 1 "$err")" >&2; }
added=""; removed=""; unchanged=""; locked=""; failed=""
# a space-separated list of names as the items of a JSON array
list() { [ -n "$1" ] || return 0; printf '"%s",' $1 | sed 's/,$//'; }
while read -r ns repo; do
  [ -n "$ns" ] || continue
  new="/tmp/pw/$ns.new"; from=""; other=0
  if opens "$new"; then from="$new"; else
    for old in /tmp/pw/"$ns".old.*; do
      [ -f "$old" ] || continue
      if opens "$old"; then from="$old"; break; fi
    done
  fi
  if [ -z "$from" ]; then
    if [ "$other" = 0 ]; then locked="$locked $ns"; else fail; fi
    continue
  fi
  if [ "$from" != "$new" ]; then
    if r "$from" key add --host kubeflow-upgrader --new-password-file "$new" > /dev/null 2>> "$err" \\
      && r "$new" cat config > /dev/null 2>> "$err"; then added="$added $ns"; else fail; continue; fi
  fi
  # every key but the one the new password opened: restic key list --json marks that one "current" (cmd/restic/cmd_key.go
  # listKeys writes keyInfo's fields in the order current, id, userName, hostName, created)
  if ! keys=$(r "$new" key list --json 2>> "$err"); then fail; continue; fi
  current=$(printf '%s' "$keys" | grep -o '"current":true' | wc -l)
  if [ "$((current))" -ne 1 ]; then echo "restic key list named $((current)) current keys" >> "$err"; fail; continue; fi
  others=$(printf '%s' "$keys" | grep -o '"current":false,"id":"[0-9a-f]*"' | sed 's/.*"id":"//; s/"$//')
  gone=0; broken=0
  for id in $others; do
    if r "$new" key remove "$id" > /dev/null 2>> "$err"; then gone=1; else broken=1; break; fi
  done
  if [ "$broken" = 1 ]; then fail; continue; fi
  if [ "$gone" = 1 ]; then removed="$removed $ns"; elif [ "$from" = "$new" ]; then unchanged="$unchanged $ns"; fi
done <<EOF
$REKEY_REPOSITORIES
EOF
printf '{"rekey":2,"added":[%s],"removed":[%s],"unchanged":[%s],"locked":[%s],"failed":[%s]}' "$(list "$added")" "$(list "$removed")" "$(list "$unchanged")" "$(list "$locked")" "$(list "$failed")" > ${TERMINATION_LOG}
# the failures' lines (stderr) are what a failed Job's Pod reports when the message is the log
[ -z "$failed" ] || exit 1
`;

/** What the Job found per repository (namespace names). */
export interface RekeyOutcome {
  /** the new password was added */
  added: string[];
  /** every key but the new password's was removed (the previous key's, the shared v1 one) */
  removed: string[];
  /** the repository already opened with the new password, and with no other */
  unchanged: string[];
  /** no password given opens it */
  locked: string[];
  /** something else went wrong (S3, a lock); a rerun tries again */
  failed: string[];
}

const OUTCOME_KEYS = ['added', 'removed', 'unchanged', 'locked', 'failed'] as const;

export function parseRekeyOutcome(message: string | undefined): RekeyOutcome | undefined {
  const start = message?.indexOf('{"rekey":2') ?? -1;
  if (!message || start < 0) return undefined;
  try {
    const parsed = JSON.parse(message.slice(start, message.indexOf('}', start) + 1)) as Record<string, unknown>;
    const names = (value: unknown) => (Array.isArray(value) && value.every((v) => typeof v === 'string') ? (value as string[]) : undefined);
    const [added, removed, unchanged, locked, failed] = OUTCOME_KEYS.map((k) => names(parsed[k]));
    if (!added || !removed || !unchanged || !locked || !failed) return undefined;
    return { added, removed, unchanged, locked, failed };
  } catch {
    return undefined;
  }
}

/** One repository's passwords: the one it must open with, and those that may open it now. */
export interface RepositoryKeys {
  namespace: string;
  /** its namespace's password of the key now in use */
  password: string;
  /** tried in order when `password` does not open it: the previous key's passwords, the shared v1 one */
  previous: string[];
}

/**
 * The passwords of `namespaces`' repositories for `key`: each its namespace's password, reached from the namespace's
 * password of each previous key, from the shared v1 password of each previous key, or from the shared v1 password
 * of `key` itself (a repository written before the passwords were per namespace).
 */
export function repositoryKeys(namespaces: readonly string[], key: string | Buffer | undefined, previousKeys: ReadonlyArray<string | Buffer | undefined> = []): RepositoryKeys[] {
  return namespaces.map((namespace) => {
    const password = resticPassword(key, namespace);
    const previous = [...previousKeys.flatMap((k) => [resticPassword(k, namespace), legacyResticPassword(k)]), legacyResticPassword(key)];
    return { namespace, password, previous: [...new Set(previous)].filter((p) => p !== password) };
  });
}

export interface RekeyOptions {
  /** where the Job runs: the charm's own namespace (the model's), which every repository is reachable from */
  namespace: string;
  /** profile namespaces' repositories (`<prefix>/restic/<namespace>`) and their passwords */
  repositories: RepositoryKeys[];
  s3: MoverS3Settings;
  /** names the Job: one per unit and change, so a rerun adopts a Job still running */
  runId: string;
  image?: string;
  startTimeoutSeconds?: number;
  activeDeadlineSeconds?: number;
}

function rekeyLabels(runId: string): Record<string, string> {
  return { [LABEL_COMPONENT]: REKEY_COMPONENT, 'kubeflow-upgrader/rekey': runId };
}

/** A name within 63 characters, the same for one unit's run on one change. */
export function rekeyJobName(runId: string): string {
  return `kfu-rekey-${createHash('sha256').update(runId).digest('hex').slice(0, 16)}`;
}

export function buildRekeySecret(options: RekeyOptions, name: string): KubeObject {
  return buildRunSecret({
    name, namespace: options.namespace, backupId: REKEY_COMPONENT, labels: rekeyLabels(rekeyJobName(options.runId)),
    data: {
      AWS_ACCESS_KEY_ID: options.s3.accessKey, AWS_SECRET_ACCESS_KEY: options.s3.secretKey,
      REKEY_PASSWORDS: options.repositories.map((r) => [r.namespace, r.password, ...r.previous].join(' ')).join('\n'),
    },
    caChain: options.s3.tlsCaChain,
  });
}

export function buildRekeyJob(options: RekeyOptions, secretName: string): KubeObject {
  const name = rekeyJobName(options.runId);
  const secretEnv = ['AWS_ACCESS_KEY_ID', 'AWS_SECRET_ACCESS_KEY', 'REKEY_PASSWORDS']
    .map((key) => ({ name: key, valueFrom: { secretKeyRef: { name: secretName, key } } }));
  const plainEnv = Object.entries({
    REKEY_REPOSITORIES: options.repositories.map((r) => `${r.namespace} ${resticRepositoryUrl(options.s3, r.namespace)}`).join('\n'),
    RESTIC_CACHE_DIR: '/tmp/restic-cache',
    HOME: '/tmp',
    MOVER_BUCKET_LOOKUP: options.s3.uriStyle === 'host' ? 'dns' : 'path',
    ...(options.s3.region ? { AWS_DEFAULT_REGION: options.s3.region } : {}),
  }).map(([key, value]) => ({ name: key, value }));
  return buildHardenedJob({
    name,
    namespace: options.namespace,
    backupId: REKEY_COMPONENT,
    labels: rekeyLabels(name),
    identity: CONTROL_PLANE_IDENTITY,
    activeDeadlineSeconds: options.activeDeadlineSeconds ?? 1800,
    volumes: [{ name: 'tmp', emptyDir: {} }],
    containers: [{
      name: MOVER_CONTAINER,
      image: options.image ?? RESTIC_IMAGE,
      command: ['sh', '-c', REKEY_SCRIPT],
      env: [...secretEnv, ...plainEnv],
      volumeMounts: [{ name: 'tmp', mountPath: '/tmp' }],
      terminationMessagePath: TERMINATION_LOG,
      terminationMessagePolicy: 'FallbackToLogsOnError',
    }],
    ...(options.s3.tlsCaChain ? { storeCa: { secretName, containers: [MOVER_CONTAINER] } } : {}),
  });
}

/**
 * Runs the Job and returns what it did per repository. Throws one sentence when the Job itself could not run (did
 * not start, deadline); a repository that failed is in `failed`, never a throw, so the caller can name each one.
 */
export async function rekeyResticRepositories(kube: VolumeKube, options: RekeyOptions): Promise<RekeyOutcome> {
  if (options.repositories.length === 0) return { added: [], removed: [], unchanged: [], locked: [], failed: [] };
  // its Secret opens other namespaces' repositories: never where a profile's users can read it
  const inProfile = options.repositories.find((r) => r.namespace === options.namespace);
  if (inProfile) throw new Error(`The restic key Job cannot run in namespace ${options.namespace}, whose own repository it changes: its Secret would hand that profile's users the passwords of other namespaces.`);
  for (const r of options.repositories) {
    if (/\s/.test([r.password, ...r.previous].join(''))) throw new Error(`A restic password of namespace ${r.namespace} holds a space, which the restic key Job cannot pass.`);
  }
  const jobName = rekeyJobName(options.runId);
  const secretName = `${jobName}-creds`;
  const job = buildRekeyJob(options, secretName);
  const deadline = (job.spec as { activeDeadlineSeconds: number }).activeDeadlineSeconds;
  await createOrReplace(kube, SECRETS, buildRekeySecret(options, secretName));
  try {
    const run = await runResticJobToEnd(kube, job, {
      deadlineSeconds: deadline, startTimeoutSeconds: options.startTimeoutSeconds ?? 300, noun: 'restic key Job', deletedPrefix: 'the',
      remedies: { imageSetting: () => 'volume-mover-image', resourcesSetting: 'volume-mover-resources' },
    });
    const outcome = parseRekeyOutcome(run.message);
    if (!outcome) {
      const why = resticJobFailureReason(run, [options.s3.secretKey, ...options.repositories.flatMap((r) => [r.password, ...r.previous])], deadline, 'it reported nothing');
      throw new Error(`the restic key Job ${jobName} failed: ${why}`);
    }
    // a failed Job stays for `kubectl logs` until its TTL; the next run replaces it
    if (jobSucceeded(run.finished)) await kube.delete(JOBS, options.namespace, jobName);
    return outcome;
  } finally {
    await kube.delete(SECRETS, options.namespace, secretName).catch(() => undefined);
  }
}

export interface MigrationOptions {
  /** where the Job runs: the charm's model namespace, the CLI's --job-namespace; never a profile namespace */
  jobNamespace: string;
  /** the namespaces about to be used whose repository exists in the bucket */
  namespaces: readonly string[];
  s3: MoverS3Settings;
  encryptionKey: string | Buffer | undefined;
  /** names the Job: one per run of an operation, so a rerun adopts a Job still running */
  runId: string;
  image?: string;
  startTimeoutSeconds?: number;
}

const namespaceList = (list: readonly string[]) => `${list.length === 1 ? 'namespace' : 'namespaces'} ${list.join(', ')}`;

/**
 * Before a backup, restore, verify or prune opens repositories with their namespace's password: each that still
 * opens with the shared v1 password only gets its namespace's (and loses the shared one), in one Job in the job
 * namespace. A repository that already opens with its own password costs one `restic cat config` and one
 * `key list`. Without a key there is nothing to move: v1 and v2 are the same published password. Throws one
 * sentence when a repository opens with neither password or the Job failed; nothing else was touched then.
 */
export async function migrateToNamespacePasswords(kube: VolumeKube, options: MigrationOptions): Promise<RekeyOutcome | undefined> {
  if (!isKeyed(options.encryptionKey) || options.namespaces.length === 0) return undefined;
  const outcome = await rekeyResticRepositories(kube, {
    namespace: options.jobNamespace,
    repositories: repositoryKeys([...new Set(options.namespaces)].sort(), options.encryptionKey),
    s3: options.s3,
    runId: options.runId,
    ...(options.image ? { image: options.image } : {}),
    ...(options.startTimeoutSeconds ? { startTimeoutSeconds: options.startTimeoutSeconds } : {}),
  });
  if (outcome.locked.length > 0) {
    throw new Error(`The restic repositories of ${namespaceList(outcome.locked)} open with neither their own password nor the shared one of this encryption key, so their volume data was written under another key: use the key they were written with.`);
  }
  if (outcome.failed.length > 0) {
    throw new Error(`Giving the restic repositories of ${namespaceList(outcome.failed)} their own password failed (the restic key Job's log in namespace ${options.jobNamespace} says why): run it again.`);
  }
  return outcome;
}
