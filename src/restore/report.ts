// What a restore did (or, on dry-run, would do): counts per kind and a plan per namespace and kind with reasons.
export type Verdict = 'create' | 'update' | 'unchanged' | 'skip' | 'fail';

export interface KindTally {
  created: number;
  updated: number;
  unchanged: number;
  skipped: number;
  failed: number;
}

export interface PlanEntry {
  /** '' for Profiles (cluster scope) */
  namespace: string;
  kind: string;
  create: number;
  update: number;
  unchanged: number;
  skip: number;
  fail: number;
  /** distinct reasons for update/skip/fail, at most a few per entry */
  reasons: string[];
}

const tallyField: Record<Verdict, keyof KindTally> = { create: 'created', update: 'updated', unchanged: 'unchanged', skip: 'skipped', fail: 'failed' };
const MAX_REASONS = 5;
const MAX_FAILURES = 50;

export const emptyTally = (): KindTally => ({ created: 0, updated: 0, unchanged: 0, skipped: 0, failed: 0 });

export class RestoreReport {
  readonly byKind: Record<string, KindTally> = {};
  private readonly plan = new Map<string, PlanEntry>();
  readonly failures: string[] = [];
  done = 0;

  record(key: string, kind: string, namespace: string, verdict: Verdict, reason?: string): void {
    const tally = (this.byKind[key] ??= emptyTally());
    tally[tallyField[verdict]]++;
    this.done++;
    const planKey = `${namespace}\u0000${kind}`;
    let entry = this.plan.get(planKey);
    if (!entry) {
      entry = { namespace, kind, create: 0, update: 0, unchanged: 0, skip: 0, fail: 0, reasons: [] };
      this.plan.set(planKey, entry);
    }
    entry[verdict]++;
    if (reason && entry.reasons.length < MAX_REASONS && !entry.reasons.includes(reason)) entry.reasons.push(reason);
    if (verdict === 'fail' && reason && this.failures.length < MAX_FAILURES) this.failures.push(reason);
  }

  totals(): KindTally {
    const total = emptyTally();
    for (const tally of Object.values(this.byKind)) for (const field of Object.keys(total) as Array<keyof KindTally>) total[field] += tally[field];
    return total;
  }

  planEntries(): PlanEntry[] {
    return [...this.plan.values()].sort((a, b) => a.namespace.localeCompare(b.namespace) || a.kind.localeCompare(b.kind));
  }
}
