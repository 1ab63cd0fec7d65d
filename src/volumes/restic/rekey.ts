// Adding the password of a changed `encryption-key` to the profile namespaces' restic repositories, so that older
// snapshots stay readable and the next backup opens the same repository. restic keeps one master key per repository
// and stores it once per password, wrapped under that password (restic/restic internal/repository/key.go AddKey);
// `restic key add --new-password-file` opens the repository with the current password and writes another key file
// for the new one, then checks that the new one opens it (cmd/restic/cmd_key.go addKey, switchToNewKeyAndRemoveIfBroken).
// The data is not encrypted again: both passwords open the same master key.
//
// One Job from the hardened template (src/jobs/template.ts) does every repository of the location, one after another:
// - a repository that already opens with the new password (`restic cat config`) is left as it is, so a rerun after a
//   crash or a partial failure only does what is left;
// - otherwise `key add`, authenticated by the old password;
// - a repository the old password does not open either is reported apart ("neither key opens it").
// The old key file is kept (docs/reliability.md says why). The Job mounts no claim and runs as nobody.
import { createHash } from 'node:crypto';
import type { KubeObject } from '../../kube/types.ts';
import { buildHardenedJob, buildRunSecret, CONTROL_PLANE_IDENTITY, STORE_CA_DIR, STORE_CA_KEY } from '../../jobs/template.ts';
import { JOBS, SECRETS, type VolumeKube } from '../kube-port.ts';
import { jobSucceeded } from '../outcome.ts';
import { MOVER_CONTAINER, TERMINATION_LOG } from '../job.ts';
import type { MoverS3Settings } from '../settings.ts';
import { createOrReplace } from '../adopt.ts';
import { resticJobFailureReason, runResticJobToEnd } from './run-job.ts';
import { DEFAULT_RESTIC_IMAGE, resticRepositoryUrl } from './job.ts';

export const REKEY_COMPONENT = 'restic-rekey';
const LABEL_COMPONENT = 'app.kubernetes.io/component';

/**
 * The script: the two passwords go from the environment into files of the Job's private /tmp (restic reads the new
 * one only from a file), and out of the environment. Each repository is one line `<namespace> <restic URL>` of
 * REKEY_REPOSITORIES; namespaces are DNS labels, so they go into the JSON report as they are.
 */
export const REKEY_SCRIPT = [
  'set -eu',
  'umask 077',
  'err=/tmp/rekey.err',
  ': > "$err"',
  "printf '%s' \"$RESTIC_OLD_PASSWORD\" > /tmp/old-password",
  "printf '%s' \"$RESTIC_NEW_PASSWORD\" > /tmp/new-password",
  'unset RESTIC_OLD_PASSWORD RESTIC_NEW_PASSWORD RESTIC_PASSWORD',
  'set -- -o "s3.bucket-lookup=$MOVER_BUCKET_LOOKUP"',
  `if [ -f "${STORE_CA_DIR}/${STORE_CA_KEY}" ]; then set -- "$@" --cacert "${STORE_CA_DIR}/${STORE_CA_KEY}"; fi`,
  'added=""; unchanged=""; locked=""; failed=""',
  // a space-separated list of names as the items of a JSON array
  'list() { [ -n "$1" ] || return 0; printf \'"%s",\' $1 | sed \'s/,$//\'; }',
  'while read -r ns repo; do',
  '  [ -n "$ns" ] || continue',
  '  if restic -r "$repo" "$@" --password-file /tmp/new-password cat config > /dev/null 2>> "$err"; then',
  '    unchanged="$unchanged $ns"; continue',
  '  fi',
  '  if ! restic -r "$repo" "$@" --password-file /tmp/old-password cat config > /dev/null 2>> "$err"; then',
  // restic's words when no key file opens with the password (internal/repository/repository.go SearchKey)
  '    if tail -n 3 "$err" | grep -q "wrong password or no key found"; then locked="$locked $ns"; else failed="$failed $ns"; echo "$ns: $(tail -n 1 "$err")" >&2; fi',
  '    continue',
  '  fi',
  '  if restic -r "$repo" "$@" --password-file /tmp/old-password key add --host kubeflow-upgrader --new-password-file /tmp/new-password > /dev/null 2>> "$err" \\',
  '    && restic -r "$repo" "$@" --password-file /tmp/new-password cat config > /dev/null 2>> "$err"; then',
  '    added="$added $ns"',
  '  else',
  '    failed="$failed $ns"; echo "$ns: $(tail -n 1 "$err")" >&2',
  '  fi',
  'done <<EOF',
  '$REKEY_REPOSITORIES',
  'EOF',
  `printf '{"rekey":1,"added":[%s],"unchanged":[%s],"locked":[%s],"failed":[%s]}' "$(list "$added")" "$(list "$unchanged")" "$(list "$locked")" "$(list "$failed")" > ${TERMINATION_LOG}`,
  // the failures' lines (stderr) are what a failed Job's Pod reports when the message is the log
  '[ -z "$failed" ] || exit 1',
].join('\n');

