// The scheduler: when each namespace's objects are written. Profiles first; each namespace whose Profile this run
// created starts its steps as soon as the profile controller has made it; namespaces whose Profile existed go step by
// step, compared against one LIST per kind. Namespaces do not wait for each other and many run at once, bounded by
// the client's concurrency (global step barriers across 1000 namespaces left the client idle at every step's tail).
// When volumes are filled, every namespace stops after its PVCs (the planner's two phases), the fill runs, and the
// rest goes on. Each namespace is counted once, whatever the phases: the closing line names namespaces, not passes.
import type { LimitFunction } from 'p-limit';
import type { ApiResource, KubeObject } from '../kube/types.ts';
import type { Wording } from '../errors/remedy.ts';
import type { RestoreKube } from './kube-port.ts';
import { spoolKey, type SpooledStep } from './preflight.ts';
import type { SpooledItem } from './spool.ts';
import type { Verdict } from './report.ts';
import type { RestorePlan } from './planner.ts';
import type { RestoreWriter } from './writer.ts';
import type { PodDefaultWait } from './pod-default-wait.ts';
import { FIELD_MANAGER } from './writer.ts';
import { Channel } from './channel.ts';
import { NamespaceBatches } from './batches.ts';
import { isPvcStep, type PvcName } from './volume-fill.ts';
import { nudgeProfiles } from './nudge.ts';
import { watchProfileNamespaces } from './wait.ts';
import { restoreActivity } from './activity.ts';
import { RestoreStoppedError, listOf } from './errors.ts';
import { writes, type WriteMode } from './mode.ts';

const NO_LIVE_OBJECTS: ReadonlyMap<string, KubeObject> = new Map();

export interface SchedulerOptions {
  kube: RestoreKube;
  plan: RestorePlan;
  writer: Pick<RestoreWriter, 'applyOne' | 'report'>;
  mode: WriteMode;
  /** the run's slots: objects being applied at once, across every namespace and step */
  slots: LimitFunction;
  /** how many objects wait for a slot at most; also sizes the batches of fresh namespaces */
  limit: number;
  /** set in a real run: the wait for late PodDefaults before each namespace's first workload */
  podDefaults: PodDefaultWait | undefined;
  /** fills the PVCs this run created (or an earlier one left unfilled) between the two phases */
  fill: (created: PvcName[]) => Promise<void>;
  say: (message: string) => void | Promise<void>;
  /** the heartbeat's line, updated often without sending anything */
  status: (message: string) => void;
  waitTimeoutMs: number;
  wording: Wording | undefined;
}

export class NamespaceScheduler {
  /** each namespace once, when it went through its last step: a set, since a volume fill splits the steps in two */
  readonly namespacesDone = new Set<string>();
  profileNamespacesMs = 0;
  /** the first error that stops the restore; every loop checks it before starting more work */
  failure: unknown;
  private readonly newPvcs: PvcName[] = [];

  constructor(private readonly o: SchedulerOptions) {}

  /** the closing line: objects written, and the namespaces they were written in, each once */
  summary(): string {
    return `restored ${this.o.writer.report.done} objects in ${this.namespacesDone.size} namespace(s)`;
  }

  /** marks a namespace done: the count and the activity counter read the same set */
  done(namespace: string): void {
    this.namespacesDone.add(namespace);
    restoreActivity.namespacesDone = this.namespacesDone.size;
  }

  async run(): Promise<void> {
    const { plan, mode } = this.o;
    const { preflight } = plan;
    if (!writes(mode) || preflight.profiles.length === 0) {
      // A plan, or the pass conflict-policy=fail makes first: nothing is written, so everything is compared.
      if (preflight.profiles.length > 0) {
        const profiles = preflight.profileResource!;
        await this.applyAll('profiles.kubeflow.org', profiles, plan.profileItems(), await this.liveObjects(profiles, undefined));
      }
      await this.stepwise(preflight.steps, preflight.namespaces);
      await this.o.fill(this.newPvcs);
      return;
    }
    const { fresh, existing, timedOut } = await this.profilesAndEarlySteps(plan.early);
    await this.o.fill(this.newPvcs);
    if (plan.late.length > 0) await this.everyNamespace(plan.late, fresh, existing);
    await this.o.say(this.summary());
    if (timedOut) throw new RestoreStoppedError(timedOut);
  }

