// Phase 1's second half: wait until the profile controller has made each Profile's namespace, it is Active, and it
// carries the owner annotation of its Profile. One watch over namespaces serves every Profile (a restore of 1000
// Profiles does not open 1000 watches). On timeout, the namespaces' own state says why. Not the Profiles' status: the
// controller records its refusal with a plain Update, which the Profile CRD's status subresource drops (kubeflow/
// kubeflow v1.10.0 components/profile-controller/controllers/profile_controller.go, appendErrorConditionAndReturn),
// so a real Profile never shows it.
import type { RestoreKube } from './kube-port.ts';
import type { KubeObject } from '../kube/types.ts';
import { ownerAnnotation, profileOwner } from '../kubeflow/profile-namespaces.ts';
import { RestoreStoppedError, listOf } from './errors.ts';
import { neutralWording, type Wording } from '../errors/remedy.ts';

export interface WaitForNamespacesOptions {
  timeoutMs: number;
  wording?: Wording;
  progress?: (message: string) => void | Promise<void>;
}

function namespaceState(namespace: KubeObject | undefined, owner: string | undefined): string | undefined {
  if (!namespace) return 'the namespace does not exist yet';
  const phase = (namespace.status as { phase?: string } | undefined)?.phase;
  if (phase && phase !== 'Active') return `the namespace is ${phase}`;
  const annotated = namespace.metadata.annotations?.[ownerAnnotation];
  if (annotated !== owner) {
    return `the namespace exists with owner annotation ${annotated === undefined ? 'missing' : `"${annotated}"`}, not "${owner ?? ''}", and the profile controller never takes over a namespace the Profile's owner does not own`;
  }
  return undefined;
}

/** Resolves once every Profile's namespace is ready; throws one sentence naming the namespaces that are not. */
export async function waitForProfileNamespaces(kube: RestoreKube, profiles: readonly KubeObject[], options: WaitForNamespacesOptions): Promise<void> {
  const watch = await watchProfileNamespaces(kube, profiles, { ...(options.progress ? { progress: options.progress } : {}) });
  const failure = await watch.settle(options.timeoutMs, options.wording);
  if (failure) throw new RestoreStoppedError(failure);
}

export interface NamespaceWatch {
  /**
   * Starts the timeout and resolves once every namespace is ready (undefined), or when the timeout passes with the
   * sentence naming the namespaces that are not and why. Rejects when the watch itself fails. Stops the watch.
   */
  settle(timeoutMs: number, wording?: Wording): Promise<string | undefined>;
  /** stops the watch without waiting (after an error elsewhere) */
  stop(): void;
}

/**
 * One watch over namespaces for every Profile, started before the Profiles are written: `onReady` is called once per
 * namespace, the first time it is ready, so the restore into it starts while other Profiles are still being made.
 * The timeout starts only with `settle`, after the Profiles are written (restore-wait-timeout is the profile
 * controller's time, not ours).
 */
export async function watchProfileNamespaces(
  kube: RestoreKube, profiles: readonly KubeObject[], options: { progress?: (message: string) => void | Promise<void>; onReady?: (namespace: string) => void },
): Promise<NamespaceWatch> {
  const owners = new Map(profiles.map((p) => [p.metadata.name!, profileOwner(p)]));
  const waiting = new Map<string, string>([...owners.keys()].map((name) => [name, 'the namespace does not exist yet']));
  const announced = new Set<string>();
  let failed: Error | undefined;
  let wake: (() => void) | undefined;
  let stop: (() => void) | undefined;
  if (owners.size > 0) {
    const namespaces = await kube.findByResource('', 'namespaces');
    if (!namespaces) throw new Error('The API server does not serve namespaces.');
    stop = kube.watch(namespaces, {
      onError: (error) => {
        failed ??= error instanceof Error ? error : new Error(String(error));
        wake?.();
      },
    }, (event) => {
      const name = event.object.metadata.name ?? '';
      if (!owners.has(name)) return;
      const state = event.type === 'DELETED' ? 'the namespace was deleted' : namespaceState(event.object, owners.get(name));
      if (state) {
        waiting.set(name, state);
        return;
      }
      waiting.delete(name);
      if (!announced.has(name)) {
        announced.add(name);
        options.onReady?.(name);
      }
      if (waiting.size === 0) wake?.();
    });
  }

  const settle = async (timeoutMs: number, wording: Wording = neutralWording): Promise<string | undefined> => {
    let timer: NodeJS.Timeout | undefined;
    let ticker: NodeJS.Timeout | undefined;
    try {
      if (waiting.size > 0 && !failed) {
        await new Promise<void>((resolve) => {
          wake = resolve;
          timer = setTimeout(resolve, timeoutMs);
          ticker = setInterval(() => void options.progress?.(`waiting for the profile controller: ${owners.size - waiting.size}/${owners.size} profile namespaces ready`), 2000);
        });
      }
    } finally {
      stop?.();
      clearTimeout(timer);
      clearInterval(ticker);
    }
    if (failed) throw failed;
    if (waiting.size === 0) return undefined;
    const reasons = [...waiting].sort(([a], [b]) => a.localeCompare(b)).map(([name, state]) => `${name} (${state})`);
    return `After ${Math.round(timeoutMs / 1000)}s the profile controller had not made ${waiting.size === 1 ? 'namespace' : 'namespaces'} ${listOf(reasons)}; nothing was restored into ${waiting.size === 1 ? 'it' : 'them'} — fix or delete the conflicting namespace and rerun the restore, which asks the profile controller to look at the Profile again (or ${wording.remedy({ fix: 'raise-wait-timeout' })}).`;
  };
  return { settle, stop: () => stop?.() };
}
