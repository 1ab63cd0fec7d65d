// The restore's wait for the PodDefaults that controllers make late (src/kubeflow/late-pod-defaults.ts): before the
// first workload of a namespace, each PodDefault the backup saw there is read until it exists. One deadline,
// `restore-wait-timeout` after the first namespace starts waiting, serves the whole restore: a controller that is
// down costs one timeout, not one per namespace. What never came is named in a warning; the restore goes on.
import type { KubeClient } from '../kube/client.ts';
import type { ApiResource } from '../kube/types.ts';
import { listOf } from './errors.ts';

const firstPollMs = 100;
const maxPollMs = 2000;

export class PodDefaultWait {
  private deadline: number | undefined;
  /** namespace → PodDefaults that did not come */
  private readonly missing = new Map<string, string[]>();
  private readonly done = new Set<string>();

  constructor(
    private readonly kube: KubeClient,
    private readonly resource: ApiResource | undefined,
    private readonly expected: ReadonlyMap<string, readonly string[]>,
    private readonly timeoutMs: number,
    private readonly sleep: (ms: number) => Promise<void> = (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
  ) {}

  /** resolves once the namespace's PodDefaults exist, or the deadline passed; never throws for a missing one */
  async forNamespace(namespace: string): Promise<void> {
    if (this.done.has(namespace)) return;
    this.done.add(namespace);
    let waiting = [...(this.expected.get(namespace) ?? [])];
    if (waiting.length === 0) return;
    if (!this.resource) {
      this.missing.set(namespace, waiting);
      return;
    }
    this.deadline ??= Date.now() + this.timeoutMs;
    for (let pause = firstPollMs; ; pause = Math.min(maxPollMs, pause * 2)) {
      const found = await Promise.all(waiting.map((name) => this.kube.tryGet(this.resource!, name, namespace)));
      waiting = waiting.filter((_, i) => found[i] === undefined);
      if (waiting.length === 0) return;
      const left = this.deadline - Date.now();
      if (left <= 0) break;
      await this.sleep(Math.min(pause, left));
    }
    this.missing.set(namespace, waiting);
  }

  /** one sentence naming what never came, or undefined */
  warning(): string | undefined {
    if (this.missing.size === 0) return undefined;
    const named = [...this.missing].sort(([a], [b]) => a.localeCompare(b)).flatMap(([ns, names]) => names.map((n) => `${ns}/${n}`));
    const why = this.resource ? `did not appear within restore-wait-timeout (${Math.round(this.timeoutMs / 1000)} s)` : 'cannot appear: the target does not serve poddefaults.kubeflow.org';
    return `${named.length} PodDefault(s) that controllers made on the source ${why}: ${listOf(named, 10)}. Workloads in those namespaces were restored without them, and a PodDefault changes only Pods created after it: restart those workloads once the PodDefaults exist (is the KFP profile controller or the resource-dispatcher running?).`;
  }
}