  /**
   * Phase 1 and the start of phase 2, overlapped. The namespace watch starts first; Profiles are written
   * concurrently; each namespace whose Profile this run created starts its own steps as soon as the profile
   * controller has made it, while other Profiles are still being written or awaited. Namespaces whose Profile
   * already existed (a rollback, a rerun) go step by step, compared against one LIST per kind, once they are ready.
   */
  private async profilesAndEarlySteps(steps: readonly SpooledStep[]): Promise<{ fresh: string[]; existing: Set<string>; timedOut: string | undefined }> {
    const { kube, plan } = this.o;
    const { preflight } = plan;
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
    const watch = await watchProfileNamespaces(kube, preflight.profiles, {
      progress: (m) => this.o.say(m),
      onReady: (name) => { ready.add(name); restoreActivity.namespacesReady++; offer(name); },
    });
    const pipeline = this.batches().run(steps, queue);
    // judged below with allSettled; a handler now keeps an early failure from counting as unhandled meanwhile
    pipeline.catch(() => undefined);
    let timedOut: string | undefined;
    const existing = new Set<string>();
    try {
      const profiles = preflight.profileResource!;
      const liveProfiles = await this.liveObjects(profiles, undefined);
      await this.applyAll('profiles.kubeflow.org', profiles, plan.profileItems(), liveProfiles, (item, verdict) => {
        const name = item.object.metadata.name!;
        created.set(name, verdict === 'create');
        offer(name);
      });
      // A Profile this run did not create is not written again when it is unchanged: if its namespace is missing or
      // not its own (the conflict of an earlier run, fixed since), the controller must be told to look again.
      const kept = preflight.profiles.filter((p) => created.get(p.metadata.name!) !== true)
        .map((p) => liveProfiles.get(`/${p.metadata.name}`)).filter((p): p is KubeObject => p !== undefined);
      const nudged = await nudgeProfiles(kube, profiles, kept, { fieldManager: FIELD_MANAGER });
      if (nudged.length > 0) {
        await this.o.say(`asked the profile controller to reconcile ${nudged.length} existing Profile(s) whose namespace is missing or not theirs: ${listOf(nudged, 10)}`);
      }
      await this.o.say(`${preflight.profiles.length} Profile(s) applied; waiting for the profile controller to make their namespaces (${ready.size} ready so far)`);
      const waitStarted = performance.now();
      timedOut = await watch.settle(this.o.waitTimeoutMs, this.o.wording);
      this.profileNamespacesMs = performance.now() - waitStarted;
      for (const name of ready) if (created.get(name) !== true) existing.add(name);
    } catch (error) {
      this.failure ??= error;
      watch.stop();
    } finally {
      queue.close();
    }
    // A Profile that existed means its namespace may hold the backup's objects already: those are compared first.
    await this.settle([pipeline, this.failure ? Promise.resolve() : this.stepwise(steps, existing)]);
    return { fresh, existing, timedOut };
  }

  /** phase 2 after the fill: the namespaces this run made, in batches, and the others step by step */
  private async everyNamespace(steps: readonly SpooledStep[], fresh: readonly string[], existing: ReadonlySet<string>): Promise<void> {
    const queue = new Channel<string>();
    for (const name of fresh) queue.push(name);
    queue.close();
    await this.settle([this.batches().run(steps, queue), this.stepwise(steps, existing)]);
  }

  private async settle(tasks: Array<Promise<void>>): Promise<void> {
    const results = await Promise.allSettled(tasks);
    const rejected = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
    if (this.failure || rejected) throw this.failure ?? rejected!.reason;
  }

