// Phase 1's second half: wait until the profile controller has made each Profile's namespace, it is Active, and it
// carries the owner annotation of its Profile. One watch over namespaces serves every Profile (a restore of 1000
// Profiles does not open 1000 watches). On timeout, the Profiles' own status says why (e.g. the controller refused
// a namespace that existed before with another owner).
import type { KubeClient } from '../kube/client.ts';
import type { KubeObject } from '../kube/types.ts';
import { ownerAnnotation, profileOwner } from '../kubeflow/profile-namespaces.ts';
import { RestoreStoppedError, listOf } from './errors.ts';

export interface WaitForNamespacesOptions {
  timeoutMs: number;
  progress?: (message: string) => void | Promise<void>;
}

function namespaceState(namespace: KubeObject | undefined, owner: string | undefined): string | undefined {
  if (!namespace) return 'the namespace does not exist yet';
  const phase = (namespace.status as { phase?: string } | undefined)?.phase;
  if (phase && phase !== 'Active') return `the namespace is ${phase}`;
  const annotated = namespace.metadata.annotations?.[ownerAnnotation];
  if (annotated !== owner) return `the namespace's owner annotation is ${annotated === undefined ? 'missing' : `"${annotated}"`}, not "${owner ?? ''}"`;
  return undefined;
}

/** what the Profile's status conditions say, e.g. the controller's refusal */
function profileSays(profile: KubeObject | undefined): string | undefined {
  const conditions = (profile?.status as { conditions?: Array<{ type?: string; status?: string; message?: string; reason?: string }> } | undefined)?.conditions ?? [];
  const said = conditions.map((c) => c.message || c.reason).filter((m): m is string => Boolean(m));
  return said.length ? said.join('; ') : undefined;
}

/** Resolves once every Profile's namespace is ready; throws one sentence naming the namespaces that are not. */
export async function waitForProfileNamespaces(kube: KubeClient, profiles: readonly KubeObject[], options: WaitForNamespacesOptions): Promise<void> {
  if (profiles.length === 0) return;
  const namespaces = await kube.findByResource('', 'namespaces');
  if (!namespaces) throw new Error('The API server does not serve namespaces.');
  const owners = new Map(profiles.map((p) => [p.metadata.name!, profileOwner(p)]));
  const waiting = new Map<string, string>([...owners.keys()].map((name) => [name, 'the namespace does not exist yet']));
  let stop: (() => void) | undefined;
  let timer: NodeJS.Timeout | undefined;
  let ticker: NodeJS.Timeout | undefined;
  try {
    await new Promise<void>((resolve, reject) => {
      timer = setTimeout(() => resolve(), options.timeoutMs);
      ticker = setInterval(() => void options.progress?.(`waiting for the profile controller: ${owners.size - waiting.size}/${owners.size} profile namespaces ready`), 2000);
      stop = kube.watch(namespaces, {
        onError: (error) => reject(error instanceof Error ? error : new Error(String(error))),
      }, (event) => {
        const name = event.object.metadata.name ?? '';
        if (!owners.has(name)) return;
        const state = event.type === 'DELETED' ? 'the namespace was deleted' : namespaceState(event.object, owners.get(name));
        if (state) waiting.set(name, state);
        else waiting.delete(name);
        if (waiting.size === 0) resolve();
      });
    });
  } finally {
    stop?.();
    clearTimeout(timer);
    clearInterval(ticker);
  }
  if (waiting.size === 0) return;
  const profileResource = await kube.findByResource('kubeflow.org', 'profiles');
  const reasons: string[] = [];
  for (const [name, state] of [...waiting].sort(([a], [b]) => a.localeCompare(b))) {
    const profile = profileResource ? await kube.tryGet(profileResource, name) : undefined;
    const said = profileSays(profile);
    reasons.push(`${name} (${said ? `Profile says: ${said}` : state})`);
  }
  throw new RestoreStoppedError(
    `After ${Math.round(options.timeoutMs / 1000)}s the profile controller had not made ${waiting.size === 1 ? 'namespace' : 'namespaces'} ${listOf(reasons)}; nothing was restored into ${waiting.size === 1 ? 'it' : 'them'} — fix or delete the conflicting namespace and rerun the restore (or raise restore-wait-timeout).`,
  );
}
