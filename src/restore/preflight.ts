// Preflight: everything a restore checks before its first write; it only reads, decides and spools. The tarball is
// streamed once: every checksum is verified, every item is decided by src/kubeflow/restore-selection.ts (restored,
// skipped or refused, with its category), sealed Secrets are opened (and dropped again) to prove the key, and items
// are spooled per restore step and namespace. Then the target is asked whether it serves every kind and
// version needed.
// Any offender refuses the whole restore, and the refusal lists every one of them — unless skip-refused is set: then
// what the allow-list refuses is left out and listed, and everything else is restored. An archive that fails its
// checksums is refused whatever skip-refused says.
import type { RestoreKube } from './kube-port.ts';
import type { ApiResource, KubeObject } from '../kube/types.ts';
import { latestRefusal, latestWholeBackup, latestWholeMarker, markerDisagreement } from '../catalog/verify.ts';
import { judgePhase, SecretOpener, isSealed, type Manifest, type Problem } from '../archive/index.ts';
import { readItems } from '../catalog/read-items.ts';
import { judgeAuthentication, NotAuthenticatedError, refuseAllowWithLatest, type AuthenticationOutcome, type Trust } from '../archive/authenticate.ts';
import { checkDataFiles } from '../catalog/data-files.ts';
import { resourceFolder } from '../archive/paths.ts';
import type { BackupStore } from '../store/backup-store.ts';
import type { ArchiveItem, ManifestRead, MarkerRead } from '../archive/reader.ts';
import { readBindableRoles } from '../kubeflow/bindable-roles.ts';
import { storageClassOf } from '../kubeflow/storage-classes.ts';
import { describeObject, groupOf } from '../kubeflow/identity.ts';
import { namespaceDecision, namespaceOf, restoreDecision, type RestoreCategory, type RestoreDecision, type RestoreScope } from '../kubeflow/restore-selection.ts';
import type { ResourceFilter } from '../kubeflow/resource-filters.ts';
import type { RestoreRequest } from './request.ts';
import type { ProgressSink } from '../steps.ts';
import { compareForRestore } from '../kubeflow/restore-order.ts';
import { RestoreInputError, RestoreRefusedError, listOf } from './errors.ts';
import { Spool } from './spool.ts';

/** The part of the restore's request the preflight reads: passed whole, never copied field by field. */
export type PreflightRequest = Pick<RestoreRequest, 'backupId' | 'profiles' | 'namespaces' | 'trust' | 'protectedNamespaces' | 'skipRefused' | 'skipUnserved' | 'dryRun'>;

/** What the engine derives from the request before the preflight: the parsed filters and its progress line. */
export interface PreflightInputs {
  /** `include-resources` / `exclude-resources`: objects filtered out are skipped, never written */
  filter?: ResourceFilter;
  progress?: ProgressSink;
}

/** One restore step: the objects of one resource, spooled, and the target resource they are written through. */
export interface SpooledStep {
  key: string;
  group: string;
  resource: string;
  /** as the target serves it, at the version the archive's objects carry (or the one they are mapped to) */
  target: ApiResource;
  count: number;
  /** the version the archive's objects carry, when the target serves them through another one (`target.version`) */
  archivedVersion?: string;
}

/** archived objects of a kind and version the target does not serve at all */
export interface UnservedStep {
  /** `<resource>[.<group>]/<version>` */
  what: string;
  key: string;
  spoolKey: string;
  count: number;
}

export interface SkippedItem {
  key: string;
  namespace: string;
  kind: string;
  /** the object's name, so that the results name what was left out (absent for a Namespace: its namespace says it) */
  name?: string;
  /** why it is left out, as data (restore-selection.ts) */
  category: RestoreCategory;
  /** the sentence the results give (`refused: …` for what the allow-list refuses) */
  reason: string;
  /** set for the KFP recurring runs, which the results list by name */
  recurringRun?: string;
}

