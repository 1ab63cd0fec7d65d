// The restore engine (architecture.md "Restore phases"): preflight before any write; Profiles, then the wait for
// their namespaces; then namespaced objects step by step in restore order, concurrently within a step. Every object
// is compared with what the target already holds first, so a rerun after any crash converges and writes nothing
// that already matches. Nothing here knows about Juju; the charm and the CLI hand in a KubeClient and an ObjectStore,
// and the volume and control-plane steps are optional callbacks.
import type { KubeClient } from '../kube/client.ts';
import { isAlreadyExists, isConflict, KubeApiError } from '../kube/errors.ts';
import type { ApiResource, KubeObject, OwnerReference } from '../kube/types.ts';
import type { ObjectStore } from '../store/objects.ts';
import { describeObject } from '../kubeflow/identity.ts';
import type { ProgressSink } from '../backup/progress.ts';
import { unmetFields } from './compare.ts';
import { RestoreStoppedError, listOf } from './errors.ts';
import { restorable } from './normalize.ts';
import { runPreflight, spoolKey, type Preflight, type SpooledStep } from './preflight.ts';
import { RestoreReport, type KindTally, type PlanEntry, type Verdict } from './report.ts';
import { waitForProfileNamespaces } from './wait.ts';

export type ConflictPolicy = 'skip' | 'update' | 'fail';

/** Fills the restored PVCs with their archived data (src/volumes); returns what it did or throws naming the PVC. */
export type RestoreVolumeStep = (backupId: string, pvcs: Array<{ namespace: string; name: string }>, progress: ProgressSink) => Promise<{ restored: number; bytes?: number }>;

/** Restores the control-plane data (src/controlplane), before any Profile. */
export type RestoreControlPlaneStep = (backupId: string, progress: ProgressSink) => Promise<{ restored: number; notes: string[] }>;

export interface RestoreRequest {
  /** an id from list-backups, or `latest` */
  backupId: string;
  profiles?: readonly string[];
  namespaces?: readonly string[];
  conflictPolicy?: ConflictPolicy;
  dryRun?: boolean;
  includeVolumes?: boolean;
  encryptionKey?: string | undefined;
  /** how long to wait for the profile controller (`restore-wait-timeout`) */
  waitTimeoutMs?: number;
  /** namespaces no archived Profile may claim (the charm's model), on top of the system ones */
  protectedNamespaces?: readonly string[];
  volumes?: RestoreVolumeStep;
  controlPlane?: RestoreControlPlaneStep;
  progress?: ProgressSink;
  /** how often a progress line goes out while the restore runs */
  progressIntervalMs?: number;
}

export interface RestoreOutcome {
  backupId: string;
  dryRun: boolean;
  totals: KindTally;
  /** per `<resource>[.<group>]` */
  byKind: Record<string, KindTally>;
  /** per namespace and kind: what was (or on dry-run would be) done, with reasons */
  plan: PlanEntry[];
  /** one sentence per failed object (at most 50) */
  failures: string[];
  warnings: string[];
  objectsChecked: number;
  volumes: { restored: number; note?: string };
  controlPlane: { restored: number; note?: string };
  durationSeconds: number;
}

const FIELD_MANAGER = 'kubeflow-upgrader';

