// The CRD guard as the charm runs it: the hooks that own it (install, config-changed, upgrade-charm, leader-elected,
// update-status and the s3-credentials relation hooks) converge it on the leader, remove lifts it; every unit reports
// its state in the status, and the status only looks (it never writes the guard).
// Nothing here throws: a guard that cannot be installed is a status, never a failed hook.
import type { GuardOptions } from '../guard/policy.ts';
import type { CharmConfig } from './config.ts';
import { KubeUnavailableError, type CharmRuntime } from './runtime.ts';
import type { StatusNote } from './status.ts';
import { describeInline as describe } from '../errors/index.ts';

import type { GuardFact } from './guard-fact.ts';
export type { GuardFact } from './guard-fact.ts';

export async function guardOptionsOf(config: CharmConfig): Promise<GuardOptions> {
  const { guardOptionsFromConfig } = await import('../guard/policy.ts');
  return guardOptionsFromConfig({
    protectCrds: config['protect-crds'],
    protectedCrdGroups: config['protected-crd-groups'].join(','),
    protectProfiles: config['protect-profiles'],
  });
}


/** A failure of the API as the status says it: the two causes an operator can fix get their own sentence. */
function factOfFailure(error: unknown): GuardFact {
  const status = typeof error === 'object' && error !== null ? (error as { status?: unknown }).status : undefined;
  if (status === 404) {
    return {
      state: 'unsupported',
      summary: 'CRD guard unsupported: this cluster serves no ValidatingAdmissionPolicy (Kubernetes 1.30 or later needed); upgrade Kubernetes or set protect-crds=false',
    };
  }
  if (status === 403) {
    return { state: 'failed', summary: 'CRD guard not installed: the charm may not manage admission policies; run juju trust kubeflow-upgrader --scope=cluster' };
  }
  return { state: 'failed', summary: `CRD guard not installed: ${describe(error)}` };
}

function activeSummary(options: GuardOptions): string {
  if (options.protectCrds && options.protectProfiles) return 'CRDs and Profiles guarded';
  return options.protectCrds ? 'CRDs guarded' : 'Profiles guarded';
}

function wantsGuard(options: GuardOptions): boolean {
  return (options.protectCrds && options.protectedCrdGroups.length > 0) || options.protectProfiles;
}

async function kubeOrUnknown(charm: CharmRuntime) {
  try {
    return await charm.kube();
  } catch (error) {
    if (error instanceof KubeUnavailableError) return undefined;
    throw error;
  }
}

/**
 * The leader makes the cluster hold what the config asks for (the guard, or no guard); other units only look.
 * Returns, and remembers for the status, what is true afterwards.
 */
export function convergeGuard(charm: CharmRuntime): Promise<GuardFact> {
  return learnGuard(charm, 'converge');
}

/** What the guard is, without changing it: for the status of a dispatch whose hook does not own the guard. */
export function inspectGuard(charm: CharmRuntime): Promise<GuardFact> {
  return learnGuard(charm, 'inspect');
}

async function learnGuard(charm: CharmRuntime, mode: 'converge' | 'inspect'): Promise<GuardFact> {
  const fact = await (async (): Promise<GuardFact> => {
    const config = await charm.config();
    // A bad config blocks the unit on its own; the guard stays as it was until the config is fixed.
    if (!config.ok) return { state: 'unknown' };
    let options: GuardOptions;
    try {
      options = await guardOptionsOf(config.config);
    } catch (error) {
      return { state: 'failed', summary: describe(error) };
    }
    try {
      const kube = await kubeOrUnknown(charm);
      if (!kube) return { state: 'unknown' };
      const { ensureGuard, guardState } = await import('../guard/install.ts');
      if (mode === 'converge' && (await charm.isLeader())) {
        const result = await ensureGuard(kube, options);
        const changed = [...result.created, ...result.updated, ...result.removed];
        if (changed.length > 0) await charm.log('INFO', `CRD guard converged: created ${result.created.length}, updated ${result.updated.length}, removed ${result.removed.length} (${changed.join(', ')})`);
        return wantsGuard(options) ? { state: 'active', summary: activeSummary(options) } : { state: 'off', summary: 'CRD guard off (protect-crds=false)' };
      }
      const state = await guardState(kube, options);
      if (!wantsGuard(options)) return { state: 'off', summary: 'CRD guard off (protect-crds=false)' };
      if (state.state === 'active') return { state: 'active', summary: activeSummary(options) };
      return { state: state.state, summary: state.summary };
    } catch (error) {
      await charm.log('WARNING', `CRD guard: ${describe(error)}`);
      return factOfFailure(error);
    }
  })();
  charm.facts.guard = fact;
  return fact;
}

/** On remove, the leader takes the guard out (a unit that is not the leader leaves it to the application's leader). */
export async function liftGuard(charm: CharmRuntime): Promise<void> {
  try {
    if (!(await charm.isLeader())) return;
    const kube = await kubeOrUnknown(charm);
    if (!kube) return;
    const { removeGuard } = await import('../guard/install.ts');
    const removed = await removeGuard(kube);
    if (removed.length > 0) await charm.log('INFO', `CRD guard lifted: ${removed.join(', ')}`);
  } catch (error) {
    await charm.log('WARNING', `CRD guard could not be lifted: ${describe(error)}; delete the kubeflow-upgrader ValidatingAdmissionPolicies by hand`);
  }
}

/** The status note of the guard: blocked when it should be there and cannot be; otherwise its state. */
export async function guardNotes(charm: CharmRuntime): Promise<StatusNote[]> {
  const fact = charm.facts.guard ?? (await inspectGuard(charm));
  switch (fact.state) {
    case 'unknown':
      return [];
    case 'unsupported':
    case 'failed':
      return [{ level: 'blocked', text: fact.summary }];
    default:
      return [{ level: 'active', text: fact.summary }];
  }
}