export interface Preflight {
  backupId: string;
  manifest: Manifest | null;
  /** what the HMAC check found (not checked without a key) */
  authentication: AuthenticationOutcome;
  warnings: string[];
  /** the archived Profiles chosen, in name order */
  profiles: KubeObject[];
  profileResource: ApiResource | undefined;
  /** the namespaces whose objects are restored */
  namespaces: Set<string>;
  /** namespaced steps in restore order */
  steps: SpooledStep[];
  /** with tolerateUnserved: the kinds and versions left out because the target serves no version of them */
  unserved: UnservedStep[];
  /** `<resource>[.<group>] <archived version> → <served version>` for each kind restored through another version */
  mappings: string[];
  /** archived objects that are never written (controller-made, filtered out, or refused with skip-refused), with the reason */
  skipped: SkippedItem[];
  /** with skip-refused: every item the allow-list refused, described with its reason (empty otherwise) */
  refused: string[];
  opener: SecretOpener | undefined;
  spool: Spool;
  objectsChecked: number;
  /** archived uids that some restored object names in its ownerReferences: the only uids worth relinking */
  ownerUids: Set<string>;
  /** every spooled PVC that names a storage class, in spool order: what the storage-class review reads, without the spool */
  pvcClasses: PvcClass[];
}

export interface PvcClass {
  namespace: string;
  name: string;
  storageClass: string;
}

/**
 * `latest` → the newest whole backup (Completed, or PartiallyFailed with a warning); with a key, the newest whose HMAC
 * verifies, by its manifest's times (catalog/verify.ts latestWholeBackup, the same choice list-backups, verify-backup and
 * pre-upgrade-check make). Any other id must have its commit marker, and the phase there must say the backup is whole.
 */
export async function resolveBackupId(store: BackupStore, id: string, warnings: string[] = [], trust: Trust = {}): Promise<{ id: string; marker?: MarkerRead }> {
  const encryptionKey = trust.encryptionKey;
  if (id === 'latest' && (encryptionKey === undefined || encryptionKey.length === 0)) {
    // without a key the choice is made from the markers alone, and the chosen manifest is read once, below
    const newest = await latestWholeMarker(store);
    if (!newest) throw new RestoreInputError(await latestRefusal(store, 'restore'));
    if (newest.warning) warnings.push(newest.warning);
    return { id: newest.id, marker: newest.marker };
  }
  if (id === 'latest') {
    const newest = await latestWholeBackup(store, { encryptionKey });
    if (!newest) throw new RestoreInputError(await latestRefusal(store, 'restore', { encryptionKey }));
    if (newest.warning) warnings.push(newest.warning);
    warnings.push(...newest.notes);
    return { id: newest.listing.id, marker: newest.marker };
  }
  const marker = await store.readMarker(id);
  if (marker.state === 'absent') throw new RestoreInputError(`There is no complete backup ${id} in ${store.url('backups/')}; list-backups shows the ones that exist.`);
  if (marker.state === 'invalid') throw new RestoreInputError(`Backup ${id} cannot be restored: its velero-backup.json is unusable (${marker.reason}).`);
  const verdict = judgePhase(id, marker.marker.status.phase);
  if (!verdict.whole) throw new RestoreInputError(`Backup ${id} cannot be restored: ${verdict.reason}.`);
  if (verdict.warning) warnings.push(verdict.warning);
  return { id, marker };
}

interface Pending {
  key: string;
  group: string;
  resource: string;
  versions: Map<string, string>;
  kinds: Set<string>;
  namespaced: boolean;
}

