// The backup engine: lists every state kind the cluster serves (discovered: src/kubeflow/kinds.ts), page by page, keeps what is user state in the chosen
// Profiles and namespaces, and streams it into the archive. Nothing here knows about Juju or where S3 settings came
// from; the charm and the CLI hand in their KubeClient (as the port src/backup/kube-port.ts) and a BackupStore.
import { describeObject } from '../kubeflow/identity.ts';
import type { BackupKube } from './kube-port.ts';
import type { ApiResource, KubeObject } from '../kube/types.ts';
import { BackupWriter } from '../archive/writer.ts';
import { DATA_FILES_INDEX, indexDataFiles } from '../catalog/data-files.ts';
import { ControlPlaneRecordSchema, type ControlPlaneOutcome, type Manifest, type VolumeEntry } from '../archive/manifest.ts';
import type { BackupStore } from '../store/backup-store.ts';
import { newBackupId } from '../store/layout.ts';
import { neutralWording, type Wording } from '../errors/remedy.ts';
import { isPvc, withoutVolumeBinding } from '../kubeflow/pvc-binding.ts';
import { backupDecision, leftOutTally, type LeftOutCategory } from '../kubeflow/backup-selection.ts';
import { readBindableRoles } from '../kubeflow/bindable-roles.ts';
import { isProfileResource, profileKind, stateResources } from '../kubeflow/kinds.ts';
import { knownKinds, spelledResource } from '../kubeflow/known-kinds.ts';
import { isContributorObject } from '../kubeflow/contributors.ts';
import { controllerPodDefaultsExtra, isControllerMadePodDefault } from '../kubeflow/late-pod-defaults.ts';
import { parseResourceFilter } from '../kubeflow/resource-filters.ts';
import { resolveScope } from './scope.ts';
import { crdSnapshot, modelInventory } from './inventory.ts';
import { ProgressTicker } from './progress.ts';
import { checkLeaseFree, checkLeaseKept, type LeaseRequest } from './lease.ts';
import { prefetch } from './prefetch.ts';

export type BackupKind = 'backup-state' | 'snapshot-profiles';

// the steps the backup runs, typed where the steps can import them without importing the engine
import type { ControlPlaneStep, ProgressSink, PvcRef, VolumeStep } from '../steps.ts';

/** The control-plane step's outcome, as the manifest records it (src/archive/manifest.ts, ControlPlaneRecordSchema). */
export type { ControlPlaneOutcome } from '../archive/manifest.ts';

export interface BackupRequest {
  kind: BackupKind;
  namespaces?: readonly string[];
  profiles?: readonly string[];
  includeVolumes: boolean;
  includeControlPlane: boolean;
  description?: string;
  profileNamespaceSelector: string;
  includeResources?: readonly string[];
  excludeResources?: readonly string[];
  encryptionKey?: string;
  /** the Juju model's namespace, for the inventory of applications and images */
  modelNamespace?: string;
  protectedCrdGroups: readonly string[];
  toolVersion: string;
  source?: { cluster?: string; model?: string };
  /** page size of LIST requests (default: the client's) */
  pageSize?: number;
  /** how long the backup's run record holds without a renewal (the store's default when omitted) */
  runLeaseMs?: number;
  /** the new backup's id, chosen by the caller (backup-state wait=false reports it before the backup starts) */
  backupId?: string;
  /** told the new backup's id once its folder holds its run record (the service keeps it, to take its lease over after a crash) */
  onBegun?: (backupId: string) => Promise<void> | void;
  /** one backup at a time per location (lease.ts): refused while another backup's run record is live */
  lease?: LeaseRequest;
  volumes?: VolumeStep;
  controlPlane?: ControlPlaneStep;
  progress?: ProgressSink;
  /** how the edge words the settings a note names (src/errors/remedy.ts); neutral words without it */
  wording?: Wording;
  now?: () => Date;
}

