// What a request asks for, read from its method and URL alone, after kubernetes/kubernetes
// staging/src/k8s.io/apiserver/pkg/endpoints/request/requestinfo.go (RequestInfoFactory.NewRequestInfo): paths under
// /api/v1 and /apis/<group>/<version> are resource requests, everything else (/, /api, /apis, /apis/<group>, /version,
// /openapi/v3, /healthz) a non-resource request whose verb is the lowercased method. The verb of a resource request:
// POST create, GET/HEAD get (list without a name, watch with ?watch=true; a list with fieldSelector metadata.name=<x>
// names <x>), PUT update, PATCH patch, DELETE delete (deletecollection without a name). /namespaces/<ns>/<resource>/…
// is namespaced; /namespaces/<ns> itself is the namespace resource with name and namespace <ns> (so a RoleBinding in
// <ns> can let a user read their own namespace), and its status and finalize are subresources.

export interface RequestInfo {
  isResourceRequest: boolean;
  path: string;
  verb: string;
  apiPrefix: string;
  apiGroup: string;
  apiVersion: string;
  namespace: string;
  resource: string;
  subresource: string;
  name: string;
  parts: string[];
}

const API_PREFIXES = new Set(['api', 'apis']);
const GROUPLESS_PREFIXES = new Set(['api']);
const SPECIAL_VERBS = new Set(['proxy', 'watch']);
const SPECIAL_VERBS_NO_SUBRESOURCES = new Set(['proxy']);
const NAMESPACE_SUBRESOURCES = new Set(['status', 'finalize']);
// strconv.ParseBool, which the query parameter codec uses for ?watch=
const TRUE = new Set(['1', 't', 'T', 'TRUE', 'true', 'True']);

/** path.IsValidPathSegmentName: not "." or "..", no "/" or "%" */
function validPathSegment(name: string): boolean {
  return name !== '.' && name !== '..' && !name.includes('/') && !name.includes('%');
}

/** fields.Selector.RequiresExactMatch("metadata.name"): one of the AND-ed terms is metadata.name=<x> or ==<x> */
function exactName(fieldSelector: string | null): string | undefined {
  if (!fieldSelector) return undefined;
  for (const term of fieldSelector.split(',')) {
    const m = /^\s*metadata\.name\s*(==|=)\s*(.*?)\s*$/.exec(term);
    if (m) return m[2];
  }
  return undefined;
}

export function requestInfo(method: string, url: URL): RequestInfo {
  const path = decodeURIComponent(url.pathname);
  const info: RequestInfo = {
    isResourceRequest: false, path, verb: method.toLowerCase(), apiPrefix: '', apiGroup: '', apiVersion: '',
    namespace: '', resource: '', subresource: '', name: '', parts: [],
  };
  let parts = url.pathname.replace(/^\/+|\/+$/g, '').split('/').map(decodeURIComponent);
  if (parts.length < 3 || !API_PREFIXES.has(parts[0]!)) return info;
  info.apiPrefix = parts[0]!;
  parts = parts.slice(1);
  if (!GROUPLESS_PREFIXES.has(info.apiPrefix)) {
    if (parts.length < 3) return info;
    info.apiGroup = parts[0]!;
    parts = parts.slice(1);
  }
  info.isResourceRequest = true;
  info.apiVersion = parts[0]!;
  parts = parts.slice(1);
  if (SPECIAL_VERBS.has(parts[0]!)) {
    info.verb = parts[0]!;
    parts = parts.slice(1);
  } else {
    info.verb = ({ POST: 'create', GET: 'get', HEAD: 'get', PUT: 'update', PATCH: 'patch', DELETE: 'delete' } as Record<string, string>)[method] ?? '';
  }
  if (parts[0] === 'namespaces') {
    if (parts.length > 1) {
      info.namespace = parts[1]!;
      if (parts.length > 2 && !NAMESPACE_SUBRESOURCES.has(parts[2]!)) parts = parts.slice(2);
    }
  }
  info.parts = parts;
  if (parts.length >= 3 && !SPECIAL_VERBS_NO_SUBRESOURCES.has(info.verb)) info.subresource = parts[2]!;
  if (parts.length >= 2) info.name = parts[1]!;
  if (parts.length >= 1) info.resource = parts[0]!;
  if (!info.name && info.verb === 'get') {
    info.verb = TRUE.has(url.searchParams.get('watch') ?? '') ? 'watch' : 'list';
    const name = exactName(url.searchParams.get('fieldSelector'));
    if (name !== undefined && validPathSegment(name)) info.name = name;
  }
  if (!info.name && info.verb === 'delete') info.verb = 'deletecollection';
  return info;
}