export async function runPreflight(kube: RestoreKube, store: BackupStore, request: PreflightRequest, inputs: PreflightInputs = {}): Promise<Preflight> {
  // The target's discovery is needed only at the end, and costs 0.1-0.2 s of round trips: it runs while the archive
  // is read. A failure is not reported here; the lookups at the end ask again and report it.
  void kube.discover().catch(() => undefined);
  // which ClusterRoles an owner may bind on the target (src/kubeflow/bindable-roles.ts), read while the archive is
  const bindableRoles = readBindableRoles(kube);
  bindableRoles.catch(() => undefined);
  const warnings: string[] = [];
  const trust = request.trust ?? {};
  const trusted = await readTrustedManifest(store, request.backupId, trust, warnings);
  const { backupId } = trusted;
  // Chosen Profiles and namespaces are known up front; every item is still checked, only the chosen ones are spooled.
  const chosen = new Set([...request.profiles ?? [], ...request.namespaces ?? []]);
  const scan = new ArchiveScan(trusted, { ...inputs, trust, skipRefused: request.skipRefused === true, protectedNamespaces: request.protectedNamespaces ?? [] }, chosen, await Spool.create());
  try {
    await scan.read(store, await bindableRoles);
    const { offenders, refused } = scan;
    const profileNamespaces = new Set(scan.profiles.keys());
    await scan.refuseNamespacesWithoutProfile(profileNamespaces);
    if (!request.skipRefused) offenders.push(...refused);
    if (offenders.length > 0) {
      throw new RestoreRefusedError(
        `Backup ${backupId} was refused and nothing was restored: ${offenders.length} ${offenders.length === 1 ? 'item breaks' : 'items break'} the restore rules (${listOf(offenders, 50)}).`,
        offenders,
      );
    }
    if (scan.sealProblem) throw new RestoreInputError(`${scan.sealProblem} Nothing was restored.`);

    // Selection: Profiles and namespaces must be in the archive.
    const unknown = [...chosen].filter((name) => !profileNamespaces.has(name));
    if (unknown.length > 0) {
      throw new RestoreInputError(`Backup ${backupId} has no Profile or profile namespace ${listOf(unknown)}; it holds ${listOf([...profileNamespaces].sort())}.`);
    }
    const selected = chosen.size > 0 ? chosen : profileNamespaces;
    const profileResource = await kube.findByResource('kubeflow.org', 'profiles');
    const chosenProfiles = [...scan.profiles.values()].filter((p) => selected.has(p.metadata.name ?? '')).sort((a, b) => a.metadata.name!.localeCompare(b.metadata.name!));
    const target = await targetSteps(kube, backupId, scan, chosenProfiles, profileResource);
    // a dry run reports the kinds the target serves in no version; skip-unserved leaves them out
    const tolerateUnserved = request.dryRun === true || request.skipUnserved === true;
    if (target.unserved.length > 0 && !tolerateUnserved) {
      const described = target.unserved.map(describeUnserved);
      throw new RestoreRefusedError(
        `The target cluster does not serve ${listOf(described, 50)}, which backup ${backupId} holds; install the matching Kubeflow charms (or CRDs) first, leave those kinds out with exclude-resources, or restore the rest with skip-unserved. Nothing was restored.`,
        described.map((m) => `${m}: not served by the target`),
      );
    }
    if (offenders.length > 0) {
      throw new RestoreRefusedError(`Backup ${backupId} was refused and nothing was restored: ${listOf(offenders, 50)}.`, offenders);
    }
    return {
      backupId, manifest: trusted.manifest, authentication: trusted.authentication, warnings, profiles: chosenProfiles, profileResource,
      namespaces: selected, ...target, skipped: scan.skippedIn(selected), refused: request.skipRefused ? refused : [],
      opener: scan.opener, spool: scan.spool, objectsChecked: scan.objectsChecked, ownerUids: scan.ownerUids, pvcClasses: scan.pvcClasses,
    };
  } catch (error) {
    await scan.spool.remove();
    throw error;
  }
}

interface TrustedManifest {
  backupId: string;
  read: ManifestRead;
  manifest: Manifest | null;
  authentication: AuthenticationOutcome;
}