export interface BackupOutcome {
  backupId: string;
  location: string;
  objects: number;
  bytes: number;
  /** objects of the covered namespaces left out, and why (reason class → count) */
  skipped: number;
  /** namespaces that look like profile namespaces but were left out (a restore could not recreate them), with why */
  leftOutNamespaces: Array<{ namespace: string; reason: string }>;
  /**
   * every object of the covered namespaces that is not a controller's output (those are counted in skippedBy) but was
   * left out all the same — refused by the allow-list, filtered out, not part of a snapshot — named with its reason
   */
  leftOutObjects: Array<{ object: string; reason: string }>;
  skippedBy: Record<string, number>;
  /** per kind: `notebooks.kubeflow.org` → count */
  counts: Record<string, number>;
  namespaces: number;
  profiles: number;
  contributors: number;
  /** `uploaded` + `reused` = `bytes`: what the movers sent, and what the bucket copied from an earlier backup */
  volumes: { copied: number; bytes: number; uploaded: number; reused: number; note?: string };
  /** `names`: what was copied (`kfp-db`, `minio/<bucket>`); `empty`: related databases found without tables */
  controlPlane: { copied: number; bytes: number; notCovered: string[]; names: string[]; empty: string[]; note?: string };
  sealedSecrets: number;
  clearSecrets: number;
  missingKinds: string[];
  durationSeconds: number;
  manifest: Manifest;
}

/**
 * What a controller makes or the cluster records (backup-selection.ts): counted, not named, as there is one per Pod and
 * Event, and a restore makes them again anyway.
 */
const controllerOutput: ReadonlySet<LeftOutCategory> = new Set(['generated', 'cluster-scoped', 'runtime', 'not-a-contributor']);

/** snapshot-profiles: Profiles and the two halves of each KFAM contributor, nothing else */
const snapshotResources = knownKinds.filter((k) => k.snapshot).map(spelledResource);

function resourcesFor(kind: BackupKind, discovered: readonly ApiResource[]): { resources: ApiResource[]; missing: string[] } {
  const state = stateResources(discovered);
  const wanted = kind === 'backup-state' ? [spelledResource(profileKind)] : snapshotResources;
  const resources = kind === 'backup-state' ? state : state.filter((r) => snapshotResources.includes(spelledResource(r)));
  const served = new Set(resources.map(spelledResource));
  return { resources, missing: wanted.filter((name) => !served.has(name)) };
}