  /** the namespaces this run made, in batches (batches.ts) */
  private batches(): NamespaceBatches {
    const { plan, writer, podDefaults, slots, limit } = this.o;
    return new NamespaceBatches({
      plan, podDefaults, batchSize: limit * 2,
      stopped: () => this.failure !== undefined,
      stop: (error) => { this.failure ??= error; },
      apply: (step, item) => slots(() => writer.applyOne(step.key, step.target, item, NO_LIVE_OBJECTS)),
      created: (step, namespace, item) => { if (isPvcStep(step)) this.newPvcs.push({ namespace, name: item.object.metadata.name ?? '' }); },
      done: (namespace) => this.done(namespace),
      status: () => this.o.status(`restored ${writer.report.done} objects; ${this.namespacesDone.size} namespace(s) done`),
    });
  }

  /** Step by step over `namespaces`, each step compared against one cluster-wide LIST (one kind in memory at a time). */
  private async stepwise(steps: readonly SpooledStep[], namespaces: ReadonlySet<string>): Promise<void> {
    if (namespaces.size === 0) return;
    const { plan, podDefaults, slots } = this.o;
    for (const step of steps) {
      if (this.failure) return;
      if (plan.isWorkload(step) && podDefaults) {
        await Promise.all([...namespaces].map((namespace) => slots(() => podDefaults.forNamespace(namespace))));
      }
      const existing = await this.liveObjects(step.target, namespaces);
      const created = await this.applyAll(step.key, step.target, plan.preflight.spool.read(spoolKey(step), namespaces), existing);
      if (isPvcStep(step)) this.newPvcs.push(...created);
      await this.o.say(`${writes(this.o.mode) ? 'restored' : 'planned'} ${this.o.writer.report.done} objects; ${step.key} done in ${namespaces.size} namespace(s)`);
    }
    for (const namespace of namespaces) this.done(namespace);
  }

  /** what the target holds of one resource, keyed `namespace/name`, in the namespaces restored */
  private async liveObjects(resource: ApiResource, namespaces: ReadonlySet<string> | undefined): Promise<Map<string, KubeObject>> {
    const { kube } = this.o;
    const live = new Map<string, KubeObject>();
    const keep = (o: KubeObject) => {
      if (!namespaces || namespaces.has(o.metadata.namespace ?? '')) live.set(`${o.metadata.namespace ?? ''}/${o.metadata.name}`, o);
    };
    // A few namespaces are cheaper one by one; many are cheaper as one cluster-wide list.
    if (namespaces && namespaces.size <= 3) {
      for (const namespace of namespaces) for (const o of (await kube.listAll(resource, { namespace })).items) keep(o);
    } else {
      for (const o of (await kube.listAll(resource)).items) keep(o);
    }
    return live;
  }

  /** applies items, sharing the run's slots; returns the ones created */
  private async applyAll(
    key: string, resource: ApiResource, items: Iterable<SpooledItem> | AsyncIterable<SpooledItem>, live: ReadonlyMap<string, KubeObject>,
    onVerdict?: (item: SpooledItem, verdict: Verdict) => void,
  ): Promise<PvcName[]> {
    const { slots, writer, limit } = this.o;
    const created: PvcName[] = [];
    const inFlight = new Set<Promise<void>>();
    for await (const item of items) {
      if (this.failure) break;
      const task = slots(() => writer.applyOne(key, resource, item, live))
        .then((verdict) => {
          if (verdict === 'create') created.push({ namespace: item.object.metadata.namespace ?? '', name: item.object.metadata.name ?? '' });
          onVerdict?.(item, verdict);
        })
        .catch((error: unknown) => { this.failure ??= error; })
        .finally(() => { inFlight.delete(task); });
      inFlight.add(task);
      // the slots bound the requests; this bounds how many items wait for one
      if (inFlight.size >= limit) await Promise.race(inFlight);
    }
    await Promise.all(inFlight);
    if (this.failure) throw this.failure;
    return created;
  }
}
