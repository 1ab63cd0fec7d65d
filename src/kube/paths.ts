// URL paths of the Kubernetes API for a resource, a namespace and a name.
import type { ApiResource } from './types.ts';

export function groupVersionPath(group: string, version: string): string {
  return group === '' ? `/api/${version}` : `/apis/${group}/${version}`;
}

export function resourcePath(resource: ApiResource, options: { namespace?: string | undefined; name?: string | undefined; version?: string | undefined; subresource?: string } = {}): string {
  let path = groupVersionPath(resource.group, options.version ?? resource.version);
  if (resource.namespaced && options.namespace) path += `/namespaces/${encodeURIComponent(options.namespace)}`;
  path += `/${resource.resource}`;
  if (options.name !== undefined) path += `/${encodeURIComponent(options.name)}`;
  if (options.subresource) path += `/${options.subresource}`;
  return path;
}

/** Appends the defined parameters as a query string. */
export function withQuery(path: string, query: Record<string, string | number | boolean | undefined>): string {
  const params = new URLSearchParams();
  for (const [key, value] of Object.entries(query)) if (value !== undefined && value !== '') params.set(key, String(value));
  const text = params.toString();
  return text ? `${path}?${text}` : path;
}