export async function runRestore(kube: KubeClient, store: ObjectStore, request: RestoreRequest): Promise<RestoreOutcome> {
  const started = Date.now();
  let status = `reading backup ${request.backupId}`;
  const sink = request.progress;
  const heartbeat = sink ? setInterval(() => void sink(status), request.progressIntervalMs ?? 2000) : undefined;
  heartbeat?.unref();
  const say = async (message: string) => {
    status = message;
    await sink?.(message);
  };
  try {
    const preflight = await runPreflight(kube, store, {
      backupId: request.backupId,
      profiles: request.profiles ?? [],
      namespaces: request.namespaces ?? [],
      encryptionKey: request.encryptionKey,
      ...(request.protectedNamespaces ? { protectedNamespaces: request.protectedNamespaces } : {}),
      progress: (m) => say(m),
    });
    try {
      const total = preflight.profiles.length + preflight.steps.reduce((n, s) => n + s.count, 0);
      await say(`backup ${preflight.backupId} verified (${preflight.objectsChecked} objects checked): restoring ${preflight.profiles.length} Profile(s) and ${total - preflight.profiles.length} namespaced objects`);
      const policy = request.conflictPolicy ?? 'skip';
      if (policy === 'fail' && !request.dryRun) {
        // conflict-policy=fail stops before the first write when the target already holds a differing object.
        const plan = await new RestoreRun(kube, preflight, request, true, (m) => { status = m; }).execute();
        const conflicts = plan.conflicts;
        if (conflicts.length > 0) {
          throw new RestoreStoppedError(`conflict-policy=fail: ${conflicts.length} object(s) exist and differ from backup ${preflight.backupId} (${listOf(conflicts, 10)}); nothing was restored — rerun with conflict-policy=skip or update.`);
        }
      }
      const run = new RestoreRun(kube, preflight, request, request.dryRun === true, say);
      await run.execute();
      const report = run.report;
      return {
        backupId: preflight.backupId,
        dryRun: request.dryRun === true,
        totals: report.totals(),
        byKind: report.byKind,
        plan: report.planEntries(),
        failures: report.failures,
        warnings: [...preflight.warnings, ...run.warnings],
        objectsChecked: preflight.objectsChecked,
        volumes: run.volumes,
        controlPlane: run.controlPlane,
        durationSeconds: Math.round((Date.now() - started) / 100) / 10,
      };
    } finally {
      await preflight.spool.remove();
    }
  } finally {
    if (heartbeat) clearInterval(heartbeat);
  }
}

/** One pass over the preflighted archive: real, or planning only (`dry`). */
class RestoreRun {
  readonly report = new RestoreReport();
  readonly warnings: string[] = [];
  readonly conflicts: string[] = [];
  volumes: RestoreOutcome['volumes'] = { restored: 0 };
  controlPlane: RestoreOutcome['controlPlane'] = { restored: 0 };
  /** archived uid → uid in the target, for relinking ownerReferences */
  private readonly uids = new Map<string, string>();
  private readonly policy: ConflictPolicy;

  constructor(
    private readonly kube: KubeClient,
    private readonly preflight: Preflight,
    private readonly request: RestoreRequest,
    private readonly dry: boolean,
    private readonly say: (message: string) => void | Promise<void>,
  ) {
    this.policy = request.conflictPolicy ?? 'skip';
  }

  async execute(): Promise<this> {
    const { preflight, request } = this;
    await this.restoreControlPlane();
    // Phase 1: Profiles, then their namespaces.
    if (preflight.profiles.length > 0) {
      const profiles = preflight.profileResource!;
      const existing = await this.liveObjects(profiles, undefined);
      await this.applyAll('profiles.kubeflow.org', profiles, preflight.profiles, existing);
      if (!this.dry) {
        await this.say(`waiting for the profile controller to make ${preflight.profiles.length} profile namespace(s)`);
        await waitForProfileNamespaces(this.kube, preflight.profiles, { timeoutMs: request.waitTimeoutMs ?? 300_000, progress: (m) => this.say(m) });
      }
    }
    for (const item of preflight.skipped) this.report.record(item.key, item.kind, item.namespace, 'skip', `${item.kind}/${item.namespace}: ${item.reason}`);

    // Phase 2: namespaced objects by priority.
    const newPvcs: Array<{ namespace: string; name: string }> = [];
    let volumesDone = false;
    for (const step of preflight.steps) {
      if (!volumesDone && step.resource !== 'persistentvolumeclaims' && newPvcs.length > 0 && isAfterPvcs(step)) {
        await this.restoreVolumes(newPvcs);
        volumesDone = true;
      }
      const existing = await this.liveObjects(step.target, preflight.namespaces);
      const objects = this.preflight.spool.read(spoolKey(step));
      const created = await this.applyAll(step.key, step.target, objects, existing);
      if (step.resource === 'persistentvolumeclaims' && step.group === '') newPvcs.push(...created);
    }
    if (!volumesDone) await this.restoreVolumes(newPvcs);
    return this;
  }

