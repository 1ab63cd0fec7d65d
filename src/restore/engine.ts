// The restore engine (docs/architecture.md, "restore-state (the restore phases)"): preflight before any write; Profiles, then the wait for
// their namespaces; then, in each namespace, its objects step by step in restore order. Namespaces do not wait for
// each other: each starts as soon as the profile controller has made it, and many run at once, bounded by the
// client's concurrency (global step barriers across 1000 namespaces left the client idle at every step's tail).
// Every object is judged against what the target already holds — compared with one LIST per kind where the
// Profile existed, or on a 409 where this run just made the namespace — so a rerun after any crash converges and
// writes nothing that already matches. Nothing here knows about Juju; the charm and the CLI hand in their KubeClient (as the port
// src/restore/kube-port.ts) and a BackupStore,
// and the volume and control-plane steps are optional callbacks.
import type { VolumeEntry } from '../archive/manifest.ts';
import pLimit, { type LimitFunction } from 'p-limit';
import type { RestoreKube } from './kube-port.ts';
import { isAlreadyExists, isConflict } from '../kube/errors.ts';
import type { ApiResource, KubeObject, OwnerReference } from '../kube/types.ts';
import type { BackupStore } from '../store/backup-store.ts';
import { describeObject } from '../kubeflow/identity.ts';
import { parseResourceFilter, type ResourceFilter } from '../kubeflow/resource-filters.ts';
import { awaitsResume, finishedExperimentPin, isFinishedStatus, statusToWrite, suspendedForStatus } from '../kubeflow/status-kinds.ts';
import { recordedPodDefaults } from '../kubeflow/late-pod-defaults.ts';
import { isBeforeVolumeFill, isWorkloadStep } from '../kubeflow/restore-order.ts';
import { isControllerServiceAccount } from '../kubeflow/service-accounts.ts';
import { PodDefaultWait } from './pod-default-wait.ts';
import { WebhookUnreachableError, WebhookWait } from './webhook-wait.ts';
import { isPvc, parseStorageClassMap, withMappedStorageClass } from '../kubeflow/storage-classes.ts';
import { reviewStorageClasses } from './storage-classes.ts';
import type { Manifest } from '../archive/manifest.ts';
import { unmetFields } from './compare.ts';
import { RestoreInputError, RestoreStoppedError, listOf } from './errors.ts';
import { replacementFor } from '../kubeflow/restore-changes.ts';
import { roleRefChange } from '../kubeflow/role-ref.ts';
import { TargetIpFamilies } from './ip-families.ts';
import { restorable } from './normalize.ts';
import { describeUnserved, runPreflight, spoolKey, type Preflight, type SkippedItem, type SpooledStep } from './preflight.ts';
import { droppedFields, dropSentences } from './target-schema.ts';
import { apiVersionOf } from '../kube/types.ts';
import { RestoreReport, type KindTally, type PlanEntry, type Verdict } from './report.ts';
import type { SpooledItem } from './spool.ts';
import { nudgeProfiles } from './nudge.ts';
import { watchProfileNamespaces } from './wait.ts';
import { isPvcStep, VolumeFill } from './volume-fill.ts';
import { Channel } from './channel.ts';
import { preflightDone, restoreActivity, startRestoreActivity } from './activity.ts';
import { mergeIntoControllerServiceAccount, writeArchivedStatus } from './controller-objects.ts';
import { describe } from '../errors/index.ts';
import { AdmissionForecast } from './admission-forecast.ts';
import { mayExceedQuota, namespaceQuotaLimits } from '../kubeflow/quota-rules.ts';
import { neutralWording, type Wording } from '../errors/remedy.ts';

// what a restore is asked to do, typed below the engine so that the preflight takes the same request
export type { ConflictPolicy, RestoreRequest } from './request.ts';
import type { ConflictPolicy, RestoreRequest } from './request.ts';

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
  /** with skipRefused: every archived item the allow-list refused, with its reason; none of them was written */
  refused: string[];
  /** kinds and versions the target serves in no version, with counts (`mxjobs.kubeflow.org/v1 (1 object)`): left out */
  unserved: string[];
  /** kinds restored through another served version (`virtualservices.networking.istio.io v1alpha3 → v1beta1`) */
  mappings: string[];
  /** one sentence per field the target's schema dropped (or, on dry-run, would drop) */
  dropped: string[];
  /** dry run: one sentence per namespace whose quota and LimitRange checks were predicted rather than asked */
  predicted: string[];
  warnings: string[];
  /** what the HMAC check found, as a sentence fragment for results */
  authentication: string;
  /** `namespace/pvc: old → new` for each PVC storage-class-map moves (on dry-run too) */
  storageClasses: string[];
  /** `namespace/name` of each KFP recurring run in the backup: never written, to be recreated through KFP */
  recurringRuns: string[];
  /**
   * one sentence per archived object the restore left out on purpose, `Kind/namespace/name: reason` (`Kind/name: …`
   * for a cluster-scoped one): finished Jobs, generated objects, filtered kinds …, so that nothing is left out silently
   */
  skippedObjects: string[];
  objectsChecked: number;
  /** wall time the run spent waiting on controllers: for the profile controller's namespaces after the Profiles
   * were written, for late PodDefaults summed over the namespaces that waited (how many in `podDefaultWaits`), and
   * while objects waited for an admission webhook the API server could not call yet (webhook-wait.ts) */
  waits: { profileNamespacesMs: number; podDefaultsMs: number; podDefaultWaits: number; webhooksMs: number };
  volumes: { restored: number; note?: string };
  controlPlane: { restored: number; note?: string };
  durationSeconds: number;
}

const FIELD_MANAGER = 'kubeflow-upgrader';

