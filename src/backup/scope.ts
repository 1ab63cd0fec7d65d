// Which Profiles and namespaces one backup covers, decided from the cluster and the user's request before anything
// is written: an unknown name is refused with the list of names that do exist.
import type { BackupKube } from './kube-port.ts';
import type { KubeObject } from '../kube/types.ts';
import { judgeProfileNamespaces, type LeftOutNamespace } from '../kubeflow/profile-namespaces.ts';
import { KfuError } from '../errors/index.ts';

/** A problem with what the user asked for: the message is the one sentence the user sees. */
export class BackupInputError extends KfuError {
  static override readonly errorId = 'BackupInputError';
  constructor(sentence: string) {
    super(sentence, { kind: 'input' });
  }
}

export interface ScopeRequest {
  /** namespaces asked for; empty means every profile namespace */
  namespaces: readonly string[];
  /** Profiles asked for (snapshot-profiles); empty means every Profile */
  profiles: readonly string[];
  profileNamespaceSelector: string;
}

export interface ResolvedScope {
  profiles: KubeObject[];
  /** every profile namespace of the cluster, with the reason it counts */
  profileNamespaces: Map<string, string>;
  /** namespaces that look like profile namespaces but no backup takes (the restore could not recreate them), with why */
  leftOut: LeftOutNamespace[];
  /** the namespaces this backup covers */
  namespaces: Set<string>;
  /** the Profiles this backup covers (undefined: all) */
  profileNames: Set<string> | undefined;
}

function listOf(names: Iterable<string>): string {
  const sorted = [...names].sort();
  if (sorted.length === 0) return 'none';
  return sorted.length > 20 ? `${sorted.slice(0, 20).join(', ')} and ${sorted.length - 20} more` : sorted.join(', ');
}

export async function resolveScope(kube: BackupKube, request: ScopeRequest): Promise<ResolvedScope> {
  const profileResource = await kube.findByResource('kubeflow.org', 'profiles');
  const namespaceResource = await kube.findByResource('', 'namespaces');
  if (!namespaceResource) throw new Error('The API server does not serve namespaces; is the kubeconfig pointing at a Kubernetes API server?');
  // two independent LISTs: side by side
  const [profiles, namespaces] = await Promise.all([
    profileResource ? kube.listAll(profileResource).then((l) => l.items) : [],
    kube.listAll(namespaceResource).then((l) => l.items),
  ]);
  const { taken: profileNamespaces, leftOut } = judgeProfileNamespaces(namespaces, profiles, request.profileNamespaceSelector);

  let profileNames: Set<string> | undefined;
  let covered = new Set(profileNamespaces.keys());
  if (request.profiles.length > 0) {
    const known = new Set(profiles.map((p) => p.metadata.name!));
    const unknown = request.profiles.filter((name) => !known.has(name));
    if (unknown.length > 0) {
      throw new BackupInputError(`No Profile named ${listOf(unknown)}; the Profiles are: ${listOf(known)}.`);
    }
    profileNames = new Set(request.profiles);
    covered = new Set([...covered].filter((ns) => profileNames!.has(ns)));
  }
  if (request.namespaces.length > 0) {
    const unknown = request.namespaces.filter((ns) => !profileNamespaces.has(ns));
    const explained = leftOut.find((entry) => unknown.includes(entry.namespace));
    if (unknown.length === 1 && explained) {
      throw new BackupInputError(`Namespace ${explained.namespace} cannot be backed up: ${explained.reason}.`);
    }
    if (unknown.length > 0) {
      throw new BackupInputError(
        `${unknown.length === 1 ? 'Namespace' : 'Namespaces'} ${listOf(unknown)} ${unknown.length === 1 ? 'is not a profile namespace' : 'are not profile namespaces'}; the profile namespaces are: ${listOf(profileNamespaces.keys())}.`,
      );
    }
    covered = new Set(request.namespaces.filter((ns) => covered.has(ns)));
    // Backing up a namespace without its Profile would make it unrestorable: the Profile comes along.
    profileNames ??= new Set(request.namespaces.filter((ns) => profiles.some((p) => p.metadata.name === ns)));
  }
  // Left-out namespaces are reported for the namespaces this backup covers: all of them when none were named.
  const reported = request.namespaces.length > 0 || request.profiles.length > 0 ? [] : leftOut;
  return { profiles, profileNamespaces, leftOut: reported, namespaces: covered, profileNames };
}