/**
 * The backup chosen, its marker judged and its manifest read once (the Preflight hands it to the restore's later
 * steps: control plane, volumes), authenticated with a key, and its volume and control-plane files compared with their
 * index. With a key, nothing of the archive is trusted before the manifest's HMAC is: a forger recomputes every sha256.
 */
async function readTrustedManifest(store: BackupStore, requested: string, trust: Trust, warnings: string[]): Promise<TrustedManifest> {
  try {
    refuseAllowWithLatest(requested, trust);
  } catch (error) {
    throw new RestoreInputError((error as Error).message);
  }
  const resolved = await resolveBackupId(store, requested, warnings, trust);
  const backupId = resolved.id;
  const read = await store.readManifest(backupId, { encryptionKey: trust.encryptionKey, ...(resolved.marker ? { marker: resolved.marker } : {}) });
  if (read.state === 'invalid') throw new RestoreRefusedError(`Backup ${backupId} cannot be restored: its manifest is unusable (${read.reason}).`, [`manifest: ${read.reason}`]);
  if (read.state === 'present' && read.changed) {
    throw new RestoreRefusedError(`Backup ${backupId} cannot be restored: its manifest was changed after the backup was committed (${read.changed}).`, [`manifest: ${read.changed}`]);
  }
  let authentication: AuthenticationOutcome;
  try {
    authentication = judgeAuthentication(backupId, read.state === 'present' ? read.authentication : 'no-hmac', trust, 'restored');
  } catch (error) {
    if (error instanceof NotAuthenticatedError) throw new RestoreRefusedError(error.message, [error.message]);
    throw error;
  }
  if (authentication.state === 'unauthenticated-allowed') warnings.push(`Backup ${backupId} is ${authentication.note}.`);
  const manifest = read.state === 'present' ? read.manifest : null;
  // Chosen by id: the marker's word is not what is restored, but one that disagrees with the manifest was rewritten.
  const disagreement = manifest && requested !== 'latest' && resolved.marker ? markerDisagreement(backupId, resolved.marker, manifest) : undefined;
  if (disagreement) warnings.push(`Backup ${backupId}: ${disagreement}.`);
  // The volume and control-plane files are written by Jobs straight from the bucket: compared with the backup's index
  // here, before anything is written, as no later step would notice one that was changed.
  const dataProblems = manifest ? await checkDataFiles(store, backupId, manifest) : [];
  if (dataProblems.length > 0) {
    const offenders = dataProblems.map((p) => p.message.replace(/\.$/, ''));
    throw new RestoreRefusedError(`Backup ${backupId} was refused and nothing was restored: its volume or control-plane files differ from the ones it was made with (${listOf(offenders, 10)}).`, offenders);
  }
  if (manifest?.encryption && !manifest.encryption.binding) {
    warnings.push(`Backup ${backupId} was sealed without binding (an older backup): its sealed values are not tied to their Secret or backup.`);
  }
  if (!manifest) warnings.push(`Backup ${backupId} has no kubeflow-upgrader manifest (a foreign Velero backup?): nothing in it could be verified against checksums.`);
  return { backupId, read, manifest, authentication };
}

/** what the archive scan reads of the request */
interface ScanOptions extends PreflightInputs {
  trust: Trust;
  skipRefused: boolean;
  protectedNamespaces: readonly string[];
}

/**
 * One pass over the tarball: every checksum verified (by readItems), every item decided (restore-selection.ts), sealed
 * Secrets opened to prove the key, and the chosen items spooled per step and namespace.
 */
class ArchiveScan {
  readonly offenders: string[] = [];
  /** items the allow-list refuses, described: offenders, or with skip-refused listed under refused */
  readonly refused: string[] = [];
  /** the same items, reported as skipped with skip-refused */
  private readonly refusedItems: SkippedItem[] = [];
  private readonly skipped: SkippedItem[] = [];
  readonly profiles = new Map<string, KubeObject>();
  // every archived uid would be a map entry per restored object, which grows with the cluster; only owners are looked up
  readonly ownerUids = new Set<string>();
  readonly pvcClasses: PvcClass[] = [];
  readonly pending = new Map<string, Pending>();
  // namespace → how many items it holds and the first few described, to name objects outside profile namespaces once
  // the Profiles are all known (a described string per item would grow the restore's memory with every object)
  private readonly itemsByNamespace = new Map<string, NamespaceItems>();
  objectsChecked = 0;
  opener: SecretOpener | undefined;
  sealProblem: string | undefined;
  private readonly backupId: string;

