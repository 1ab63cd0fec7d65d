// The restore's wait for the PodDefaults that controllers make late (src/kubeflow/late-pod-defaults.ts): before the
// first workload of a namespace, each PodDefault the backup saw there must exist. One watch over PodDefaults serves
// every namespace (a restore of 1000 namespaces does not poll 1000 times), and one deadline, `restore-wait-timeout`
// after the first namespace starts waiting, serves the whole restore: a controller that is down costs one timeout,
// not one per namespace. What never came is named in a warning; the restore goes on.
import { neutralWording, type Wording } from '../errors/remedy.ts';
import type { RestoreKube } from './kube-port.ts';
import type { ApiResource } from '../kube/types.ts';
import { listOf } from './errors.ts';
import { describe } from '../errors/index.ts';

export class PodDefaultWait {
  /** namespace → names still awaited there */
  private readonly awaited = new Map<string, Set<string>>();
  /** namespace → the callers waiting for it */
  private readonly waiters = new Map<string, Array<() => void>>();
  /** namespace → PodDefaults that did not come */
  private readonly missing = new Map<string, string[]>();
  private stopWatch: (() => void) | undefined;
  /** milliseconds namespaces spent waiting here, summed over namespaces (what a bench reports) */
  waitedMs = 0;
  /** how many waits were not over at once */
  waits = 0;
  private deadline: NodeJS.Timeout | undefined;
  private expired = false;
  private watchProblem: string | undefined;

  constructor(
    private readonly kube: RestoreKube,
    private readonly resource: ApiResource | undefined,
    expected: ReadonlyMap<string, readonly string[]>,
    private readonly timeoutMs: number,
    private readonly wording: Wording = neutralWording,
  ) {
    for (const [namespace, names] of expected) if (names.length) this.awaited.set(namespace, new Set(names));
  }

  /**
   * true when the namespace's workloads may go on now: its PodDefaults exist, none is awaited there, or the wait is
   * over (what is missing is then recorded for the warning)
   */
  isReady(namespace: string): boolean {
    if (!this.awaited.has(namespace)) return true;
    if (!this.expired) return false;
    this.recordMissing(namespace);
    return true;
  }

  /** resolves once the namespace's PodDefaults exist, or the deadline passed; never rejects */
  forNamespace(namespace: string): Promise<void> {
    if (this.isReady(namespace)) return Promise.resolve();
    this.start();
    this.waits++;
    const since = performance.now();
    return new Promise((done) => {
      const resolve = () => {
        this.waitedMs += performance.now() - since;
        done();
      };
      const list = this.waiters.get(namespace) ?? [];
      list.push(resolve);
      this.waiters.set(namespace, list);
      // the watch may have given up while this one was being registered
      if (this.expired) {
        this.recordMissing(namespace);
        this.release(namespace);
      }
    });
  }

  /** one sentence naming what never came, or undefined; stops the watch */
  finish(): string | undefined {
    this.stop();
    if (this.missing.size === 0) return undefined;
    const named = [...this.missing].sort(([a], [b]) => a.localeCompare(b)).flatMap(([ns, names]) => names.map((n) => `${ns}/${n}`));
    const why = !this.resource
      ? 'cannot appear: the target does not serve poddefaults.kubeflow.org'
      : this.watchProblem
        ? `could not be watched for (${this.watchProblem})`
        : `did not appear within ${this.wording.term({ term: 'wait-timeout', seconds: Math.round(this.timeoutMs / 1000) })}`;
    return `${named.length} PodDefault(s) that controllers made on the source ${why}: ${listOf(named, 10)}. Workloads in those namespaces were restored without them, and a PodDefault changes only Pods created after it: restart those workloads once the PodDefaults exist (is the KFP profile controller or the resource-dispatcher running?).`;
  }

  private start(): void {
    if (this.stopWatch || this.expired) return;
    this.deadline = setTimeout(() => this.giveUp(), this.timeoutMs);
    this.deadline.unref();
    if (!this.resource) {
      this.giveUp();
      return;
    }
    this.stopWatch = this.kube.watch(this.resource, {
      onError: (error) => {
        this.watchProblem = describe(error);
        this.stopWatch = undefined;
        this.giveUp();
      },
    }, (event) => {
      if (event.type === 'DELETED') return;
      const namespace = event.object.metadata.namespace ?? '';
      const names = this.awaited.get(namespace);
      if (!names?.delete(event.object.metadata.name ?? '')) return;
      if (names.size === 0) {
        this.awaited.delete(namespace);
        this.release(namespace);
      }
    });
  }

  /**
   * The deadline passed (or nothing can be watched): every waiter goes on, its missing PodDefaults recorded. The watch
   * keeps running (unless it failed), so that a namespace that comes to its workloads later is judged on what exists.
   */
  private giveUp(): void {
    if (this.expired) return;
    this.expired = true;
    for (const namespace of [...this.waiters.keys()]) {
      this.recordMissing(namespace);
      this.release(namespace);
    }
  }

  private recordMissing(namespace: string): void {
    const names = this.awaited.get(namespace);
    if (names?.size) this.missing.set(namespace, [...names].sort());
  }

  private release(namespace: string): void {
    const list = this.waiters.get(namespace);
    this.waiters.delete(namespace);
    for (const resolve of list ?? []) resolve();
  }

  private stop(): void {
    this.stopWatch?.();
    this.stopWatch = undefined;
    if (this.deadline) clearTimeout(this.deadline);
  }
}
