// One pass over a backup's tarball for the preflight: every checksum verified (by readItems), every item decided
// (src/kubeflow/restore-selection.ts: restored, skipped or refused, with its category), sealed Secrets opened to prove
// the key, and the chosen items spooled per step and namespace.
import type { KubeObject } from '../kube/types.ts';
import { SecretOpener, isSealed, type Problem } from '../archive/index.ts';
import type { Trust } from '../archive/authenticate.ts';
import { resourceFolder } from '../archive/paths.ts';
import type { ArchiveItem } from '../archive/reader.ts';
import { readItems } from '../catalog/read-items.ts';
import type { BackupStore } from '../store/backup-store.ts';
import { storageClassOf } from '../kubeflow/storage-classes.ts';
import { describeObject, groupOf } from '../kubeflow/identity.ts';
import { namespaceDecision, namespaceOf, restoreDecision, type RestoreDecision, type RestoreScope } from '../kubeflow/restore-selection.ts';
import type { PreflightInputs, PvcClass, SkippedItem } from './preflight-types.ts';
import type { TrustedManifest } from './trusted-backup.ts';
import type { Spool } from './spool.ts';

export interface Pending {
  key: string;
  group: string;
  resource: string;
  versions: Map<string, string>;
  kinds: Set<string>;
  namespaced: boolean;
}

/** what the archive scan reads of the request */
export interface ScanOptions extends PreflightInputs {
  trust: Trust;
  skipRefused: boolean;
  protectedNamespaces: readonly string[];
}

/**
 * One pass over the tarball: every checksum verified (by readItems), every item decided (restore-selection.ts), sealed
 * Secrets opened to prove the key, and the chosen items spooled per step and namespace.
 */
export class ArchiveScan {
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

interface NamespaceItems {
  count: number;
  /** the first few items, described */
  named: string[];
}

/** Items named per namespace in a refusal: the namespace is the reason, the rest are counted. */
const NAMED_PER_NAMESPACE = 3;

/** how refusals name an archived item: its kind, namespace and name, and where the archive holds it */
export function describeItem(object: KubeObject, path: string): string {
  return `${describeObject(object)} (${path})`;
}

function track(map: Map<string, NamespaceItems>, namespace: string, object: KubeObject, path: string): void {
  let items = map.get(namespace);
  if (!items) map.set(namespace, (items = { count: 0, named: [] }));
  items.count++;
  if (items.named.length < NAMED_PER_NAMESPACE) items.named.push(describeItem(object, path));
}
