// Which resources the server serves: every group and version, merged per group+resource, preferred version first.
import type { ApiResource } from './types.ts';
import { apiVersionOf } from './types.ts';

export interface ApiGroupList {
  groups: Array<{ name: string; versions: Array<{ groupVersion: string; version: string }>; preferredVersion?: { version: string } }>;
}
export interface ApiResourceList {
  resources: Array<{ name: string; kind: string; namespaced: boolean; verbs?: string[] }>;
}

/** One group's version as the discovery documents describe it. */
export interface GroupVersionResources {
  group: string;
  version: string;
  preferredVersion: string;
  /** the group's versions in server order (preferred first, then by Kubernetes version priority) */
  groupVersions: string[];
  resources: ApiResourceList['resources'];
}

/** Merges per-version documents into one ApiResource per group+resource, at its preferred serving version. */
export function mergeDiscovery(documents: GroupVersionResources[]): ApiResource[] {
  const byKey = new Map<string, { doc: GroupVersionResources; entries: Map<string, ApiResourceList['resources'][number]> }>();
  for (const doc of documents) {
    for (const entry of doc.resources) {
      if (entry.name.includes('/')) continue; // subresources (status, scale, log, ...) are not resources of their own
      const key = `${doc.group}/${entry.name}`;
      let slot = byKey.get(key);
      if (!slot) byKey.set(key, (slot = { doc, entries: new Map() }));
      slot.entries.set(doc.version, entry);
    }
  }
  const resources: ApiResource[] = [];
  for (const { doc, entries } of byKey.values()) {
    const order = [doc.preferredVersion, ...doc.groupVersions.filter((v) => v !== doc.preferredVersion)];
    const versions = order.filter((v) => entries.has(v));
    for (const v of entries.keys()) if (!versions.includes(v)) versions.push(v);
    const version = versions[0]!;
    const entry = entries.get(version)!;
    resources.push({
      group: doc.group,
      version,
      resource: entry.name,
      kind: entry.kind,
      namespaced: entry.namespaced,
      verbs: entry.verbs ?? [],
      preferredVersion: doc.preferredVersion,
      versions,
    });
  }
  return resources.sort((a, b) => a.group.localeCompare(b.group) || a.resource.localeCompare(b.resource));
}

/** Lookups over one discovery result. */
export class ResourceIndex {
  private readonly byGroupResource = new Map<string, ApiResource>();
  private readonly byGroupKind = new Map<string, ApiResource>();

  constructor(readonly resources: ApiResource[], readonly problems: string[] = []) {
    for (const r of resources) {
      this.byGroupResource.set(`${r.group}/${r.resource}`, r);
      if (!this.byGroupKind.has(`${r.group}/${r.kind}`)) this.byGroupKind.set(`${r.group}/${r.kind}`, r);
    }
  }

  byResource(group: string, resource: string): ApiResource | undefined {
    return this.byGroupResource.get(`${group}/${resource}`);
  }

  /** By apiVersion ('v1', 'kubeflow.org/v1beta1') and kind; answers at that version when the resource serves it. */
  byKind(apiVersion: string, kind: string): ApiResource | undefined {
    const slash = apiVersion.lastIndexOf('/');
    const group = slash < 0 ? '' : apiVersion.slice(0, slash);
    const version = slash < 0 ? apiVersion : apiVersion.slice(slash + 1);
    const found = this.byGroupKind.get(`${group}/${kind}`);
    if (!found || !found.versions.includes(version)) return undefined;
    return version === found.version ? found : { ...found, version };
  }

  apiVersionOf(resource: ApiResource): string {
    return apiVersionOf(resource.group, resource.version);
  }
}
