// The restore engine (docs/architecture.md, "restore-state (the restore phases)"): the preflight before any write,
// then one pass over the archive, in parts: the planner (planner.ts) decides what is written and in which order, the
// scheduler (scheduler.ts, batches.ts) when each namespace's objects are written and when the volumes are filled, and
// the writer (writer.ts) how each object is written, in the pass's one mode (mode.ts), with the per-kind behaviours
// the kinds table names (src/kubeflow/write-behaviours.ts, kind-writes.ts). Every object is judged against what the
// target already holds, so a rerun after any crash converges and writes nothing that already matches. Nothing here
// knows about Juju; the charm and the CLI hand in their KubeClient (as the port src/restore/kube-port.ts) and a
// BackupStore, and the volume and control-plane steps are optional callbacks.
import pLimit, { type LimitFunction } from 'p-limit';
import type { RestoreKube } from './kube-port.ts';
import type { BackupStore } from '../store/backup-store.ts';
import { parseResourceFilter, type ResourceFilter } from '../kubeflow/resource-filters.ts';
import { recordedPodDefaults } from '../kubeflow/late-pod-defaults.ts';
import { parseStorageClassMap } from '../kubeflow/storage-classes.ts';
import { PodDefaultWait } from './pod-default-wait.ts';
import { WebhookWait } from './webhook-wait.ts';
import { reviewStorageClasses } from './storage-classes.ts';
import { RestoreInputError, RestoreStoppedError, listOf } from './errors.ts';
import { TargetIpFamilies } from './ip-families.ts';
import { describeUnserved, runPreflight, type Preflight } from './preflight.ts';
import type { KindTally, PlanEntry } from './report.ts';
import { VolumeFill, type PvcName } from './volume-fill.ts';
import { preflightDone, restoreActivity, startRestoreActivity } from './activity.ts';
import type { AdmissionForecast } from './admission-forecast.ts';
import { DryRunAsk } from './dry-run-ask.ts';
import { FIELD_MANAGER, RestoreWriter, type WriterOptions } from './writer.ts';
import { RestorePlan } from './planner.ts';
import { NamespaceScheduler } from './scheduler.ts';
import { writes, type WriteMode } from './mode.ts';

// what a restore is asked to do, typed below the engine so that the preflight takes the same request
export type { ConflictPolicy, RestoreRequest } from './request.ts';
import type { RestoreRequest } from './request.ts';

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
        const plan = await new RestoreRun(kube, preflight, request, 'conflict-scan', storageClassMap, (m) => { status = m; }, (m) => { status = m; }).execute();
        const conflicts = plan.writer.conflicts;
        if (conflicts.length > 0) {
          throw new RestoreStoppedError(`conflict-policy=fail: ${conflicts.length} object(s) exist and differ from backup ${preflight.backupId} (${listOf(conflicts, 10)}); nothing was restored — rerun with conflict-policy=skip or update.`);
        }
      }
      const run = new RestoreRun(kube, preflight, request, request.dryRun === true ? 'dry-run' : 'write', storageClassMap, say, (m) => { status = m; });
      await run.execute();
      restoreActivity.phase = 'done';
      const report = run.writer.report;
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
        dropped: run.writer.dropped,
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
          ...run.writer.dropped,
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

/**
 * One pass over the preflighted archive, in one mode (mode.ts): the planner decides what is written and in which order,
 * the scheduler when each namespace's objects are written, the writer how each object is.
 */
class RestoreRun {
  readonly writer: RestoreWriter;
  /** made by execute(), once the run knows whether it waits for late PodDefaults */
  private scheduler: NamespaceScheduler | undefined;
  /** dry run: the quota and LimitRange admission the target cannot be asked about, predicted (admission-forecast.ts) */
  forecast: AdmissionForecast | undefined;
  volumes: RestoreOutcome['volumes'] = { restored: 0 };
  controlPlane: RestoreOutcome['controlPlane'] = { restored: 0 };
  /** set by execute() in a real run: the wait for late PodDefaults before each namespace's first workload */
  private podDefaults: PodDefaultWait | undefined;
  /** fills the PVCs this run creates (or an earlier run left unfilled) with their archived data */
  private readonly volumeFill: VolumeFill;
  /** writes refused because an admission webhook cannot be called yet wait for it here (a dry run does not wait) */
  private readonly webhookWait: WebhookWait;
  private readonly writerOptions: WriterOptions;
  private readonly plan: RestorePlan;
  private readonly slots: LimitFunction;
  private readonly limit: number;