  constructor(
    private readonly trusted: TrustedManifest,
    private readonly request: ScanOptions,
    private readonly chosen: ReadonlySet<string>,
    readonly spool: Spool,
  ) {
    this.backupId = trusted.backupId;
  }

  async read(store: BackupStore, bindableRoles: ReadonlySet<string>): Promise<void> {
    const { request, trusted } = this;
    const problems: Problem[] = [];
    const scope: RestoreScope = { protectedNamespaces: new Set(request.protectedNamespaces), bindableRoles, ...(request.filter ? { filter: request.filter } : {}) };
    const items = readItems(store, this.backupId, { expected: trusted.read.state === 'present' ? trusted.read : null, onProblem: (problem) => problems.push(problem) });
    for await (const item of items) {
      this.objectsChecked++;
      if (this.objectsChecked % 5000 === 0) await request.progress?.(`checked ${this.objectsChecked} archived objects`);
      const object = item.object;
      const key = resourceFolder(item.resource, item.group);
      if (groupOf(object.apiVersion) !== item.group) {
        this.offenders.push(`${describeItem(object, item.path)}: a ${object.apiVersion} object filed under ${key}`);
        continue;
      }
      const decision = restoreDecision(object, item.resource, scope);
      const namespace = namespaceOf(object, decision);
      if (namespace !== undefined) track(this.itemsByNamespace, namespace, object, item.path);
      if (decision.verdict === 'refuse') {
        this.refused.push(`${describeItem(object, item.path)}: ${decision.reason}`);
        this.refusedItems.push({ key, namespace: object.metadata.namespace ?? '', kind: object.kind, category: decision.category, reason: `refused: ${decision.reason}` });
      } else if (decision.verdict === 'skip') {
        this.skipped.push(skippedItem(key, object, decision));
      } else if (decision.category === 'profile') {
        this.profiles.set(object.metadata.name ?? '', object);
      } else {
        this.proveSeal(object);
        if (this.chosen.size === 0 || this.chosen.has(namespace!)) await this.spoolItem(key, item, namespace!);
      }
    }
    await this.spool.seal();
    for (const problem of problems) this.offenders.push(problem.path ? `${problem.path}: ${problem.message}` : problem.message);
  }

  /**
   * The allow-list's namespace rule, once the archive's Profiles are known: every object of a namespace without its
   * Profile is refused (the first few named, the rest counted). With skip-refused each of them is reported as skipped,
   * read back from the spool (the ones it holds are those a restore would have written), which costs nothing when every
   * namespace has its Profile.
   */
  async refuseNamespacesWithoutProfile(profileNamespaces: ReadonlySet<string>): Promise<void> {
    for (const [namespace, items] of this.itemsByNamespace) {
      const decision = namespaceDecision(namespace, profileNamespaces);
      if (decision.verdict !== 'refuse') continue;
      for (const d of items.named) this.refused.push(`${d}: ${decision.reason}`);
      const rest = items.count - items.named.length;
      if (rest > 0) this.refused.push(`${rest} more object${rest === 1 ? '' : 's'} in namespace ${namespace}, which has no Profile in this backup either`);
      if (!this.request.skipRefused) continue;
      for (const step of this.pending.values()) {
        for (const version of step.versions.keys()) {
          for (const spooled of this.spool.readNamespace(`${step.key}@${version}`, namespace)) {
            this.refusedItems.push({ key: step.key, namespace, kind: spooled.object.kind, category: decision.category, reason: `refused: ${decision.reason}` });
          }
        }
      }
    }
  }