export async function runRestore(kube: RestoreKube, store: BackupStore, request: RestoreRequest): Promise<RestoreOutcome> {
  const started = Date.now();
  let status = `reading backup ${request.backupId}`;
  let lastSent: string | undefined;
  const sink = request.progress;
  // The heartbeat sends the status only when it changed since the last line: a wait shows up as silence, not as a
  // line repeated every few seconds.
  const heartbeat = sink ? setInterval(() => {
    if (status === lastSent) return;
    lastSent = status;
    void sink(status);
  }, request.progressIntervalMs ?? 2000) : undefined;
  heartbeat?.unref();
  const say = async (message: string) => {
    status = message;
    if (message === lastSent) return;
    lastSent = message;
    await sink?.(message);
  };
  try {
    let filter: ResourceFilter;
    let storageClassMap: Map<string, string>;
    try {
      filter = parseResourceFilter(request.includeResources?.join(','), request.excludeResources?.join(','));
      storageClassMap = parseStorageClassMap(request.storageClassMap);
    } catch (error) {
      throw new RestoreInputError(`${(error as Error).message} Nothing was restored.`);
    }
    startRestoreActivity();
    const preflight = await runPreflight(kube, store, request, { filter, progress: say });
    preflightDone();
    try {
      const storage = await reviewStorageClasses(kube, preflight, storageClassMap, request.wording);
      const recurringRuns = preflight.skipped.flatMap((s) => (s.recurringRun ? [s.recurringRun] : [])).sort();
      const total = preflight.profiles.length + preflight.steps.reduce((n, s) => n + s.count, 0);
      await say(`backup ${preflight.backupId} verified (${preflight.objectsChecked} objects checked): restoring ${preflight.profiles.length} Profile(s) and ${total - preflight.profiles.length} namespaced objects`);
      const policy = request.conflictPolicy ?? 'skip';
      if (policy === 'fail' && !request.dryRun) {
        // conflict-policy=fail stops before the first write when the target already holds a differing object.
        const plan = await new RestoreRun(kube, preflight, request, true, storageClassMap, (m) => { status = m; }, (m) => { status = m; }).execute();
        const conflicts = plan.conflicts;
        if (conflicts.length > 0) {
          throw new RestoreStoppedError(`conflict-policy=fail: ${conflicts.length} object(s) exist and differ from backup ${preflight.backupId} (${listOf(conflicts, 10)}); nothing was restored — rerun with conflict-policy=skip or update.`);
        }
      }
      const run = new RestoreRun(kube, preflight, request, request.dryRun === true, storageClassMap, say, (m) => { status = m; });
      await run.execute();
      restoreActivity.phase = 'done';
      const report = run.report;
      return {
        backupId: preflight.backupId,
        dryRun: request.dryRun === true,
        totals: report.totals(),
        byKind: report.byKind,
        plan: report.planEntries(),
        failures: report.failures,
        refused: preflight.refused,
        unserved: preflight.unserved.map(describeUnserved),
        mappings: preflight.mappings,
        dropped: run.dropped,
        predicted: run.forecast?.notes() ?? [],
        authentication: preflight.authentication.note,
        warnings: [
          ...preflight.warnings,
          ...storage.warnings,
          ...(recurringRuns.length ? [`${recurringRuns.length} KFP recurring run(s) were not restored (${listOf(recurringRuns, 10)}): only KFP can make one, so recreate each through KFP (docs/upgrades.md, "KFP recurring runs")`] : []),
          ...(preflight.refused.length ? [`skip-refused: ${preflight.refused.length} archived item(s) the allow-list refuses were left out and not written (listed under refused)`] : []),
          ...unservedWarnings(preflight, request),
          ...preflight.mappings.map((m) => `${m}: the target does not serve the archived version, so these objects are restored through the served one (conversion None)`),
          ...run.warnings,
          ...run.dropped,
        ],
        storageClasses: storage.changes,
        recurringRuns,
        skippedObjects: preflight.skipped.flatMap((s) => (s.name ? [`${[s.kind, s.namespace, s.name].filter((part) => part !== '').join('/')}: ${s.reason}`] : [])),
        objectsChecked: preflight.objectsChecked,
        waits: run.waits(),
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

const NO_LIVE_OBJECTS: ReadonlyMap<string, KubeObject> = new Map();

/** One pass over the preflighted archive: real, or planning only (`dry`). */
class RestoreRun {
  readonly report = new RestoreReport();
  readonly warnings: string[] = [];
  readonly conflicts: string[] = [];
  /** a sentence per field the target's schema dropped (dry run: would drop) */
  readonly dropped: string[] = [];
  /** dry run: the namespaces the target has; a request for an object elsewhere is asked in a stand-in namespace */
  private targetNamespaces: ReadonlySet<string> | undefined;
  /** dry run: where such a request is asked (standInNamespace) */
  private standIn: { name: string; profile: boolean } | undefined;
  /** dry run: the quota and LimitRange admission the target cannot be asked about, predicted (admission-forecast.ts) */
  forecast: AdmissionForecast | undefined;
  /** per namespace, the hard lists of the quotas it will have (quotaBound): its Profile's and the backup's */
  private readonly quotaLimits = new Map<string, ReadonlyArray<Record<string, unknown>>>();
  volumes: RestoreOutcome['volumes'] = { restored: 0 };
  controlPlane: RestoreOutcome['controlPlane'] = { restored: 0 };
  /** archived uid → uid in the target, for relinking ownerReferences (only for uids some object names as owner) */
  private readonly uids = new Map<string, string>();
  private readonly policy: ConflictPolicy;
  /** objects being applied at once, across every namespace and step: twice the client's concurrency, so the
   * transport always has the next request ready */
  private readonly limit: number;
  private readonly slots: LimitFunction;
  /** the first error that stops the restore; every loop checks it before starting more work */
  private failure: unknown;
  /** namespaces that went through a phase's last step: a set, since a volume fill splits the steps into two phases */
  private readonly namespacesDone = new Set<string>();
  private profileNamespacesMs = 0;
  /** set by execute(): the wait for late PodDefaults before each namespace's first workload */
  private podDefaults: PodDefaultWait | undefined;
  /** fills the PVCs this run creates (or an earlier run left unfilled) with their archived data */
  private readonly volumeFill: VolumeFill;
  /** the steps that make Pods (restore-order.ts), judged once: every namespace asks at every step */
  private readonly workloadSteps: ReadonlySet<SpooledStep>;
  /** writes refused because an admission webhook cannot be called yet wait for it here (a dry run does not wait) */
  private readonly webhookWait: WebhookWait;
  /** whether the target is dual-stack, asked once when a Service needs it */
  private readonly ipFamilies: TargetIpFamilies;

  constructor(
    private readonly kube: RestoreKube,
    private readonly preflight: Preflight,
    private readonly request: RestoreRequest,
    private readonly dry: boolean,
    private readonly storageClassMap: ReadonlyMap<string, string>,
    private readonly say: (message: string) => void | Promise<void>,
    /** the heartbeat's line, updated often without sending anything */
    private readonly status: (message: string) => void = () => undefined,
  ) {
    this.policy = request.conflictPolicy ?? 'skip';
    this.limit = Math.max(2, kube.concurrency * 2);
    this.slots = pLimit(this.limit);
    this.volumeFill = new VolumeFill(kube, preflight, request, dry, (message) => this.say(message));
    this.workloadSteps = new Set(preflight.steps.filter((step) => isWorkloadStep(step.group, step.resource)));
    this.ipFamilies = new TargetIpFamilies(kube, dry, FIELD_MANAGER);
    // an object waiting for a webhook lends its slot: the limit grows by one while it waits
    this.webhookWait = new WebhookWait(dry ? 0 : request.waitTimeoutMs ?? 300_000, (message) => this.say(message), request.wording, (waiting) => {
      this.slots.concurrency += waiting ? 1 : -1;
    }, dry);
  }

  waits(): RestoreOutcome['waits'] {
    return {
      profileNamespacesMs: Math.round(this.profileNamespacesMs), podDefaultsMs: Math.round(this.podDefaults?.waitedMs ?? 0), podDefaultWaits: this.podDefaults?.waits ?? 0,
      webhooksMs: Math.round(this.webhookWait.waitedMs),
    };
  }

  async execute(): Promise<this> {
    const { preflight } = this;
    if (this.dry && this.request.dryRun) {
      const namespaces = await this.kube.findByResource('', 'namespaces');
      const listed = namespaces ? (await this.kube.listAll(namespaces)).items : [];
      if (namespaces) this.targetNamespaces = new Set(listed.map((n) => n.metadata.name ?? ''));
      this.standIn = standInNamespace(listed);
      this.forecast = await AdmissionForecast.open(this.kube, preflight.profiles, preflight.namespaces, this.targetNamespaces ?? new Set());
    }
    if (!this.dry) {
      const expected = recordedPodDefaults(preflight.manifest?.extras);
      const resource = expected.size ? await this.kube.findByResource('kubeflow.org', 'poddefaults') : undefined;
      this.podDefaults = new PodDefaultWait(this.kube, resource, expected, this.request.waitTimeoutMs ?? 300_000, this.request.wording);
    }
    try {
      return await this.executeSteps();
    } finally {
      const late = this.podDefaults?.finish();
      if (late) this.warnings.push(late);
      this.warnings.push(...this.webhookWait.finish());
    }
  }

  private async executeSteps(): Promise<this> {
    const { preflight } = this;
    await this.restoreControlPlane();
    for (const item of preflight.skipped) this.report.record(item.key, item.kind, item.namespace, 'skip', skipReason(item));
    // Kinds the target serves in no version: a dry run without skip-unserved counts them as refused (the restore
    // would refuse the backup); with skip-unserved they are skipped, each named.
    const unservedVerdict: Verdict = this.request.skipUnserved ? 'skip' : 'fail';
    for (const step of preflight.unserved) {
      for await (const item of preflight.spool.read(step.spoolKey, preflight.namespaces)) {
        const why = `${describeObject(item.object)}: ${step.what} is not served by the target${this.request.skipUnserved ? ' (skip-unserved leaves it out)' : ''}`;
        this.report.record(step.key, item.object.kind, item.object.metadata.namespace ?? '', unservedVerdict, why);
      }
    }
    // Volume data must be in a new PVC before anything that mounts it exists, so when there is data to fill, every
    // namespace stops after its PVCs, the volumes are filled, and then the rest goes on. Otherwise: no barrier.
    const cut = this.volumeFill.fills() ? preflight.steps.findIndex(isAfterPvcs) : -1;
    const early = cut < 0 ? preflight.steps : preflight.steps.slice(0, cut);
    const late = cut < 0 ? [] : preflight.steps.slice(cut);
    const newPvcs: Array<{ namespace: string; name: string }> = [];
    if (this.dry || preflight.profiles.length === 0) {
      // A plan, or the pass conflict-policy=fail makes first: nothing is written, so everything is compared.
      if (preflight.profiles.length > 0) {
        const profiles = preflight.profileResource!;
        await this.applyAll('profiles.kubeflow.org', profiles, this.profileItems(), await this.liveObjects(profiles, undefined));
      }
      await this.stepwise(preflight.steps, preflight.namespaces, newPvcs);
      await this.restoreVolumes(newPvcs);
      return this;
    }
    const { fresh, existing, timedOut } = await this.profilesAndEarlySteps(early, newPvcs);
    await this.restoreVolumes(newPvcs);
    if (late.length > 0) await this.everyNamespace(late, fresh, existing, newPvcs);
    await this.say(`restored ${this.report.done} objects in ${this.namespacesDone.size} namespace(s)`);
    if (timedOut) throw new RestoreStoppedError(timedOut);
    return this;
  }

  /**
   * Phase 1 and the start of phase 2, overlapped. The namespace watch starts first; Profiles are written
   * concurrently; each namespace whose Profile this run created starts its own steps as soon as the profile
   * controller has made it, while other Profiles are still being written or awaited. Namespaces whose Profile
   * already existed (a rollback, a rerun) go step by step, compared against one LIST per kind, once they are ready.
   */
  private async profilesAndEarlySteps(steps: readonly SpooledStep[], newPvcs: Array<{ namespace: string; name: string }>): Promise<{ fresh: string[]; existing: Set<string>; timedOut: string | undefined }> {
    const { preflight, request } = this;
    const ready = new Set<string>();
    /** Profile name → whether this run created it */
    const created = new Map<string, boolean>();
    const queue = new Channel<string>();
    const fresh: string[] = [];
    const offer = (name: string) => {
      if (ready.has(name) && created.get(name) === true) {
        fresh.push(name);
        queue.push(name);
      }
    };
    const watch = await watchProfileNamespaces(this.kube, preflight.profiles, {
      progress: (m) => this.say(m),
      onReady: (name) => { ready.add(name); restoreActivity.namespacesReady++; offer(name); },
    });
    const pipeline = this.pipeline(steps, queue, newPvcs);
    // judged below with allSettled; a handler now keeps an early failure from counting as unhandled meanwhile
    pipeline.catch(() => undefined);
    let timedOut: string | undefined;
    const existing = new Set<string>();
    try {
      const profiles = preflight.profileResource!;
      const liveProfiles = await this.liveObjects(profiles, undefined);
      await this.applyAll('profiles.kubeflow.org', profiles, this.profileItems(), liveProfiles, (item, verdict) => {
        const name = item.object.metadata.name!;
        created.set(name, verdict === 'create');
        offer(name);
      });
      // A Profile this run did not create is not written again when it is unchanged: if its namespace is missing or
      // not its own (the conflict of an earlier run, fixed since), the controller must be told to look again.
      const kept = preflight.profiles.filter((p) => created.get(p.metadata.name!) !== true)
        .map((p) => liveProfiles.get(`/${p.metadata.name}`)).filter((p): p is KubeObject => p !== undefined);
      const nudged = await nudgeProfiles(this.kube, profiles, kept, { fieldManager: FIELD_MANAGER });
      if (nudged.length > 0) {
        await this.say(`asked the profile controller to reconcile ${nudged.length} existing Profile(s) whose namespace is missing or not theirs: ${listOf(nudged, 10)}`);
      }
      await this.say(`${preflight.profiles.length} Profile(s) applied; waiting for the profile controller to make their namespaces (${ready.size} ready so far)`);
      const waitStarted = performance.now();
      timedOut = await watch.settle(request.waitTimeoutMs ?? 300_000, request.wording);
      this.profileNamespacesMs = performance.now() - waitStarted;
      for (const name of ready) if (created.get(name) !== true) existing.add(name);
    } catch (error) {
      this.failure ??= error;
      watch.stop();
    } finally {
      queue.close();
    }
    // A Profile that existed means its namespace may hold the backup's objects already: those are compared first.
    const results = await Promise.allSettled([pipeline, this.failure ? Promise.resolve() : this.stepwise(steps, existing, newPvcs)]);
    const rejected = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
    if (this.failure || rejected) throw this.failure ?? rejected!.reason;
    return { fresh, existing, timedOut };
  }

  private async everyNamespace(steps: readonly SpooledStep[], fresh: readonly string[], existing: ReadonlySet<string>, newPvcs: Array<{ namespace: string; name: string }>): Promise<void> {
    const queue = new Channel<string>();
    for (const name of fresh) queue.push(name);
    queue.close();
    const results = await Promise.allSettled([this.pipeline(steps, queue, newPvcs), this.stepwise(steps, existing, newPvcs)]);
    const rejected = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
    if (this.failure || rejected) throw this.failure ?? rejected!.reason;
  }

  /**
   * Namespaces this run just made (their Profile was created here), taken in batches of those ready at once: a batch
   * goes step by step, each step's objects of every namespace of the batch together, and two batches run at once so
   * that one's step boundary never leaves the slots idle. There is nothing to compare with yet, so objects are created
   * directly; one that exists after all (a namespace made before with the right owner, or a controller faster than us)
   * answers 409 and is then read and judged like any existing object.
   * A batch rather than one namespace at a time: the same objects cost the cluster's controllers less when each kind
   * comes in a run than when the kinds alternate namespace after namespace (docs/performance.md).
   */
  private async pipeline(steps: readonly SpooledStep[], namespaces: Channel<string>, newPvcs: Array<{ namespace: string; name: string }>): Promise<void> {
    if (steps.length === 0) {
      for await (const namespace of namespaces) this.namespacesDone.add(namespace);
      return;
    }
    const batchSize = this.limit * 2;
    const inFlight = new Set<Promise<void>>();
    // namespaces whose workloads wait for their late PodDefaults, parked outside the batches so others go on meanwhile
    const parked = new Set<Promise<void>>();
    const park = (namespace: string, rest: readonly SpooledStep[]) => {
      restoreActivity.namespacesParked++;
      const task = this.podDefaults!.forNamespace(namespace)
        .then(() => {
          restoreActivity.namespacesParked--;
          // its PodDefaults are there now (or the wait is over), so it is not parked again
          return this.restoreBatch([namespace], rest, newPvcs, park);
        })
        .catch((error: unknown) => { this.failure ??= error; })
        .finally(() => { parked.delete(task); });
      parked.add(task);
    };
    for (;;) {
      if (this.failure) break;
      const batch = await namespaces.take(batchSize);
      if (batch.length === 0) break;
      restoreActivity.phase = 'writes';
      const task = this.restoreBatch(batch, steps, newPvcs, park)
        .catch((error: unknown) => { this.failure ??= error; })
        .finally(() => { inFlight.delete(task); });
      inFlight.add(task);
      if (inFlight.size >= 2) await Promise.race(inFlight);
    }
    await Promise.all(inFlight);
    while (parked.size > 0) await Promise.all([...parked]);
    if (this.failure) throw this.failure;
  }

  /**
   * A batch of namespaces step by step. At a workload step, a namespace whose late PodDefaults do not exist yet is
   * handed to `park` with the steps left, and the batch goes on without it.
   */
  private async restoreBatch(
    batch: readonly string[], steps: readonly SpooledStep[], newPvcs: Array<{ namespace: string; name: string }>,
    park: (namespace: string, rest: readonly SpooledStep[]) => void,
  ): Promise<void> {
    let active = [...batch];
    restoreActivity.namespacesInPipeline += active.length;
    try {
      for (const [index, step] of steps.entries()) {
        if (this.failure) return;
        if (this.podDefaults && this.workloadSteps.has(step)) {
          const ready: string[] = [];
          for (const namespace of active) {
            if (this.podDefaults.isReady(namespace)) ready.push(namespace);
            else park(namespace, steps.slice(index));
          }
          restoreActivity.namespacesInPipeline -= active.length - ready.length;
          active = ready;
        }
        const work: Array<{ namespace: string; item: SpooledItem }> = [];
        const inOrder = new Set<string>();
        for (const namespace of active) {
          const items = this.preflight.spool.readNamespace(spoolKey(step), namespace);
          for (const item of items) work.push({ namespace, item });
          if (this.quotaBound(namespace, step, items)) inOrder.add(namespace);
        }
        // a namespace whose quota these objects overflow takes them one after another, in restore order, so that
        // what the quota refuses is what the dry run predicted; the others in parallel
        const chains = new Map<string, Promise<unknown>>();
        const results = await Promise.allSettled(work.map(({ namespace, item }) => {
          const apply = () => this.slots(() => this.applyOne(step.key, step.target, item, NO_LIVE_OBJECTS));
          if (!inOrder.has(namespace)) return apply();
          const next = (chains.get(namespace) ?? Promise.resolve()).then(apply, apply);
          chains.set(namespace, next);
          return next;
        }));
        for (const [i, result] of results.entries()) {
          if (result.status === 'rejected') throw result.reason;
          if (result.value === 'create' && isPvcStep(step)) newPvcs.push({ namespace: work[i]!.namespace, name: work[i]!.item.object.metadata.name ?? '' });
        }
      }
      for (const namespace of active) this.namespacesDone.add(namespace);
      restoreActivity.namespacesDone = this.namespacesDone.size;
      this.status(`restored ${this.report.done} objects; ${this.namespacesDone.size} namespace(s) done`);
    } finally {
      restoreActivity.namespacesInPipeline -= active.length;
    }
  }

  /**
   * whether this step's objects in `namespace` must reach the server in restore order: the quotas the namespace will
   * have (its archived Profile's resourceQuotaSpec, the backup's ResourceQuotas) count them, and all of them together
   * pass a hard limit, so that which are refused depends on their order (quota-rules.ts mayExceedQuota)
   */
  private quotaBound(namespace: string, step: SpooledStep, items: readonly SpooledItem[]): boolean {
    let limits = this.quotaLimits.get(namespace);
    if (limits === undefined) {
      const quotaStep = this.preflight.steps.find((s) => s.group === '' && s.resource === 'resourcequotas');
      const archived = quotaStep ? this.preflight.spool.readNamespace(spoolKey(quotaStep), namespace).map((item) => item.object) : [];
      limits = namespaceQuotaLimits(this.preflight.profiles.find((p) => p.metadata.name === namespace), archived);
      this.quotaLimits.set(namespace, limits);
    }
    return limits.length > 0 && mayExceedQuota(limits, step.group, step.resource, items.map((item) => item.object));
  }

  /** Step by step over `namespaces`, each step compared against one cluster-wide LIST (one kind in memory at a time). */
  private async stepwise(steps: readonly SpooledStep[], namespaces: ReadonlySet<string>, newPvcs: Array<{ namespace: string; name: string }>): Promise<void> {
    if (namespaces.size === 0) return;
    for (const step of steps) {
      if (this.failure) return;
      if (this.workloadSteps.has(step) && this.podDefaults) {
        const wait = this.podDefaults;
        await Promise.all([...namespaces].map((namespace) => this.slots(() => wait.forNamespace(namespace))));
      }
      const existing = await this.liveObjects(step.target, namespaces);
      const created = await this.applyAll(step.key, step.target, this.preflight.spool.read(spoolKey(step), namespaces), existing);
      if (isPvcStep(step)) newPvcs.push(...created);
      await this.say(`${this.dry ? 'planned' : 'restored'} ${this.report.done} objects; ${step.key} done in ${namespaces.size} namespace(s)`);
    }
    for (const namespace of namespaces) this.namespacesDone.add(namespace);
  }

  /** the archived Profiles as the restore writes them, each copied when its turn comes: thousands copied at once were a peak */
  private *profileItems(): Generator<SpooledItem> {
    for (const profile of this.preflight.profiles) yield { uid: profile.metadata.uid, object: restorable(profile) };
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

  /** applies items, sharing the run's slots; returns the ones created */
  private async applyAll(
    key: string, resource: ApiResource, items: Iterable<SpooledItem> | AsyncIterable<SpooledItem>, live: ReadonlyMap<string, KubeObject>,
    onVerdict?: (item: SpooledItem, verdict: Verdict) => void,
  ): Promise<Array<{ namespace: string; name: string }>> {
    const created: Array<{ namespace: string; name: string }> = [];
    const inFlight = new Set<Promise<void>>();
    for await (const item of items) {
      if (this.failure) break;
      const task = this.slots(() => this.applyOne(key, resource, item, live))
        .then((verdict) => {
          if (verdict === 'create') created.push({ namespace: item.object.metadata.namespace ?? '', name: item.object.metadata.name ?? '' });
          onVerdict?.(item, verdict);
        })
        .catch((error: unknown) => { this.failure ??= error; })
        .finally(() => { inFlight.delete(task); });
      inFlight.add(task);
      // the slots bound the requests; this bounds how many items wait for one
      if (inFlight.size >= this.limit) await Promise.race(inFlight);
    }
    await Promise.all(inFlight);
    if (this.failure) throw this.failure;
    return created;
  }

  private async applyOne(key: string, resource: ApiResource, item: SpooledItem, live: ReadonlyMap<string, KubeObject>): Promise<Verdict> {
    const archived = item.object;
    const namespace = archived.metadata.namespace ?? '';
    const name = `${describeObject(archived)}`;
    const record = (verdict: Verdict, reason?: string): Verdict => {
      this.report.record(key, archived.kind, namespace, verdict, reason);
      return verdict;
    };
    let wanted: KubeObject;
    try {
      wanted = this.relink(this.preflight.opener ? this.preflight.opener.open(archived) : archived);
      if (this.storageClassMap.size && isPvc(wanted)) wanted = withMappedStorageClass(wanted, this.storageClassMap);
      // restored through another served version (conversion None): only apiVersion differs
      const through = apiVersionOf(resource.group, resource.version);
      if (wanted.apiVersion !== through) wanted = { ...wanted, apiVersion: through };
    } catch (error) {
      return record('fail', `${name}: ${(error as Error).message}`);
    }
    // a Service that prefers dual-stack, on a target that is not (ip-families.ts): its primary family, reported
    const families = await this.ipFamilies.adapt(resource, wanted);
    const verdict = await this.write(resource, item, families.object, live, record, name);
    if (families.note && (verdict === 'create' || verdict === 'update')) this.warnings.push(families.note);
    return verdict;
  }

  /** `wanted` (the archived object as the restore writes it) created, or the live one reconciled with it */
  private async write(
    resource: ApiResource, item: SpooledItem, wanted: KubeObject, live: ReadonlyMap<string, KubeObject>,
    record: (verdict: Verdict, reason?: string) => Verdict, name: string,
  ): Promise<Verdict> {
    const archived = item.object;
    const namespace = archived.metadata.namespace ?? '';
    if (isControllerServiceAccount(archived)) return this.mergeServiceAccount(resource, wanted, live.get(`${namespace}/${archived.metadata.name}`), record, name);
    let existing = live.get(`${namespace}/${archived.metadata.name}`);
    if (!existing) {
      // a dry run asks the target; the pass conflict-policy=fail makes first only looks for conflicts
      if (this.dry) return this.request.dryRun ? this.askCreate(resource, item, wanted, record, name) : record('create');
      try {
        const guard = item.status !== undefined ? suspendedForStatus(wanted) : undefined;
        const pin = item.status !== undefined ? finishedExperimentPin(wanted, item.status) : undefined;
        let toCreate = guard?.create ?? wanted;
        if (pin !== undefined) toCreate = { ...toCreate, spec: { ...(toCreate.spec as object), maxTrialCount: pin } };
        const sent = this.volumeFill.withMarkIfFilled(resource, toCreate);
        const made = await this.webhookWait.write(name, () => this.kube.create(resource, sent, { safeToRetry: true, fieldManager: FIELD_MANAGER }));
        this.dropped.push(...dropSentences(archived, droppedFields(sent, made), false));
        this.remember(item.uid, made);
        if (item.status !== undefined) {
          const problem = await writeArchivedStatus(this.kube, resource, made, statusToWrite(wanted, item.status), FIELD_MANAGER);
          if (problem) return record('fail', `${name} was created, but its status was not restored (${problem}), so its controller may run it again — rerun the restore to finish it`);
          if (guard) {
            const resumed = await this.webhookWait.write(name, () => this.kube.patch(resource, made.metadata.name!, made.metadata.namespace, guard.resume, 'merge', { fieldManager: FIELD_MANAGER }))
              .then(() => true, (error: unknown) => { if (error instanceof WebhookUnreachableError) return false; throw error; });
            if (!resumed) return record('fail', `${name} was created suspended and is not resumed yet, because the API server could not call its admission webhook (see the warning); a rerun resumes it`);
          }
        }
        return record('create', pin === undefined ? undefined : pinReason(name, pin));
      } catch (error) {
        if (error instanceof WebhookUnreachableError) return record('fail', error.message);
        if (!isAlreadyExists(error)) return record('fail', `${name}: ${describe(error)}`);
        // Made meanwhile (by a controller, or by a previous attempt whose answer was lost): judge it like any existing object.
        existing = await this.kube.tryGet(resource, archived.metadata.name!, archived.metadata.namespace);
        if (!existing) return record('fail', `${name}: it was reported to exist and then was not found`);
      }
    }
    return this.reconcile(resource, item, wanted, existing, record, name);
  }

  /**
   * Dry run of a create: the target answers a dryRun=All create with what it would store (its admission, validation,
   * defaulting and pruning applied) or refuses it with its sentence. An object whose namespace the target does not
   * have yet (its Profile is not restored in a dry run) is asked in a namespace the target has: NamespaceLifecycle
   * refuses any create in a missing namespace, dry runs included.
   */
  private async askCreate(
    resource: ApiResource, item: SpooledItem, wanted: KubeObject, record: (verdict: Verdict, reason?: string) => Verdict, name: string,
  ): Promise<Verdict> {
    const guard = item.status !== undefined ? suspendedForStatus(wanted) : undefined;
    const asIs = guard?.create ?? wanted;
    let sent = asIs;
    const namespace = sent.metadata.namespace;
    const standIn = resource.namespaced && namespace && this.targetNamespaces && !this.targetNamespaces.has(namespace) ? this.standIn?.name : undefined;
    if (standIn) sent = { ...sent, metadata: { ...sent.metadata, namespace: standIn } };
    // taken before the first await, so in restore order: the forecast charges what it admits as the server would
    const predicted = this.forecast?.admit(resource, asIs);
    const accepted = (reason?: string): Verdict => {
      if (predicted?.refusal !== undefined) return record('fail', `${name}: would be refused by the target (predicted, not asked): 403 Forbidden: ${predicted.refusal}`);
      this.forecast?.adopt(resource, asIs);
      return record('create', reason);
    };
    try {
      const answer = await this.webhookWait.write(name, () => this.kube.create(resource, sent, { dryRun: true, fieldManager: FIELD_MANAGER }));
      const fields = droppedFields(sent, answer);
      this.dropped.push(...dropSentences(item.object, fields, true));
      return accepted(fields.length ? `${name}: accepted; the target's schema would drop ${listOf(fields, 5)}` : undefined);
    } catch (error) {
      if (error instanceof WebhookUnreachableError) return record('fail', error.message);
      // a same-named object in the stand-in namespace says nothing about this one
      if (standIn && isAlreadyExists(error)) return accepted();
      // An admission webhook may judge the namespace as well as the object (Katib's Experiment validator refuses a
      // namespace without its metrics-collector label, kubeflow/katib pkg/webhook/v1beta1/experiment/
      // validation_webhook.go): its answer about a stand-in that is no profile namespace says nothing about the
      // profile namespace the Profile's controller will make, so it is reported as not asked, its sentence quoted.
      const denial = standIn && !this.standIn?.profile ? webhookDenial(error) : undefined;
      if (denial) return accepted(`${name}: not asked of admission webhook "${denial}": the target has no namespace ${namespace} yet and no profile namespace to ask in; asked in ${standIn}, it said: ${describe(error)}`);
      if (predicted?.refusal === undefined) predicted?.undo();
      return record('fail', `${name}: refused by the target: ${describe(error)}`);
    }
  }

  private async reconcile(
    resource: ApiResource, item: SpooledItem, wanted: KubeObject, existing: KubeObject,
    record: (verdict: Verdict, reason?: string) => Verdict, name: string,
  ): Promise<Verdict> {
    const archived = item.object;
    const unfinished = item.status !== undefined ? await this.finishInterruptedCreate(resource, item, wanted, existing, name) : undefined;
    if (unfinished) return record(unfinished.verdict, unfinished.reason);
    for (let attempt = 0; ; attempt++) {
      const differs = unmetFields(wanted, existing);
      if (differs.length === 0) {
        this.remember(item.uid, existing);
        return record('unchanged');
      }
      const what = `${name} differs from the backup in ${listOf(differs, 5)}`;
      if (this.policy === 'skip') {
        this.remember(item.uid, existing);
        return record('skip', `${what} (conflict-policy=skip keeps the live object)`);
      }
      if (this.policy === 'fail') {
        this.conflicts.push(name);
        if (this.dry) return record('fail', `${what} (conflict-policy=fail)`);
        record('fail', `${what} (conflict-policy=fail)`);
        throw new RestoreStoppedError(`conflict-policy=fail: ${what}; the restore stopped there — rerun with conflict-policy=skip or update.`);
      }
      // a binding of another role is never updated into this one (role-ref.ts): kept as it is, and said once
      const otherRole = roleRefChange(wanted, existing);
      if (otherRole) {
        this.remember(item.uid, existing);
        return record('fail', `${name}: not updated: ${otherRole}; the live binding is kept — delete it and rerun to restore the backup's`);
      }
      // what the target set that its API server refuses to see change (restore-changes.ts, keepOnUpdate)
      const kept = replacementFor(wanted, existing);
      const replacement: KubeObject = { ...kept, metadata: { ...kept.metadata, resourceVersion: existing.metadata.resourceVersion } };
      try {
        // What the server would keep (its dryRun=All answer) is what the live object is compared with: a field the
        // target's schema prunes is no difference, so a rerun after pruning writes nothing.
        const answer = await this.webhookWait.write(name, () => this.kube.replace(resource, replacement, { dryRun: true, fieldManager: FIELD_MANAGER }));
        const fields = droppedFields(replacement, answer);
        const drops = dropSentences(archived, fields, this.dry);
        if (unmetFields(restorable(answer), existing).length === 0) {
          this.dropped.push(...drops);
          this.remember(item.uid, existing);
          return record('unchanged', fields.length ? `${name} holds what the target keeps of the backup (${listOf(fields, 5)} dropped by its schema)` : undefined);
        }
        if (this.dry) {
          this.dropped.push(...drops);
          return record('update', `${what} (conflict-policy=update overwrites it)`);
        }
        const updated = await this.webhookWait.write(name, () => this.kube.replace(resource, replacement, { fieldManager: FIELD_MANAGER }));
        this.dropped.push(...dropSentences(archived, droppedFields(replacement, updated), false));
        this.remember(item.uid, updated);
        return record('update', `${what} (conflict-policy=update)`);
      } catch (error) {
        if (error instanceof WebhookUnreachableError) return record('fail', error.message);
        if (!isConflict(error) || attempt >= 3) return record('fail', `${name}: ${describe(error)}`);
        const fresh = await this.kube.tryGet(resource, archived.metadata.name!, archived.metadata.namespace);
        if (!fresh) return record('fail', `${name}: it was deleted while being updated`);
        existing = fresh;
      }
    }
  }

  /**
   * An object whose create an earlier restore made but did not finish (a crash, a lost answer, a status write that
   * failed): a training job still suspended by the restore's guard, or an Experiment pinned by it (finishedExperimentPin)
   * whose status is not yet the archived finished one. Comparing only the fields the archive sets would call either
   * unchanged and leave it suspended, or running again, for good; so the archived status is written (again: the write
   * replaces the whole status, so repeating it is harmless) and the job resumed. Undefined when there is nothing to finish.
   */
  private async finishInterruptedCreate(
    resource: ApiResource, item: SpooledItem, wanted: KubeObject, existing: KubeObject, name: string,
  ): Promise<{ verdict: Verdict; reason: string } | undefined> {
    const suspended = awaitsResume(wanted, existing);
    const pin = finishedExperimentPin(wanted, item.status);
    const pinnedButRunning = pin !== undefined && (existing.spec as { maxTrialCount?: number } | undefined)?.maxTrialCount === pin && !isFinishedStatus(existing.status);
    if (!suspended && !pinnedButRunning) return undefined;
    const what = suspended ? `${name} was left suspended by an earlier restore that stopped before resuming it` : `${name} was created by an earlier restore that stopped before writing its status`;
    if (this.dry) return { verdict: 'update', reason: `${what}: its status would be written${suspended ? ' and it would be resumed' : ''}` };
    const problem = await writeArchivedStatus(this.kube, resource, existing, statusToWrite(wanted, item.status), FIELD_MANAGER);
    if (problem) return { verdict: 'fail', reason: `${what}, and its status could not be written (${problem}) — rerun the restore` };
    if (suspended) await this.kube.patch(resource, existing.metadata.name!, existing.metadata.namespace, suspendedForStatus(wanted)!.resume, 'merge', { fieldManager: FIELD_MANAGER });
    this.remember(item.uid, existing);
    return { verdict: 'update', reason: `${what}: its status was written${suspended ? ' and it was resumed' : ''}` };
  }

  private mergeServiceAccount(
    resource: ApiResource, wanted: KubeObject, known: KubeObject | undefined,
    record: (verdict: Verdict, reason?: string) => Verdict, name: string,
  ): Promise<Verdict> {
    const writer = { kube: this.kube, dry: this.dry, fieldManager: FIELD_MANAGER, waitTimeoutMs: this.request.waitTimeoutMs ?? 300_000, wording: this.request.wording ?? neutralWording, warn: (w: string) => void this.warnings.push(w) };
    return mergeIntoControllerServiceAccount(writer, resource, wanted, known, record, name);
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

  private remember(archivedUid: string | undefined, live: KubeObject): void {
    if (archivedUid && live.metadata.uid && this.preflight.ownerUids.has(archivedUid)) this.uids.set(archivedUid, live.metadata.uid);
  }

  private async restoreVolumes(created: Array<{ namespace: string; name: string }>): Promise<void> {
    const { volumes, warnings } = await this.volumeFill.fill(created);
    this.volumes = volumes;
    this.warnings.push(...warnings);
  }

  private async restoreControlPlane(): Promise<void> {
    const { request, preflight } = this;
    if (!request.controlPlane) return;
    if (this.dry) {
      this.controlPlane.note = 'would restore the control-plane data';
      return;
    }
    await this.say('restoring the control-plane data');
    const result = await request.controlPlane(preflight.backupId, (m) => this.say(m), preflight.manifest);
    this.controlPlane = { restored: result.restored, ...(result.notes.length ? { note: result.notes.join(' ') } : {}) };
    this.warnings.push(...result.notes);
  }
}

/**
 * Where a dry run asks about objects of a namespace the target does not have yet: a profile namespace of the target if
 * it has one (its Profile's controller owns it: kubeflow/kubeflow components/profile-controller/controllers/
 * profile_controller.go SetControllerReference), whose labels the admission webhooks select and check as they will the
 * restored profile's; else `default`, which every cluster has.
 */
function standInNamespace(namespaces: readonly KubeObject[]): { name: string; profile: boolean } | undefined {
  const live = namespaces.filter((n) => !n.metadata.deletionTimestamp && n.metadata.name);
  const profile = live.find((n) => n.metadata.ownerReferences?.some((o) => o.kind === 'Profile' && o.controller === true));
  if (profile) return { name: profile.metadata.name!, profile: true };
  const names = live.map((n) => n.metadata.name!).sort();
  const name = names.includes('default') ? 'default' : names[0];
  return name ? { name, profile: false } : undefined;
}

/** the webhook that answered and refused (kube-apiserver: `admission webhook "<name>" denied the request: …`) */
function webhookDenial(error: unknown): string | undefined {
  return /admission webhook "([^"]+)" denied the request/.exec(describe(error))?.[1];
}

function unservedWarnings(preflight: Preflight, request: RestoreRequest): string[] {
  if (preflight.unserved.length === 0) return [];
  const listed = listOf(preflight.unserved.map(describeUnserved), 50);
  if (request.skipUnserved) return [`skip-unserved: the target serves no version of ${listed}; ${request.dryRun ? 'these would be' : 'these were'} left out and not written`];
  return [`the target serves no version of ${listed}: a restore refuses this backup and writes nothing, unless skip-unserved is set (which leaves these out)`];
}

/** a skipped item's reason, naming it: `Kind/namespace/name: reason` (a reason that names the object already is kept) */
function skipReason(item: SkippedItem): string {
  const named = [item.kind, item.namespace, item.name].filter((part) => part !== undefined && part !== '').join('/');
  return item.reason.includes(`${named}`) && item.name ? item.reason : `${named}: ${item.reason}`;
}

/** the reason a finished Experiment's create carries: what the restore set, and why */
function pinReason(name: string, pin: number): string {
  return `${name} finished without spec.maxTrialCount; it was restored with maxTrialCount ${pin} so that Katib, which restarts such an Experiment, keeps it finished`;
}

/** true for a step that may use a PVC: everything but the core kinds ordered up to and including PVCs */
function isAfterPvcs(step: SpooledStep): boolean {
  return !isBeforeVolumeFill(step.group, step.resource);
}
