// Item paths inside the tarball (Velero 1.1.0). Paths read from an archive are untrusted: they are parsed
// against this grammar and anything else is reported, never joined onto a filesystem or key path.
import type { ApiResource, KubeObject } from '../kube/types.ts';

export const METADATA_VERSION_PATH = 'metadata/version';
export const VELERO_FORMAT_VERSION = '1.1.0';
export const PREFERRED_VERSION_SUFFIX = '-preferredversion';

/**
 * A path segment we would accept from an archive: nothing that could leave its folder or change meaning on some
 * filesystem (separators, dot names, control characters). Everything else Kubernetes allows in a name is kept as it
 * is, as Velero keeps it (vmware-tanzu/velero pkg/archive/filesystem.go joins the name in unchanged): RBAC objects
 * may be named `system:image-pullers`.
 */
function isSafeSegment(s: string): boolean {
  // eslint-disable-next-line no-control-regex
  return s !== '' && s !== '.' && s !== '..' && !/[/\\\u0000-\u001f\u007f]/.test(s);
}

/**
 * Where items live in the tarball. `resources/` is Velero's folder, the one Velero's restore reads
 * (vmware-tanzu/velero pkg/archive/parser.go). Secrets we sealed go to a folder of our own with the same layout
 * inside, so that a foreign tool reading `resources/` never writes their ciphertext into a cluster as values.
 */
export const RESOURCES_ROOT = 'resources';
export const SEALED_ROOT = 'kubeflow-upgrader-sealed';
export type ItemRoot = typeof RESOURCES_ROOT | typeof SEALED_ROOT;

/** `<resource>[.<group>]`, the folder Velero names a resource by. */
export function resourceFolder(resource: string, group: string): string {
  return group === '' ? resource : `${resource}.${group}`;
}

export interface ItemPaths {
  unversioned: string;
  preferred: string;
}

/** Both paths an item is written at. Throws a sentence for names that cannot be a safe path. */
export function itemPaths(resource: ApiResource, object: KubeObject, root: ItemRoot = RESOURCES_ROOT): ItemPaths {
  const name = object.metadata.name ?? '';
  const namespace = object.metadata.namespace;
  const folder = resourceFolder(resource.resource, resource.group);
  const where = resource.namespaced ? `namespaces/${namespace ?? ''}/${name}.json` : `cluster/${name}.json`;
  const parts = [folder, resource.preferredVersion + PREFERRED_VERSION_SUFFIX, name, ...(resource.namespaced ? [namespace ?? ''] : [])];
  if (!parts.every(isSafeSegment)) {
    throw new Error(`${resource.kind} "${namespace ? `${namespace}/` : ''}${name}" has a name that cannot be stored safely in an archive.`);
  }
  return {
    unversioned: `${root}/${folder}/${where}`,
    preferred: `${root}/${folder}/${resource.preferredVersion}${PREFERRED_VERSION_SUFFIX}/${where}`,
  };
}

export interface ParsedItemPath {
  path: string;
  /** `resources`, or our own folder of sealed Secrets */
  root: ItemRoot;
  /** plural resource name */
  resource: string;
  /** '' for the core group */
  group: string;
  /** set for `<v>-preferredversion/` copies */
  preferredVersion: string | undefined;
  /**
   * set for copies in another `<v>/` folder, which Velero writes beside the preferred one when its
   * EnableAPIGroupVersions feature is on (vmware-tanzu/velero pkg/backup/item_backupper.go); a restore uses the
   * unversioned copy, as Velero does without that feature (pkg/restore/restore.go)
   */
  otherVersion: string | undefined;
  namespace: string | undefined;
  name: string;
}

export type ItemPathCheck = { ok: true; item: ParsedItemPath } | { ok: false; reason: string };

/**
 * Parses an untrusted tar entry name as an item path. The grammar is strict on purpose: absolute names,
 * `..`, backslashes, empty segments and anything outside `resources/` are refused with a reason.
 */
export function parseItemPath(path: string): ItemPathCheck {
  if (path.startsWith('/')) return { ok: false, reason: 'is an absolute path' };
  if (path.includes('\\')) return { ok: false, reason: 'contains a backslash' };
  const parts = path.split('/');
  if (parts.some((p) => p === '..')) return { ok: false, reason: 'escapes its folder with ".."' };
  // every segment as isSafeSegment judges one: the control characters looked for once in the whole path
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u001f\u007f]/.test(path) || parts.some((p) => p === '' || p === '.')) return { ok: false, reason: 'has an empty, dot or control-character segment' };
  const root = parts[0];
  if ((root !== RESOURCES_ROOT && root !== SEALED_ROOT) || parts.length < 4) return { ok: false, reason: `is not under ${RESOURCES_ROOT}/<resource>/` };
  const itemRoot: ItemRoot = root;
  const folder = parts[1]!;
  // Our folder holds sealed Secrets and nothing else: anything else there was not put there by us.
  if (itemRoot === SEALED_ROOT && folder !== 'secrets') return { ok: false, reason: `is in ${SEALED_ROOT}/, which holds only secrets/` };
  const dot = folder.indexOf('.');
  const resource = dot < 0 ? folder : folder.slice(0, dot);
  const group = dot < 0 ? '' : folder.slice(dot + 1);
  let rest = parts.slice(2);
  let preferredVersion: string | undefined;
  let otherVersion: string | undefined;
  // Velero's parser takes every subfolder of a resource folder other than cluster/ and namespaces/ for a version
  // folder (vmware-tanzu/velero pkg/archive/parser.go, ParseGroupVersions).
  if (rest[0] !== 'cluster' && rest[0] !== 'namespaces') {
    if (rest[0]!.endsWith(PREFERRED_VERSION_SUFFIX)) {
      preferredVersion = rest[0]!.slice(0, -PREFERRED_VERSION_SUFFIX.length);
      if (preferredVersion === '') return { ok: false, reason: 'has an empty preferred version' };
    } else otherVersion = rest[0]!;
    rest = rest.slice(1);
  }
  const file = rest[rest.length - 1] ?? '';
  if (!file.endsWith('.json') || file === '.json') return { ok: false, reason: 'is not a .json item' };
  const name = file.slice(0, -'.json'.length);
  if (!isSafeSegment(name)) return { ok: false, reason: 'has an unusable object name' };
  const at = { path, root: itemRoot, resource, group, preferredVersion, otherVersion, name };
  if (rest.length === 2 && rest[0] === 'cluster') return { ok: true, item: { ...at, namespace: undefined } };
  if (rest.length === 3 && rest[0] === 'namespaces') return { ok: true, item: { ...at, namespace: rest[1]! } };
  return { ok: false, reason: 'is neither cluster/<name>.json nor namespaces/<ns>/<name>.json' };
}