  /** what the target holds of one resource, keyed `namespace/name`, in the namespaces restored */
  private async liveObjects(resource: ApiResource, namespaces: ReadonlySet<string> | undefined): Promise<Map<string, KubeObject>> {
    const live = new Map<string, KubeObject>();
    const keep = (o: KubeObject) => {
      if (!namespaces || namespaces.has(o.metadata.namespace ?? '')) live.set(`${o.metadata.namespace ?? ''}/${o.metadata.name}`, o);
    };
    // A few namespaces are cheaper one by one; many are cheaper as one cluster-wide list.
    if (namespaces && namespaces.size <= 3) {
      for (const namespace of namespaces) for (const o of (await this.kube.listAll(resource, { namespace })).items) keep(o);
    } else {
      for (const o of (await this.kube.listAll(resource)).items) keep(o);
    }
    return live;
  }

  /** applies objects with at most twice the client's concurrency in flight; returns the ones created */
  private async applyAll(key: string, resource: ApiResource, objects: Iterable<KubeObject> | AsyncIterable<KubeObject>, live: Map<string, KubeObject>): Promise<Array<{ namespace: string; name: string }>> {
    const created: Array<{ namespace: string; name: string }> = [];
    const inFlight = new Set<Promise<void>>();
    const limit = Math.max(2, this.kube.concurrency * 2);
    let failure: unknown;
    for await (const archived of objects) {
      if (failure) break;
      const task = this.applyOne(key, resource, archived, live)
        .then((verdict) => {
          if (verdict === 'create') created.push({ namespace: archived.metadata.namespace ?? '', name: archived.metadata.name ?? '' });
        })
        .catch((error: unknown) => { failure ??= error; })
        .finally(() => { inFlight.delete(task); });
      inFlight.add(task);
      if (inFlight.size >= limit) await Promise.race(inFlight);
    }
    await Promise.all(inFlight);
    if (failure) throw failure;
    await this.say(`${this.dry ? 'planned' : 'restored'} ${this.report.done} objects; ${key} done`);
    return created;
  }

  private async applyOne(key: string, resource: ApiResource, archived: KubeObject, live: Map<string, KubeObject>): Promise<Verdict> {
    const namespace = archived.metadata.namespace ?? '';
    const name = `${describeObject(archived)}`;
    const record = (verdict: Verdict, reason?: string): Verdict => {
      this.report.record(key, archived.kind, namespace, verdict, reason);
      return verdict;
    };
    let wanted: KubeObject;
    try {
      wanted = this.relink(restorable(this.preflight.opener ? this.preflight.opener.open(archived) : archived));
    } catch (error) {
      return record('fail', `${name}: ${(error as Error).message}`);
    }
    let existing = live.get(`${namespace}/${archived.metadata.name}`);
    if (!existing) {
      if (this.dry) return record('create');
      try {
        const made = await this.kube.create(resource, wanted, { safeToRetry: true, fieldManager: FIELD_MANAGER });
        this.remember(archived, made);
        return record('create');
      } catch (error) {
        if (!isAlreadyExists(error)) return record('fail', `${name}: ${describeError(error)}`);
        // Made meanwhile (by a controller, or by a previous attempt whose answer was lost): judge it like any existing object.
        existing = await this.kube.tryGet(resource, archived.metadata.name!, archived.metadata.namespace);
        if (!existing) return record('fail', `${name}: it was reported to exist and then was not found`);
      }
    }
    return this.reconcile(resource, archived, wanted, existing, record, name);
  }

