// pre-upgrade-check: gathers the facts that decide whether an in-place `juju refresh` is safe right now, and turns
// them into a verdict with every reason, so that an operator (or a script) fixes all of them in one round.
import { neutralWording, type Wording } from '../errors/remedy.ts';
import type { KubeObject } from '../kube/types.ts';
import { formatAge } from './duration.ts';
import { guardState } from './install.ts';
import { CRDS, NAMESPACES, PROFILES, isApiFailure } from './kube-port.ts';
import type { GuardKube } from './kube-port.ts';
import { storageVersionOf, storedVersionsOf } from './migrate.ts';
import type { GuardOptions } from './policy.ts';
import { describeInline as describeError } from '../errors/index.ts';

export interface NewestBackup {
  id: string;
  completedAt: Date;
  /** as list-backups shows it (catalog/verify.ts ListedAuthentication); anything but authenticated is warned about */
  authentication?: 'authenticated' | 'not-authenticated' | 'hmac-mismatch' | 'hmac-unchecked';
  /** sentences on how it was chosen: newer backups passed over (not authenticated), a marker that disagrees */
  notes?: string[];
}

export interface PreflightInputs {
  kube: GuardKube;
  guard: GuardOptions;
  /** `max-backup-age` in milliseconds */
  maxBackupAgeMs: number;
  /** resolves when the backup store answers; rejects with a one-sentence reason otherwise (the charm supplies it) */
  checkS3: () => Promise<void>;
  /** the newest backup that has its commit marker, or undefined when there is none (the charm supplies it) */
  newestCompleteBackup: () => Promise<NewestBackup | undefined>;
  /** how the edge words the settings and steps a reason names (src/errors/remedy.ts); neutral words without it */
  wording?: Wording;
  now?: () => Date;
}

export interface CrdFinding {
  name: string;
  group: string;
  storageVersion: string;
  storedVersions: string[];
  established: boolean;
  /** the charm to refresh only after migrate-stored-versions */
  owner: string;
  problems: string[];
}

export interface PreflightResult {
  verdict: 'go' | 'no-go';
  reasons: string[];
  /** worth knowing, not a reason to stop: e.g. the newest backup is not authenticated */
  warnings: string[];
  crds: CrdFinding[];
}

/** Which Charmed Kubeflow charm installs the CRDs of each kind, for reasons an operator can act on. */
const charmByCrd: Record<string, string> = {
  'profiles.kubeflow.org': 'kubeflow-profiles',
  'notebooks.kubeflow.org': 'jupyter-controller',
  'poddefaults.kubeflow.org': 'admission-webhook',
  'pvcviewers.kubeflow.org': 'pvcviewer-operator',
  'experiments.kubeflow.org': 'katib-controller',
  'suggestions.kubeflow.org': 'katib-controller',
  'trials.kubeflow.org': 'katib-controller',
  'scheduledworkflows.kubeflow.org': 'kfp-schedwf',
  'viewers.kubeflow.org': 'kfp-viewer',
  'tensorboards.tensorboard.kubeflow.org': 'tensorboard-controller',
};

/** The charm that owns a CRD: Juju's creator label first, then what we know of Charmed Kubeflow. */
export function owningCharm(crd: KubeObject): string {
  const name = crd.metadata.name ?? '';
  const labels = crd.metadata.labels ?? {};
  const fromLabels = labels['app.juju.is/created-by'] ?? labels['juju-app'];
  if (fromLabels) return fromLabels;
  if (charmByCrd[name]) return charmByCrd[name];
  const group = (crd.spec as { group?: string }).group ?? '';
  if (group === 'serving.kserve.io') return 'kserve-controller';
  if (name.endsWith('jobs.kubeflow.org')) return 'training-operator';
  return `the charm that installs ${name}`;
}

function isEstablished(crd: KubeObject): boolean {
  const conditions = (crd.status as { conditions?: Array<{ type?: string; status?: string }> } | undefined)?.conditions ?? [];
  return conditions.some((condition) => condition.type === 'Established' && condition.status === 'True');
}


async function checkGuard(inputs: PreflightInputs): Promise<string[]> {
  const { term, remedy } = inputs.wording ?? neutralWording;
  if (!inputs.guard.protectCrds) return [`The CRD guard is off (${term({ term: 'guard-off' })}): ${remedy({ fix: 'turn-guard-on' })} before refreshing.`];
  const state = await guardState(inputs.kube, inputs.guard);
  if (state.state === 'active') return [];
  return [`The CRD guard is ${state.state} (${state.problems.join('; ')}): ${remedy({ fix: 'turn-guard-on' })}.`];
}

async function checkS3(inputs: PreflightInputs): Promise<string[]> {
  try {
    await inputs.checkS3();
    return [];
  } catch (error) {
    return [`The backup store is not reachable: ${describeError(error)}.`];
  }
}

/** Why the newest backup could not be trusted by a restore as it stands, or undefined when it can. */
function authenticationWarning(newest: NewestBackup, { term, remedy }: Wording): string | undefined {
  switch (newest.authentication) {
    case undefined:
    case 'authenticated':
      return undefined;
    case 'hmac-mismatch':
      return `The newest complete backup ${newest.id} is not authenticated: its HMAC does not match under the ${term({ term: 'encryption-key' })} set now (changed after it was made, or made with another key), so ${term({ term: 'restore' })} will refuse it.`;
    case 'hmac-unchecked':
      return `The newest complete backup ${newest.id} is not authenticated: no ${term({ term: 'encryption-key' })} is set to check its HMAC, so a restore would trust the bucket as it is.`;
    case 'not-authenticated':
      return `The newest complete backup ${newest.id} is not authenticated (it carries no HMAC): ${remedy({ fix: 'set-encryption-key' })} and ${remedy({ fix: 'run-backup' })} for one that is; restoring this one with a key needs its backup-id and ${remedy({ fix: 'allow-unauthenticated' })}.`;
  }
}