export async function runBackup(kube: BackupKube, store: BackupStore, request: BackupRequest): Promise<BackupOutcome> {
  const started = Date.now();
  const ticker = new ProgressTicker(request.progress);
  const filter = parseResourceFilter(request.includeResources?.join(','), request.excludeResources?.join(','));
  // The scope (two LISTs), the writer's check of the bucket and the first pages need nothing from each other: they
  // start together, and nothing is decided or written until the scope is known.
  const scoping = resolveScope(kube, {
    namespaces: request.namespaces ?? [],
    profiles: request.profiles ?? [],
    profileNamespaceSelector: request.profileNamespaceSelector,
  });
  const startedAt = request.now?.() ?? new Date();
  if (request.lease) {
    try {
      await checkLeaseFree(store, request.encryptionKey, request.lease);
    } catch (error) {
      scoping.catch(() => undefined);
      throw error;
    }
  }
  // the run record proves to prune-backups that this backup runs, for as long as it renews it (src/archive/run-record.ts)
  const beginning = store.beginBackup(request.backupId ?? newBackupId(startedAt), {
    encryptionKey: request.encryptionKey, started: startedAt, ...(request.runLeaseMs ? { leaseMs: request.runLeaseMs } : {}), ...(request.lease?.holder ? { holder: request.lease.holder } : {}),
  });
  const starting = beginning.then(async (pending) => {
    try {
      if (request.lease) await checkLeaseKept(store, request.encryptionKey, request.lease, { id: pending.id, started: startedAt });
      await request.onBegun?.(pending.id);
    } catch (error) {
      // its run record goes with its folder: it must not hold the lease it lost
      await pending.abort().catch(() => undefined);
      throw error;
    }
    return pending;
  }).then((pending) => BackupWriter.start({
    pending,
    started: startedAt,
    toolVersion: request.toolVersion,
    // completed with the namespaces and Profiles once the scope is resolved
    scope: { action: request.kind, includeVolumes: request.includeVolumes, includeControlPlane: request.includeControlPlane },
    ...(request.description ? { description: request.description } : {}),
    ...(request.source ? { source: request.source } : {}),
    ...(request.encryptionKey ? { encryptionKey: request.encryptionKey } : {}),
    ...(request.now ? { now: request.now } : {}),
  }));
  // Each is awaited below; until then a failure must not count as unhandled.
  scoping.catch(() => undefined);
  starting.catch(() => undefined);
  let discovered: ApiResource[];
  try {
    discovered = await kube.discover();
  } catch (error) {
    await Promise.allSettled([scoping, starting.then((writer) => writer.abort())]);
    throw error;
  }
  const { resources, missing: missingKinds } = resourcesFor(request.kind, discovered);
  // Profiles come from the scope's own LIST, at the end, so that the first LISTs need not wait for the scope.
  const profileResource = resources.find(isProfileResource);
  const listed = resources.filter((r) => r !== profileResource);
  // Without a choice of namespaces or Profiles the backup covers every profile namespace: whole-cluster LISTs,
  // known before the scope is.
  const narrowed = (request.namespaces?.length ?? 0) > 0 || (request.profiles?.length ?? 0) > 0;

  // Every LIST of the backup as one sequence of pages, so the next page is fetched while this one is archived,
  // also across kinds and namespaces (most kinds are a page or two: a gap at each boundary added up).
  async function* everyPage(): AsyncIterable<{ resource: ApiResource; kindIndex: number; page: KubeObject[] }> {
    let kindIndex = 0;
    for (const resource of listed) {
      kindIndex++;
      let namespaces: Array<string | undefined> = [undefined];
      if (resource.namespaced && narrowed) {
        const scope = await scoping;
        // Listing a few namespaces one by one is cheaper than listing the whole cluster and throwing most away.
        if (scope.namespaces.size !== scope.profileNamespaces.size) namespaces = [...scope.namespaces].sort();
      }
      for (const namespace of namespaces) {
        const pages = kube.listPages(resource, {
          ...(namespace ? { namespace } : {}),
          ...(request.pageSize ? { limit: request.pageSize } : {}),
        });
        for await (const page of pages) yield { resource, kindIndex, page };
      }
    }
    if (profileResource) {
      const { profiles } = await scoping;
      const size = request.pageSize ?? kube.pageSize;
      for (let i = 0; i < profiles.length; i += size) yield { resource: profileResource, kindIndex: kindIndex + 1, page: profiles.slice(i, i + size) };
    }
  }
  const pageSource = prefetch(everyPage())[Symbol.asyncIterator]();
  const firstPage = pageSource.next();
  firstPage.catch(() => undefined);

  // which ClusterRoles an owner may bind here: read while the scope is resolved (src/kubeflow/bindable-roles.ts)
  const bindableRoles = readBindableRoles(kube);
  bindableRoles.catch(() => undefined);
  const [scoped, opened] = await Promise.allSettled([scoping, starting]);
  if (scoped.status === 'rejected' || opened.status === 'rejected') {
    await pageSource.return?.(undefined).catch(() => undefined);
    // A refused scope writes nothing: the writer that did start takes its (empty) folder away again.
    if (opened.status === 'fulfilled') await opened.value.abort().catch(() => undefined);
    throw scoped.status === 'rejected' ? scoped.reason : (opened as PromiseRejectedResult).reason;
  }
  const scope = scoped.value;
  const writer = opened.value;
  let bindable: ReadonlySet<string>;
  try {
    bindable = await bindableRoles;
  } catch (error) {
    await pageSource.return?.(undefined).catch(() => undefined);
    await writer.abort().catch(() => undefined);
    throw error;
  }
  writer.setScope({
    action: request.kind,
    namespaces: [...scope.namespaces].sort(),
    profiles: [...(scope.profileNames ?? scope.profiles.map((p) => p.metadata.name!))].sort(),
    includeVolumes: request.includeVolumes,
    includeControlPlane: request.includeControlPlane,
  });
  await ticker.say(
    `backing up ${scope.namespaces.size} profile namespace(s) and ${scope.profileNames?.size ?? scope.profiles.length} Profile(s): ${resources.length} kinds to list`,
  );

  try {
    for (const kind of missingKinds) writer.log(`${kind} is not served by this cluster; nothing of that kind to back up`);
    for (const { namespace, reason } of scope.leftOut) writer.warn(`namespace ${namespace} was left out: ${reason}`);
    const skippedBy: Record<string, number> = {};
    const leftOutObjects: BackupOutcome['leftOutObjects'] = [];
    const pvcs: PvcRef[] = [];
    let pvcCount = 0;
    // Each PvcRef holds its whole object until the volume step: only worth it when there will be one.
    const keepPvcs = request.kind === 'backup-state' && request.includeVolumes && request.volumes !== undefined;
    let contributors = 0;
    let profiles = 0;
    /** namespace → the PodDefaults controllers made there, for the restore to wait for (src/kubeflow/late-pod-defaults.ts) */
    const controllerPodDefaults: Record<string, string[]> = {};
    for (let step = await firstPage; !step.done; step = await pageSource.next()) {
      const { resource, kindIndex, page } = step.value;
      // kept objects go to the archive a page at a time: one await per page, not one per object
      const kept: KubeObject[] = [];
      for (const object of page) {
        const decision = backupDecision(object, {
          namespaces: scope.namespaces, ...(scope.profileNames ? { profiles: scope.profileNames } : {}), filter, bindableRoles: bindable,
          contributorsOnly: request.kind === 'snapshot-profiles',
        }, resource.resource);
        const inScope = !resource.namespaced || scope.namespaces.has(object.metadata.namespace ?? '');
        if (!decision.keep) {
          if (inScope && resource.resource === 'poddefaults' && isControllerMadePodDefault(object)) {
            (controllerPodDefaults[object.metadata.namespace!] ??= []).push(object.metadata.name!);
          }
          // Objects of other namespaces are not "skipped": they were never part of this backup.
          if (inScope) {
            const tally = leftOutTally[decision.category];
            skippedBy[tally] = (skippedBy[tally] ?? 0) + 1;
            if (!controllerOutput.has(decision.category)) {
              leftOutObjects.push({ object: describeObject(object), reason: decision.reason });
              if ('refusal' in decision) writer.warn(`${describeObject(object)} was left out: ${decision.refusal}`);
            }
          }
          continue;
        }
        // Left out of the archive. Set undefined rather than deleted, which JSON.stringify omits alike: a delete turns
        // the metadata into a dictionary-mode object, which serializes about a third slower.
        object.metadata.managedFields = undefined;
        kept.push(archivedForm(object));
        if (object.kind === 'Profile') profiles++;
        else if (isContributorObject(object)) contributors++;
        if (object.kind === 'PersistentVolumeClaim' && resource.group === '') {
          pvcCount++;
          if (keepPvcs) pvcs.push({ namespace: object.metadata.namespace!, name: object.metadata.name!, object });
        }
      }
      await writer.addItems(resource, kept);
      await ticker.tick(writer.itemCount, () => `backed up ${writer.itemCount} objects; listing ${resource.resource} (${kindIndex}/${resources.length} kinds)`);
    }
    await ticker.say(`listed ${writer.itemCount} objects of ${resources.length} kinds; recording the model inventory and CRDs`);
    writer.setInventory(await modelInventory(kube, request.modelNamespace));
    writer.setCrds(await crdSnapshot(kube, request.protectedCrdGroups));

    const wording = request.wording ?? neutralWording;
    let volumes: BackupOutcome['volumes'] = { copied: 0, bytes: 0, uploaded: 0, reused: 0 };
    // the restic repositories the steps pinned snapshots in (`<path>/restic/<name>`, relative to the bucket)
    const pinned = new Set<string>();
    if (request.kind === 'snapshot-profiles') volumes.note = 'snapshot-profiles copies no volume data';
    else if (!request.includeVolumes) volumes.note = `${wording.term({ term: 'volumes-off' })}: no volume data was copied`;
    else if (pvcCount === 0) volumes.note = 'no PVCs in scope';
    else if (!request.volumes) volumes.note = `volume data of ${pvcCount} PVC(s) was not copied: no volume mover is configured`;
    else {
      await ticker.say(`copying the data of ${pvcs.length} PVC(s)`);
      const entries = await request.volumes(writer.id, pvcs, (m) => ticker.say(m));
      writer.setVolumes(entries);
      for (const entry of entries) if (entry.restic) pinned.add(entry.restic.repository);
      const unbound = entries.filter((e) => e.unbound).length;
      const total = (pick: (e: VolumeEntry) => number) => entries.reduce((sum, e) => sum + pick(e), 0);
      volumes = {
        copied: entries.length - unbound,
        bytes: total((e) => e.bytes),
        // a step that does not tell (a test double, an older mover) uploaded everything
        uploaded: total((e) => e.bytesUploaded ?? e.bytes),
        reused: total((e) => e.bytesReused ?? 0),
      };
      if (unbound > 0) volumes.note = `${unbound} PVC(s) were never bound: recorded as unbound, with no data`;
    }

    let controlPlane: BackupOutcome['controlPlane'] = { copied: 0, bytes: 0, notCovered: [], names: [], empty: [] };
    if (request.kind === 'snapshot-profiles') controlPlane.note = 'snapshot-profiles copies no control-plane data';
    else if (!request.includeControlPlane) controlPlane.note = `${wording.term({ term: 'control-plane-off' })}: no control-plane data was copied`;
    else if (!request.controlPlane) controlPlane.note = 'control-plane data was not copied: no control-plane mover is configured';
    else {
      await ticker.say('copying the control-plane data');
      // Checked at the boundary, and its defaults filled, as the manifest will hold it.
      const outcome = ControlPlaneRecordSchema.parse(await request.controlPlane(writer.id, (m) => ticker.say(m)));
      writer.setExtra('controlPlane', outcome);
      for (const entry of outcome.entries) if (entry.restic) pinned.add(entry.restic.repository);
      for (const sentence of outcome.notCovered) writer.warn(sentence);
      controlPlane = {
        copied: outcome.copied.length,
        bytes: outcome.copied.reduce((sum, c) => sum + c.bytes, 0),
        notCovered: outcome.notCovered,
        names: outcome.copied.map((c) => c.name),
        empty: outcome.empty,
      };
    }
    writer.setExtra('skipped', skippedBy);
    writer.setExtra(controllerPodDefaultsExtra, controllerPodDefaults);
    writer.setExtra('leftOutNamespaces', scope.leftOut);
    writer.setExtra('leftOutObjects', leftOutObjects);
    // What the movers left in the bucket, as the server describes it: the manifest's checksum of this index (and with
    // a key, its HMAC) is what ties the volume and control-plane files to the backup.
    const dataFiles = volumes.copied > 0 || controlPlane.copied > 0 ? await indexDataFiles(store, writer.id) : undefined;
    if (dataFiles) writer.addFile(DATA_FILES_INDEX, dataFiles, 'application/gzip');
    // backup-immutability: the restic repositories this backup pins snapshots in are retained as long as the backup,
    // before its marker says it is whole (the movers cannot: they never hold the bucket key)
    if (store.immutability) {
      const folders = locationFolders(store, pinned);
      if (folders.length > 0) {
        const retained = await store.retainBackupData(writer.id, folders);
        await ticker.say(`retained ${retained.extended + retained.kept} object(s) of ${folders.length} restic repository(ies) under Object Lock (${retained.extended} extended)`);
      }
    }
    const summary = await writer.commit();
    const skipped = Object.values(skippedBy).reduce((a, b) => a + b, 0);
    return {
      backupId: summary.id,
      location: summary.location,
      objects: summary.objects,
      bytes: summary.bytes,
      skipped,
      skippedBy,
      leftOutNamespaces: scope.leftOut,
      leftOutObjects,
      counts: summary.manifest.counts,
      namespaces: scope.namespaces.size,
      profiles,
      contributors,
      volumes,
      controlPlane,
      sealedSecrets: summary.sealedSecrets,
      clearSecrets: summary.clearSecrets,
      missingKinds,
      durationSeconds: Math.round((Date.now() - started) / 100) / 10,
      manifest: summary.manifest,
    };
  } catch (error) {
    // No marker, no partial files: a failed backup does not exist. A LIST fetched ahead is dropped.
    await pageSource.return?.(undefined).catch(() => undefined);
    await writer.abort().catch(() => undefined);
    throw error;
  }
}

/**
 * The folders of the location (`restic/<name>/`) that hold the pinned repositories; a repository outside the location
 * (none a backup writes now) is not this store's to retain.
 */
function locationFolders(store: BackupStore, repositories: ReadonlySet<string>): string[] {
  const folders: string[] = [];
  for (const repository of repositories) {
    const name = /(?:^|\/)restic\/([^/]+)\/?$/.exec(repository)?.[1];
    if (name && store.url(`restic/${name}`).endsWith(`/${repository.replace(/\/$/, '')}`)) folders.push(`restic/${name}/`);
  }
  return folders.sort();
}

/**
 * An object as the archive keeps it. A PVC loses its binding to the source cluster's volume: Velero's restore keeps a
 * PVC's volumeName unless the backup also holds that PV (vmware-tanzu/velero pkg/restore/restore.go), and ours never
 * does, so the PVC would wait for a volume that does not exist. Our restore drops the binding anyway.
 */
function archivedForm(object: KubeObject): KubeObject {
  return isPvc(object) ? withoutVolumeBinding(object) : object;
}