  private async reconcile(
    resource: ApiResource, archived: KubeObject, wanted: KubeObject, existing: KubeObject,
    record: (verdict: Verdict, reason?: string) => Verdict, name: string,
  ): Promise<Verdict> {
    for (let attempt = 0; ; attempt++) {
      const differs = unmetFields(wanted, existing);
      if (differs.length === 0) {
        this.remember(archived, existing);
        return record('unchanged');
      }
      const what = `${name} differs from the backup in ${listOf(differs, 5)}`;
      if (this.policy === 'skip') {
        this.remember(archived, existing);
        return record('skip', `${what} (conflict-policy=skip keeps the live object)`);
      }
      if (this.policy === 'fail') {
        this.conflicts.push(name);
        if (this.dry) return record('fail', `${what} (conflict-policy=fail)`);
        record('fail', `${what} (conflict-policy=fail)`);
        throw new RestoreStoppedError(`conflict-policy=fail: ${what}; the restore stopped there — rerun with conflict-policy=skip or update.`);
      }
      if (this.dry) return record('update', `${what} (conflict-policy=update overwrites it)`);
      const replacement: KubeObject = { ...wanted, metadata: { ...wanted.metadata, resourceVersion: existing.metadata.resourceVersion } };
      try {
        const updated = await this.kube.replace(resource, replacement, { fieldManager: FIELD_MANAGER });
        this.remember(archived, updated);
        return record('update', `${what} (conflict-policy=update)`);
      } catch (error) {
        if (!isConflict(error) || attempt >= 3) return record('fail', `${name}: ${describeError(error)}`);
        const fresh = await this.kube.tryGet(resource, archived.metadata.name!, archived.metadata.namespace);
        if (!fresh) return record('fail', `${name}: it was deleted while being updated`);
        existing = fresh;
      }
    }
  }

  /** non-controller ownerReferences point at the restored owners' new uids; references to owners not restored are dropped */
  private relink(object: KubeObject): KubeObject {
    const owners = object.metadata.ownerReferences;
    if (!owners) return object;
    const kept: OwnerReference[] = [];
    for (const owner of owners) {
      const uid = this.uids.get(owner.uid);
      if (uid) kept.push({ ...owner, uid });
    }
    if (kept.length) object.metadata.ownerReferences = kept;
    else delete object.metadata.ownerReferences;
    return object;
  }

  private remember(archived: KubeObject, live: KubeObject): void {
    if (archived.metadata.uid && live.metadata.uid) this.uids.set(archived.metadata.uid, live.metadata.uid);
  }

  private async restoreVolumes(pvcs: Array<{ namespace: string; name: string }>): Promise<void> {
    const { request, preflight } = this;
    if (request.includeVolumes === false) {
      this.volumes.note = 'include-volumes=false: no volume data was restored';
      return;
    }
    const archivedData = new Set((preflight.manifest?.volumes ?? []).map((v) => `${v.namespace}/${v.pvc}`));
    const fill = pvcs.filter((p) => archivedData.has(`${p.namespace}/${p.name}`));
    if (fill.length === 0) {
      this.volumes.note = preflight.manifest?.volumes.length ? 'no new PVC to fill: PVCs that already existed keep their data' : 'the backup holds no volume data';
      return;
    }
    if (this.dry) {
      this.volumes.note = `would fill ${fill.length} new PVC(s) with their archived data`;
      return;
    }
    if (!request.volumes) {
      this.volumes.note = `${fill.length} new PVC(s) were created empty: no volume mover is configured`;
      this.warnings.push(this.volumes.note);
      return;
    }
    await this.say(`filling ${fill.length} new PVC(s) with their archived data`);
    const result = await request.volumes(preflight.backupId, fill, (m) => this.say(m));
    this.volumes = { restored: result.restored };
  }

  private async restoreControlPlane(): Promise<void> {
    const { request, preflight } = this;
    if (!request.controlPlane) return;
    if (this.dry) {
      this.controlPlane.note = 'would restore the control-plane data';
      return;
    }
    await this.say('restoring the control-plane data');
    const result = await request.controlPlane(preflight.backupId, (m) => this.say(m));
    this.controlPlane = { restored: result.restored, ...(result.notes.length ? { note: result.notes.join(' ') } : {}) };
    this.warnings.push(...result.notes);
  }
}

/** true for the first step that may use a PVC: everything ordered after PVCs and before-or-at workloads */
function isAfterPvcs(step: SpooledStep): boolean {
  return !['serviceaccounts', 'secrets', 'configmaps', 'persistentvolumeclaims'].includes(step.resource) || step.group !== '';
}

function describeError(error: unknown): string {
  if (error instanceof KubeApiError) return error.message;
  return error instanceof Error ? error.message : String(error);
}