async function checkBackupAge(inputs: PreflightInputs, warnings: string[]): Promise<string[]> {
  const newest = await inputs.newestCompleteBackup();
  const wording = inputs.wording ?? neutralWording;
  if (!newest) return [`There is no complete backup: ${wording.remedy({ fix: 'run-backup' })} first.`];
  const warning = authenticationWarning(newest, wording);
  if (warning) warnings.push(warning);
  warnings.push(...(newest.notes ?? []));
  const age = (inputs.now?.() ?? new Date()).getTime() - newest.completedAt.getTime();
  if (age <= inputs.maxBackupAgeMs) return [];
  return [
    `The newest complete backup ${newest.id} is ${formatAge(age)} old, older than ${wording.term({ term: 'max-backup-age', age: formatAge(inputs.maxBackupAgeMs) })}: ${wording.remedy({ fix: 'run-backup' })} first.`,
  ];
}

async function inspectCrds(inputs: PreflightInputs): Promise<CrdFinding[]> {
  const groups = new Set(inputs.guard.protectedCrdGroups);
  const findings: CrdFinding[] = [];
  for await (const page of inputs.kube.listPages(CRDS)) {
    for (const crd of page) {
      const group = (crd.spec as { group?: string }).group ?? '';
      if (!groups.has(group)) continue;
      const name = crd.metadata.name ?? '';
      const storageVersion = storageVersionOf(crd);
      const storedVersions = storedVersionsOf(crd);
      const owner = owningCharm(crd);
      const established = isEstablished(crd);
      const problems: string[] = [];
      if (!established) problems.push(`CRD ${name} is not Established: find out why before refreshing ${owner}.`);
      const stale = storedVersions.filter((version) => version !== storageVersion);
      if (stale.length > 0) {
        problems.push(
          `CRD ${name} still has objects stored as ${stale.join(', ')} (storage version ${storageVersion}): ${(inputs.wording ?? neutralWording).remedy({ fix: 'migrate-stored-versions' })} before refreshing ${owner}.`,
        );
      }
      findings.push({ name, group, storageVersion, storedVersions, established, owner, problems });
    }
  }
  return findings.sort((a, b) => a.name.localeCompare(b.name));
}

async function checkProfileNamespaces(inputs: PreflightInputs): Promise<string[]> {
  const reasons: string[] = [];
  try {
    for await (const page of inputs.kube.listPages(PROFILES)) {
      for (const profile of page) {
        const name = profile.metadata.name ?? '';
        const namespace = await inputs.kube.tryGet(NAMESPACES, name);
        const phase = (namespace?.status as { phase?: string } | undefined)?.phase;
        if (!namespace) reasons.push(`Profile ${name} has no namespace: resolve it before refreshing.`);
        else if (phase !== 'Active') reasons.push(`Profile ${name}: namespace ${name} is ${phase ?? 'without a phase'}, not Active: resolve it before refreshing.`);
      }
    }
  } catch (error) {
    // No Profile CRD means no Profiles to check; a missing CRD is reported by the CRD findings when it matters.
    if (!isApiFailure(error, 404)) throw error;
  }
  return reasons;
}

/** Runs one check; a check that cannot run is itself a reason not to go. */
async function reasonsOf(what: string, check: () => Promise<string[]>): Promise<string[]> {
  try {
    return await check();
  } catch (error) {
    return [`Could not check ${what}: ${describeError(error)}.`];
  }
}

export async function preUpgradeCheck(inputs: PreflightInputs): Promise<PreflightResult> {
  let crds: CrdFinding[] = [];
  const warnings: string[] = [];
  const reasons = [
    ...(await reasonsOf('the CRD guard', () => checkGuard(inputs))),
    ...(await reasonsOf('the backup store', () => checkS3(inputs))),
    ...(await reasonsOf('the newest backup', () => checkBackupAge(inputs, warnings))),
    ...(await reasonsOf('the protected CRDs', async () => {
      crds = await inspectCrds(inputs);
      return crds.flatMap((finding) => finding.problems);
    })),
    ...(await reasonsOf('the Profiles', () => checkProfileNamespaces(inputs))),
  ];
  return { verdict: reasons.length === 0 ? 'go' : 'no-go', reasons, warnings, crds };
}

/**
 * The result as action-set keys a script can read: `verdict`, `reasons.<n>`, `crds.<n>.name`, … CRD names hold
 * dots, which action-set keys cannot, so CRDs are numbered.
 */
export function preflightActionResults(result: PreflightResult): Record<string, string> {
  const keys: Record<string, string> = { verdict: result.verdict, 'reason-count': String(result.reasons.length) };
  result.reasons.forEach((reason, index) => (keys[`reasons.${index}`] = reason));
  result.warnings.forEach((warning, index) => (keys[`warnings.${index}`] = warning));
  result.crds.forEach((crd, index) => {
    keys[`crds.${index}.name`] = crd.name;
    keys[`crds.${index}.storage-version`] = crd.storageVersion;
    keys[`crds.${index}.stored-versions`] = crd.storedVersions.join(',');
    keys[`crds.${index}.established`] = String(crd.established);
    keys[`crds.${index}.owner`] = crd.owner;
    keys[`crds.${index}.ok`] = String(crd.problems.length === 0);
  });
  return keys;
}