  constructor(
    private readonly kube: RestoreKube,
    private readonly preflight: Preflight,
    private readonly request: RestoreRequest,
    private readonly mode: WriteMode,
    storageClassMap: ReadonlyMap<string, string>,
    private readonly say: (message: string) => void | Promise<void>,
    /** the heartbeat's line, updated often without sending anything */
    private readonly status: (message: string) => void = () => undefined,
  ) {
    const dry = !writes(mode);
    // objects being applied at once, across every namespace and step: twice the client's concurrency, so the
    // transport always has the next request ready
    const limit = this.limit = Math.max(2, kube.concurrency * 2);
    const slots = this.slots = pLimit(limit);
    this.volumeFill = new VolumeFill(kube, preflight, request, dry, (message) => this.say(message));
    // an object waiting for a webhook lends its slot: the limit grows by one while it waits
    this.webhookWait = new WebhookWait(dry ? 0 : request.waitTimeoutMs ?? 300_000, (message) => this.say(message), request.wording, (waiting) => {
      slots.concurrency += waiting ? 1 : -1;
    }, dry);
    this.writerOptions = {
      kube, mode, fieldManager: FIELD_MANAGER, storageClassMap, volumeFill: this.volumeFill, preflight, request,
      ipFamilies: new TargetIpFamilies(kube, dry, FIELD_MANAGER), webhookWait: this.webhookWait,
    };
    this.writer = new RestoreWriter(this.writerOptions);
    this.plan = new RestorePlan(preflight, this.volumeFill.fills());
  }

  get warnings(): string[] {
    return this.writer.warnings;
  }

  waits(): RestoreOutcome['waits'] {
    return {
      profileNamespacesMs: Math.round(this.scheduler?.profileNamespacesMs ?? 0), podDefaultsMs: Math.round(this.podDefaults?.waitedMs ?? 0), podDefaultWaits: this.podDefaults?.waits ?? 0,
      webhooksMs: Math.round(this.webhookWait.waitedMs),
    };
  }

  async execute(): Promise<this> {
    const { preflight } = this;
    if (this.mode === 'dry-run') {
      const ask = await DryRunAsk.open(this.kube, preflight);
      this.writerOptions.ask = ask;
      this.forecast = ask.forecast;
    }
    if (writes(this.mode)) {
      const expected = recordedPodDefaults(preflight.manifest?.extras);
      const resource = expected.size ? await this.kube.findByResource('kubeflow.org', 'poddefaults') : undefined;
      this.podDefaults = new PodDefaultWait(this.kube, resource, expected, this.request.waitTimeoutMs ?? 300_000, this.request.wording);
    }
    try {
      await this.restoreControlPlane();
      await this.plan.recordLeftOut(this.writer.report, this.request);
      this.scheduler = new NamespaceScheduler({
        kube: this.kube, plan: this.plan, writer: this.writer, mode: this.mode, slots: this.slots, limit: this.limit,
        podDefaults: this.podDefaults, fill: (created) => this.restoreVolumes(created), say: this.say, status: this.status,
        waitTimeoutMs: this.request.waitTimeoutMs ?? 300_000, wording: this.request.wording,
      });
      await this.scheduler.run();
      return this;
    } finally {
      const late = this.podDefaults?.finish();
      if (late) this.warnings.push(late);
      this.warnings.push(...this.webhookWait.finish());
    }
  }

  private async restoreVolumes(created: PvcName[]): Promise<void> {
    const { volumes, warnings } = await this.volumeFill.fill(created);
    this.volumes = volumes;
    this.warnings.push(...warnings);
  }

  private async restoreControlPlane(): Promise<void> {
    const { request, preflight } = this;
    if (!request.controlPlane) return;
    if (!writes(this.mode)) {
      this.controlPlane.note = 'would restore the control-plane data';
      return;
    }
    await this.say('restoring the control-plane data');
    const result = await request.controlPlane(preflight.backupId, (m) => this.say(m), preflight.manifest);
    this.controlPlane = { restored: result.restored, ...(result.notes.length ? { note: result.notes.join(' ') } : {}) };
    this.warnings.push(...result.notes);
  }
}

function unservedWarnings(preflight: Preflight, request: RestoreRequest): string[] {
  if (preflight.unserved.length === 0) return [];
  const listed = listOf(preflight.unserved.map(describeUnserved), 50);
  if (request.skipUnserved) return [`skip-unserved: the target serves no version of ${listed}; ${request.dryRun ? 'these would be' : 'these were'} left out and not written`];
  return [`the target serves no version of ${listed}: a restore refuses this backup and writes nothing, unless skip-unserved is set (which leaves these out)`];
}
