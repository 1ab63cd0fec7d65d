// Storage version migration: Kubernetes never prunes a CRD's status.storedVersions, and a new CRD that drops a
// version still listed there is refused, which stops a `juju refresh` half-way. Rewriting every object with a no-op
// update stores it in the current storage version; only then is it true, and safe, to trim storedVersions.
import type { KubeObject } from '../kube/types.ts';
import { CRDS, isApiFailure, knownResource } from './kube-port.ts';
import type { GuardKube } from './kube-port.ts';
import type { ApiResource } from '../kube/types.ts';

/**
 * Where an interrupted run stopped: every object up to `after` ("namespace/name" or "name") was rewritten. The API
 * server lists in key order (namespace, then name), so a resumed run skips those keys without writing them; an
 * object created since then with a smaller key was written in the storage version by its creation anyway.
 */
export interface MigrationCheckpoint {
  crd: string;
  storageVersion: string;
  after: string;
  rewritten: number;
}

export interface MigrationProgress {
  crd: string;
  storageVersion: string;
  rewritten: number;
  message: string;
}

export interface MigrateOptions {
  /** a CRD name (notebooks.kubeflow.org) or 'all' for every CRD of the protected groups */
  crd: string;
  protectedGroups: string[];
  onProgress?: (progress: MigrationProgress) => void;
  /** where a previous, interrupted run stopped (what onCheckpoint last received) */
  resumeFrom?: MigrationCheckpoint;
  /** called after every page with where to resume (persist it), and with undefined once a CRD is done */
  onCheckpoint?: (checkpoint: MigrationCheckpoint | undefined) => void | Promise<void>;
  pageSize?: number;
}

export interface CrdMigration {
  crd: string;
  storageVersion: string;
  storedVersionsBefore: string[];
  storedVersionsAfter: string[];
  /** objects rewritten into the storage version */
  rewritten: number;
  /** objects deleted by someone else while we went through them */
  gone: number;
  /** false when the CRD was already stored only in its storage version */
  changed: boolean;
}

export interface MigrateResult {
  /** CRDs whose storedVersions were trimmed */
  migrated: number;
  crds: CrdMigration[];
  /** one sentence for the action result */
  summary: string;
}

interface CrdVersion {
  name: string;
  served?: boolean;
  storage?: boolean;
}

interface CrdShape {
  group: string;
  scope: string;
  names: { plural: string; kind: string };
  versions: CrdVersion[];
}

const conflictRetries = 8;

function keyOf(object: KubeObject): string {
  const { namespace, name } = object.metadata;
  return namespace ? `${namespace}/${name ?? ''}` : (name ?? '');
}

function crdSpec(crd: KubeObject): CrdShape {
  return crd.spec as CrdShape;
}

export function storageVersionOf(crd: KubeObject): string {
  const storage = crdSpec(crd).versions.find((version) => version.storage);
  if (!storage) throw new Error(`CustomResourceDefinition ${crd.metadata.name ?? ''} has no storage version.`);
  return storage.name;
}

export function storedVersionsOf(crd: KubeObject): string[] {
  const status = crd.status as { storedVersions?: string[] } | undefined;
  return status?.storedVersions ?? [];
}

/** The stored versions that are not the storage version: each one blocks a CRD update that drops it. */
export function staleStoredVersions(crd: KubeObject): string[] {
  const storage = storageVersionOf(crd);
  return storedVersionsOf(crd).filter((version) => version !== storage);
}

function needsMigration(crd: KubeObject): boolean {
  const stored = storedVersionsOf(crd);
  return !(stored.length === 1 && stored[0] === storageVersionOf(crd));
}

async function crdsToMigrate(kube: GuardKube, options: MigrateOptions): Promise<KubeObject[]> {
  if (options.crd !== 'all') {
    const crd = await kube.tryGet(CRDS, options.crd);
    if (!crd) throw new Error(`CustomResourceDefinition ${options.crd} does not exist; give a CRD name or "all".`);
    return [crd];
  }
  const protectedGroups = new Set(options.protectedGroups);
  const found: KubeObject[] = [];
  for await (const page of kube.listPages(CRDS)) {
    for (const crd of page) if (protectedGroups.has(crdSpec(crd).group)) found.push(crd);
  }
  return found.sort((a, b) => (a.metadata.name ?? '').localeCompare(b.metadata.name ?? ''));
}

