// What the restore gateway does with one request, decided before anything is sent to S3: restic's REST protocol
// (restic/restic doc/REST_backend.md; the client, internal/backend/rest/rest.go, with the REST layout of
// internal/backend/layout.go: `<repo>/config`, `<repo>/<type>/<name>`, data without the two-letter folders, and
// `<repo>/<type>/` to list) mapped onto the bucket's S3 layout of the same repository (`<root>/<repo>/data/<xx>/<name>`,
// as `s3:` repositories and rclone serve restic store it: rclone/rclone cmd/serve/restic).
// The rule of `rclone serve restic --private-repos` holds: user `<ns>` reaches `/<ns>/` only. Only lock files are
// written or removed (the restore's non-exclusive lock, and `unlock` of a stale one); everything else stored is read.

export const REST_V2 = 'application/vnd.x.restic.rest.v2';
const TYPES = ['data', 'keys', 'locks', 'snapshots', 'index'] as const;
type FileType = (typeof TYPES)[number];
/** every name restic gives a file is the hex SHA-256 of its content or of random bytes (restic internal/restic/id.go) */
const NAME = /^[0-9a-f]{64}$/;

export type Route =
  | { kind: 'head'; key: string }
  | { kind: 'redirect'; key: string }
  | { kind: 'list'; prefix: string; nested: boolean }
  | { kind: 'write-lock'; key: string }
  | { kind: 'delete-lock'; key: string }
  | { kind: 'refuse'; status: 403 | 404 | 405; reason: string };

/** The S3 key of a file of `repo` under `root` (`<prefix>/restic`). */
export function objectKey(root: string, repo: string, type: FileType | 'config', name = ''): string {
  const base = root === '' ? repo : `${root}/${repo}`;
  if (type === 'config') return `${base}/config`;
  return type === 'data' ? `${base}/data/${name.slice(0, 2)}/${name}` : `${base}/${type}/${name}`;
}

/**
 * The route of `method` on `path` (the URL's path, query removed; a query is never needed: `?create=true` is refused
 * with the POST it comes with) for the authenticated `user`.
 */
export function routeOf(method: string, path: string, user: string, root: string): Route {
  const parts = path.split('/');
  // '' before the first slash, then the repository, then config or a type, then a name or '' (a listing)
  if (parts[0] !== '' || parts.length < 2 || parts.length > 4) return { kind: 'refuse', status: 404, reason: 'no such path' };
  const repo = decodeURIComponent(parts[1] ?? '');
  if (repo !== user) return { kind: 'refuse', status: 403, reason: `user ${user} reaches /${user}/ only` };
  const what = parts[2] ?? '';
  const name = parts[3];
  const reads = method === 'GET' || method === 'HEAD';
  const writes = method === 'POST' || method === 'DELETE';
  if (!reads && !writes) return { kind: 'refuse', status: 405, reason: `${method} is not part of restic's REST protocol` };
  if (what === 'config' && name === undefined) {
    if (reads) return { kind: method === 'HEAD' ? 'head' : 'redirect', key: objectKey(root, repo, 'config') };
    return { kind: 'refuse', status: 403, reason: 'this gateway serves restores: it writes lock files only' };
  }
  if (what === '' && name === undefined) {
    return { kind: 'refuse', status: writes ? 403 : 404, reason: writes ? 'this gateway creates no repository' : 'no such path' };
  }
  if (!(TYPES as readonly string[]).includes(what) || name === undefined) return { kind: 'refuse', status: 404, reason: 'no such path' };
  const type = what as FileType;
  if (name === '') {
    if (method !== 'GET') return { kind: 'refuse', status: 405, reason: 'a folder is only listed' };
    const prefix = `${root === '' ? repo : `${root}/${repo}`}/${type}/`;
    return { kind: 'list', prefix, nested: type === 'data' };
  }
  if (!NAME.test(name)) return { kind: 'refuse', status: 404, reason: 'no such file' };
  const key = objectKey(root, repo, type, name);
  if (reads) return { kind: method === 'HEAD' ? 'head' : 'redirect', key };
  if (type !== 'locks') return { kind: 'refuse', status: 403, reason: 'this gateway serves restores: it writes and removes lock files only' };
  return { kind: method === 'POST' ? 'write-lock' : 'delete-lock', key };
}

/** A listing's body: v2 names with sizes when restic asks for it (Accept), v1 names otherwise. */
export function listingBody(objects: readonly { key: string; size: number }[], prefix: string, nested: boolean, v2: boolean): string {
  const files = objects.flatMap((o) => {
    const rest = o.key.slice(prefix.length);
    const name = nested ? rest.slice(rest.lastIndexOf('/') + 1) : rest;
    // data/<xx>/<name> only, or <type>/<name> only: anything else in the folder is not a file restic wrote
    const shape = nested ? /^[0-9a-f]{2}\/[0-9a-f]{64}$/.test(rest) : NAME.test(rest);
    return o.key.startsWith(prefix) && shape ? [{ name, size: o.size }] : [];
  });
  return JSON.stringify(v2 ? files : files.map((f) => f.name));
}