/** What the Job found per repository (namespace names). */
export interface RekeyOutcome {
  /** the new password was added */
  added: string[];
  /** the repository already opened with the new password */
  unchanged: string[];
  /** neither the old nor the new password opens it */
  locked: string[];
  /** something else went wrong (S3, a lock); a rerun tries again */
  failed: string[];
}

export function parseRekeyOutcome(message: string | undefined): RekeyOutcome | undefined {
  const start = message?.indexOf('{"rekey":1') ?? -1;
  if (!message || start < 0) return undefined;
  try {
    const parsed = JSON.parse(message.slice(start, message.indexOf('}', start) + 1)) as Record<string, unknown>;
    const names = (value: unknown) => (Array.isArray(value) && value.every((v) => typeof v === 'string') ? (value as string[]) : undefined);
    const [added, unchanged, locked, failed] = ['added', 'unchanged', 'locked', 'failed'].map((k) => names(parsed[k]));
    if (!added || !unchanged || !locked || !failed) return undefined;
    return { added, unchanged, locked, failed };
  } catch {
    return undefined;
  }
}

export interface RekeyOptions {
  /** where the Job runs: the charm's own namespace (the model's), which every repository is reachable from */
  namespace: string;
  /** profile namespaces whose repository (`<prefix>/restic/<namespace>`) gets the new password */
  repositories: string[];
  s3: MoverS3Settings;
  oldPassword: string;
  newPassword: string;
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
      RESTIC_OLD_PASSWORD: options.oldPassword, RESTIC_NEW_PASSWORD: options.newPassword,
    },
    caChain: options.s3.tlsCaChain,
  });
}

export function buildRekeyJob(options: RekeyOptions, secretName: string): KubeObject {
  const name = rekeyJobName(options.runId);
  const secretEnv = ['AWS_ACCESS_KEY_ID', 'AWS_SECRET_ACCESS_KEY', 'RESTIC_OLD_PASSWORD', 'RESTIC_NEW_PASSWORD']
    .map((key) => ({ name: key, valueFrom: { secretKeyRef: { name: secretName, key } } }));
  const plainEnv = Object.entries({
    REKEY_REPOSITORIES: options.repositories.map((ns) => `${ns} ${resticRepositoryUrl(options.s3, ns)}`).join('\n'),
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
      image: options.image ?? DEFAULT_RESTIC_IMAGE,
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
  if (options.repositories.length === 0) return { added: [], unchanged: [], locked: [], failed: [] };
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
      const why = resticJobFailureReason(run, [options.s3.secretKey, options.oldPassword, options.newPassword], deadline, 'it reported nothing');
      throw new Error(`the restic key Job ${jobName} failed: ${why}`);
    }
    // a failed Job stays for `kubectl logs` until its TTL; the next run replaces it
    if (jobSucceeded(run.finished)) await kube.delete(JOBS, options.namespace, jobName);
    return outcome;
  } finally {
    await kube.delete(SECRETS, options.namespace, secretName).catch(() => undefined);
  }
}