  /**
   * What the results name as skipped: the items of the restored namespaces; what the target supplies itself (CRDs,
   * PVs) only for a whole restore; and with skip-refused the refused items of what was chosen (a refused item of a
   * namespace or Profile not chosen is not part of this restore).
   */
  skippedIn(selected: ReadonlySet<string>): SkippedItem[] {
    const whole = this.chosen.size === 0;
    const kept = this.skipped.filter((s) => selected.has(s.namespace) || (s.category === 'cluster-supplied' && whole));
    if (!this.request.skipRefused) return kept;
    return [...kept, ...this.refusedItems.filter((s) => whole || this.chosen.has(s.namespace))];
  }

  private proveSeal(object: KubeObject): void {
    if (!isSealed(object) || this.sealProblem) return;
    const open = this.openerFor();
    if (!open) return;
    try {
      open.open(object);
    } catch (error) {
      this.sealProblem = (error as Error).message;
    }
  }

  private openerFor(): SecretOpener | undefined {
    if (this.opener || this.sealProblem) return this.opener;
    const manifest = this.trusted.manifest;
    if (!manifest?.encryption) {
      this.sealProblem = `Backup ${this.backupId} holds sealed Secrets but no manifest saying how they were sealed, so they cannot be opened.`;
      return undefined;
    }
    try {
      this.opener = SecretOpener.forBackup(this.backupId, manifest.encryption, this.request.trust.encryptionKey);
    } catch (error) {
      this.sealProblem = (error as Error).message;
    }
    return this.opener;
  }

  private async spoolItem(key: string, item: ArchiveItem, namespace: string): Promise<void> {
    const object = item.object;
    let step = this.pending.get(key);
    if (!step) {
      step = { key, group: item.group, resource: item.resource, versions: new Map(), kinds: new Set(), namespaced: true };
      this.pending.set(key, step);
    }
    const version = object.apiVersion.slice(object.apiVersion.indexOf('/') + 1);
    if (!step.versions.has(version)) step.versions.set(version, describeItem(object, item.path));
    step.kinds.add(object.kind);
    // Controller references are dropped on restore (restorableView), so only the others can name an owner to relink.
    for (const owner of object.metadata.ownerReferences ?? []) if (owner.uid && owner.controller !== true) this.ownerUids.add(owner.uid);
    if (item.group === '' && item.resource === 'persistentvolumeclaims') {
      const storageClass = storageClassOf(object);
      if (storageClass !== undefined) this.pvcClasses.push({ namespace, name: object.metadata.name ?? '', storageClass });
    }
    await this.spool.append(`${key}@${version}`, namespace, item.json, object);
  }
}

function skippedItem(key: string, object: KubeObject, decision: RestoreDecision): SkippedItem {
  const namespace = object.metadata.namespace;
  const name = object.metadata.name ?? '';
  // a Namespace object is named by its namespace; everything else by its name too
  if (decision.category === 'namespace') return { key, namespace: name, kind: object.kind, category: decision.category, reason: decision.reason };
  return {
    key, namespace: namespace ?? '', kind: object.kind, name, category: decision.category, reason: decision.reason,
    ...(decision.category === 'recurring-run' ? { recurringRun: `${namespace}/${name}` } : {}),
  };
}

