// The namespaces a restore just made (their Profile was created by this run), taken in batches of those ready at once:
// a batch goes step by step, each step's objects of every namespace of the batch together, and two batches run at
// once so that one's step boundary never leaves the slots idle. There is nothing to compare with yet, so objects are
// created directly; one that exists after all (a namespace made before with the right owner, or a controller faster
// than us) answers 409 and is then read and judged like any existing object (writer.ts).
// A batch rather than one namespace at a time: the same objects cost the cluster's controllers less when each kind
// comes in a run than when the kinds alternate namespace after namespace (docs/performance.md).
import type { Channel } from './channel.ts';
import { spoolKey, type SpooledStep } from './preflight.ts';
import type { SpooledItem } from './spool.ts';
import type { Verdict } from './report.ts';
import type { RestorePlan } from './planner.ts';
import type { PodDefaultWait } from './pod-default-wait.ts';
import { restoreActivity } from './activity.ts';

export interface BatchOptions {
  plan: RestorePlan;
  podDefaults: PodDefaultWait | undefined;
  batchSize: number;
  /** whether the restore stopped (its first failure), checked before more work starts */
  stopped: () => boolean;
  stop: (error: unknown) => void;
  /** one object written, in the run's slots */
  apply: (step: SpooledStep, item: SpooledItem) => Promise<Verdict>;
  /** told of each object created */
  created: (step: SpooledStep, namespace: string, item: SpooledItem) => void;
  /** told of each namespace through its last step */
  done: (namespace: string) => void;
  /** after each batch: the heartbeat's line */
  status: () => void;
}

export class NamespaceBatches {
  constructor(private readonly o: BatchOptions) {}

  async run(steps: readonly SpooledStep[], namespaces: Channel<string>): Promise<void> {
    const { o } = this;
    if (steps.length === 0) {
      for await (const namespace of namespaces) o.done(namespace);
      return;
    }
    const inFlight = new Set<Promise<void>>();
    // namespaces whose workloads wait for their late PodDefaults, parked outside the batches so others go on meanwhile
    const parked = new Set<Promise<void>>();
    const park = (namespace: string, rest: readonly SpooledStep[]) => {
      restoreActivity.namespacesParked++;
      const task = o.podDefaults!.forNamespace(namespace)
        .then(() => {
          restoreActivity.namespacesParked--;
          // its PodDefaults are there now (or the wait is over), so it is not parked again
          return this.batch([namespace], rest, park);
        })
        .catch((error: unknown) => { o.stop(error); })
        .finally(() => { parked.delete(task); });
      parked.add(task);
    };
    for (;;) {
      if (o.stopped()) break;
      const batch = await namespaces.take(o.batchSize);
      if (batch.length === 0) break;
      restoreActivity.phase = 'writes';
      const task = this.batch(batch, steps, park)
        .catch((error: unknown) => { o.stop(error); })
        .finally(() => { inFlight.delete(task); });
      inFlight.add(task);
      if (inFlight.size >= 2) await Promise.race(inFlight);
    }
    await Promise.all(inFlight);
    while (parked.size > 0) await Promise.all([...parked]);
  }

  /**
   * A batch of namespaces step by step. At a workload step, a namespace whose late PodDefaults do not exist yet is
   * handed to `park` with the steps left, and the batch goes on without it.
   */
  private async batch(batch: readonly string[], steps: readonly SpooledStep[], park: (namespace: string, rest: readonly SpooledStep[]) => void): Promise<void> {
    const { o } = this;
    let active = [...batch];
    restoreActivity.namespacesInPipeline += active.length;
    try {
      for (const [index, step] of steps.entries()) {
        if (o.stopped()) return;
        if (o.podDefaults && o.plan.isWorkload(step)) {
          const ready: string[] = [];
          for (const namespace of active) {
            if (o.podDefaults.isReady(namespace)) ready.push(namespace);
            else park(namespace, steps.slice(index));
          }
          restoreActivity.namespacesInPipeline -= active.length - ready.length;
          active = ready;
        }
        const work: Array<{ namespace: string; item: SpooledItem }> = [];
        const inOrder = new Set<string>();
        for (const namespace of active) {
          const items = o.plan.preflight.spool.readNamespace(spoolKey(step), namespace);
          for (const item of items) work.push({ namespace, item });
          if (o.plan.inOrder(namespace, step, items)) inOrder.add(namespace);
        }
        // a namespace whose quota these objects overflow takes them one after another, in restore order, so that
        // what the quota refuses is what the dry run predicted; the others in parallel
        const chains = new Map<string, Promise<unknown>>();
        const results = await Promise.allSettled(work.map(({ namespace, item }) => {
          const apply = () => o.apply(step, item);
          if (!inOrder.has(namespace)) return apply();
          const next = (chains.get(namespace) ?? Promise.resolve()).then(apply, apply);
          chains.set(namespace, next);
          return next;
        }));
        for (const [i, result] of results.entries()) {
          if (result.status === 'rejected') throw result.reason;
          if (result.value === 'create') o.created(step, work[i]!.namespace, work[i]!.item);
        }
      }
      for (const namespace of active) o.done(namespace);
      o.status();
    } finally {
      restoreActivity.namespacesInPipeline -= active.length;
    }
  }
}