/** A no-op update: the API server decodes the object and encodes it again in the current storage version. */
async function rewrite(kube: GuardKube, at: ApiResource, kind: string, listed: KubeObject): Promise<'rewritten' | 'gone'> {
  let object: KubeObject | undefined = listed;
  for (let attempt = 0; attempt < conflictRetries; attempt += 1) {
    if (object === undefined) return 'gone';
    // List items may come without apiVersion and kind; a PUT needs both.
    const body: KubeObject = { ...object, apiVersion: `${at.group}/${at.version}`, kind };
    try {
      await kube.replace(at, body);
      return 'rewritten';
    } catch (error) {
      if (isApiFailure(error, 404)) return 'gone';
      if (!isApiFailure(error, 409)) throw error;
      // Someone wrote it since we read it: their write already stored it in the storage version, but re-read
      // and rewrite anyway, so that correctness does not rest on that reasoning.
      object = await kube.tryGet(at, listed.metadata.name ?? '', listed.metadata.namespace);
    }
  }
  throw new Error(
    `Could not rewrite ${at.resource}.${at.group} ${[listed.metadata.namespace, listed.metadata.name].filter(Boolean).join('/')}: ` +
      `it kept changing under us (${conflictRetries} conflicts); run migrate-stored-versions again.`,
  );
}

async function trimStoredVersions(kube: GuardKube, name: string, storageVersion: string): Promise<string[]> {
  for (let attempt = 0; attempt < conflictRetries; attempt += 1) {
    const crd = await kube.tryGet(CRDS, name);
    if (!crd) throw new Error(`CustomResourceDefinition ${name} was deleted during the migration.`);
    if (storageVersionOf(crd) !== storageVersion) {
      throw new Error(
        `The storage version of ${name} changed from ${storageVersion} to ${storageVersionOf(crd)} during the migration; run migrate-stored-versions again.`,
      );
    }
    try {
      const updated = await kube.replaceStatus(CRDS, { ...crd, status: { ...(crd.status as object), storedVersions: [storageVersion] } });
      return storedVersionsOf(updated);
    } catch (error) {
      if (!isApiFailure(error, 409)) throw error;
    }
  }
  throw new Error(`Could not update the status of ${name}: it kept changing under us; run migrate-stored-versions again.`);
}

async function migrateOne(kube: GuardKube, crd: KubeObject, options: MigrateOptions): Promise<CrdMigration> {
  const name = crd.metadata.name ?? '';
  const spec = crdSpec(crd);
  const storageVersion = storageVersionOf(crd);
  const before = storedVersionsOf(crd);
  const outcome: CrdMigration = {
    crd: name,
    storageVersion,
    storedVersionsBefore: before,
    storedVersionsAfter: before,
    rewritten: 0,
    gone: 0,
    changed: false,
  };
  if (!needsMigration(crd)) return outcome;

  const at = knownResource(spec.group, storageVersion, spec.names.plural, spec.names.kind, spec.scope === 'Namespaced');
  const resume = options.resumeFrom;
  const skipUpTo = resume && resume.crd === name && resume.storageVersion === storageVersion ? resume.after : undefined;
  if (skipUpTo !== undefined) outcome.rewritten = resume?.rewritten ?? 0;
  const report = (message: string) =>
    options.onProgress?.({ crd: name, storageVersion, rewritten: outcome.rewritten, message });
  if (skipUpTo !== undefined) report(`${name}: resuming after ${skipUpTo} (${outcome.rewritten} objects already rewritten)`);

  for await (const page of kube.listPages(at, { limit: options.pageSize ?? 500 })) {
    let last: string | undefined;
    for (const item of page) {
      last = keyOf(item);
      if (skipUpTo !== undefined && last <= skipUpTo) continue;
      if ((await rewrite(kube, at, spec.names.kind, item)) === 'rewritten') outcome.rewritten += 1;
      else outcome.gone += 1;
    }
    if (last !== undefined && (skipUpTo === undefined || last > skipUpTo)) {
      await options.onCheckpoint?.({ crd: name, storageVersion, after: last, rewritten: outcome.rewritten });
      report(`${name}: rewrote ${outcome.rewritten} objects into ${storageVersion}`);
    }
  }

  outcome.storedVersionsAfter = await trimStoredVersions(kube, name, storageVersion);
  outcome.changed = true;
  await options.onCheckpoint?.(undefined);
  report(`${name}: storedVersions [${before.join(', ')}] -> [${outcome.storedVersionsAfter.join(', ')}]`);
  return outcome;
}

/**
 * Migrates one CRD, or every CRD of the protected groups, to be stored only in its storage version. Idempotent:
 * a CRD already stored only in its storage version is left alone, and the result says so.
 */
export async function migrateStoredVersions(kube: GuardKube, options: MigrateOptions): Promise<MigrateResult> {
  const crds = await crdsToMigrate(kube, options);
  const results: CrdMigration[] = [];
  for (const crd of crds) results.push(await migrateOne(kube, crd, options));
  const migrated = results.filter((result) => result.changed).length;
  const summary =
    migrated === 0
      ? `Nothing to migrate: ${results.length} CRD${results.length === 1 ? ' is' : 's are'} stored only in their storage version.`
      : `Migrated ${migrated} of ${results.length} CRDs (${results.reduce((sum, r) => sum + r.rewritten, 0)} objects rewritten).`;
  return { migrated, crds: results, summary };
}