/** The target must serve every kind and version the chosen objects need: the steps it serves, in restore order. */
async function targetSteps(
  kube: RestoreKube, backupId: string, scan: ArchiveScan, chosenProfiles: readonly KubeObject[], profileResource: ApiResource | undefined,
): Promise<Pick<Preflight, 'steps' | 'unserved' | 'mappings'>> {
  const missing: string[] = [];
  for (const version of new Set(chosenProfiles.map((p) => p.apiVersion.split('/')[1] ?? ''))) {
    if (!profileResource || !profileResource.versions.includes(version)) missing.push(`profiles.kubeflow.org/${version}`);
  }
  if (missing.length > 0) {
    throw new RestoreRefusedError(
      `The target cluster does not serve ${listOf(missing)}, which backup ${backupId} needs; install the matching Kubeflow charms (or CRDs) first. Nothing was restored.`,
      missing.map((m) => `${m}: not served by the target`),
    );
  }
  const steps: SpooledStep[] = [];
  const unserved: UnservedStep[] = [];
  const mappings: string[] = [];
  const ordered = [...scan.pending.values()].sort(compareForRestore);
  for (const step of ordered) {
    const served = await kube.findByResource(step.group, step.resource);
    for (const version of step.versions.keys()) {
      const key = `${step.key}@${version}`;
      let through = version;
      if (served && !served.versions.includes(version)) {
        // Another served version of the kind, when the CRD converts with None: the objects are the same there but
        // for apiVersion, and the target's schema for that version judges each on the write.
        const mapped = await mappedVersion(kube, served);
        if (mapped) {
          through = mapped;
          mappings.push(`${step.key} ${version} → ${mapped}`);
        }
      }
      if (!served || !served.versions.includes(through)) {
        unserved.push({ what: `${step.key}/${version}`, key: step.key, spoolKey: key, count: scan.spool.count(key) });
        continue;
      }
      if (![...step.kinds].every((k) => k === served.kind)) {
        scan.offenders.push(`${step.key}: the archive files ${listOf([...step.kinds])} objects there, but the target serves ${served.kind}`);
        continue;
      }
      steps.push({
        key: step.key, group: step.group, resource: step.resource, target: { ...served, version: through }, count: scan.spool.count(key),
        ...(through !== version ? { archivedVersion: version } : {}),
      });
    }
  }
  return { steps, unserved, mappings };
}

interface NamespaceItems {
  count: number;
  /** the first few items, described */
  named: string[];
}

/** Items named per namespace in a refusal: the namespace is the reason, the rest are counted. */
const NAMED_PER_NAMESPACE = 3;

/** how refusals name an archived item: its kind, namespace and name, and where the archive holds it */
function describeItem(object: KubeObject, path: string): string {
  return `${describeObject(object)} (${path})`;
}

function track(map: Map<string, NamespaceItems>, namespace: string, object: KubeObject, path: string): void {
  let items = map.get(namespace);
  if (!items) map.set(namespace, (items = { count: 0, named: [] }));
  items.count++;
  if (items.named.length < NAMED_PER_NAMESPACE) items.named.push(describeItem(object, path));
}

export function spoolKey(step: SpooledStep): string {
  return `${step.key}@${step.archivedVersion ?? step.target.version}`;
}

/** `mxjobs.kubeflow.org/v1 (3 objects)` */
export function describeUnserved(step: UnservedStep): string {
  return `${step.what} (${step.count} object${step.count === 1 ? '' : 's'})`;
}

/**
 * The version the target serves a custom resource through when the archived one is not served: its preferred
 * version, if the CRD converts with None (kubernetes/apiextensions-apiserver pkg/apiserver/conversion/nop_converter.go:
 * only apiVersion changes, so the same object is valid there as far as its schema says). Built-in kinds, Webhook
 * conversion and a CRD this client may not read: undefined (no mapping).
 */
async function mappedVersion(kube: RestoreKube, served: ApiResource): Promise<string | undefined> {
  if (served.group === '' || !served.group.includes('.')) return undefined;
  const crds = await kube.findByResource('apiextensions.k8s.io', 'customresourcedefinitions').catch(() => undefined);
  if (!crds) return undefined;
  const crd = await kube.tryGet(crds, `${served.resource}.${served.group}`).catch(() => undefined);
  if (!crd) return undefined;
  const strategy = (crd.spec as { conversion?: { strategy?: string } } | undefined)?.conversion?.strategy ?? 'None';
  return strategy === 'None' ? served.version : undefined;
}

