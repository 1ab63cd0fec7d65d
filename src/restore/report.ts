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

/** a verdict's place among the five counts a kind has in a namespace's row of the plan */
const verdictIndex: Record<Verdict, number> = { create: 0, update: 1, unchanged: 2, skip: 3, fail: 4 };
const VERDICTS = 5;

export class RestoreReport {
  readonly byKind: Record<string, KindTally> = {};
  /**
   * The plan as counts: per namespace one row of five numbers per kind (the kinds in the order first met). An object
   * per namespace and kind, with its key and its reasons list, was the largest thing a restore of thousands of
   * namespaces held while it wrote (docs/performance.md); the entries are made when the plan is asked for.
   */
  private readonly rows = new Map<string, number[]>();
  private readonly kinds: string[] = [];
  private readonly kindColumns = new Map<string, number>();
  /** `<namespace>\u0000<kind>` → its distinct reasons, for the few entries that have any */
  private readonly reasons = new Map<string, string[]>();
  readonly failures: string[] = [];
  done = 0;

  record(key: string, kind: string, namespace: string, verdict: Verdict, reason?: string): void {
    const tally = (this.byKind[key] ??= emptyTally());
    tally[tallyField[verdict]]++;
    this.done++;
    let column = this.kindColumns.get(kind);
    if (column === undefined) {
      column = this.kinds.length;
      this.kindColumns.set(kind, column);
      this.kinds.push(kind);
    }
    let row = this.rows.get(namespace);
    if (!row) this.rows.set(namespace, (row = new Array<number>(this.kinds.length * VERDICTS).fill(0)));
    while (row.length < (column + 1) * VERDICTS) row.push(0);
    row[column * VERDICTS + verdictIndex[verdict]]!++;
    if (reason) {
      const entryKey = `${namespace}\u0000${kind}`;
      let list = this.reasons.get(entryKey);
      if (!list) this.reasons.set(entryKey, (list = []));
      if (list.length < MAX_REASONS && !list.includes(reason)) list.push(reason);
    }
    if (verdict === 'fail' && reason && this.failures.length < MAX_FAILURES) this.failures.push(reason);
  }

  totals(): KindTally {
    const total = emptyTally();
    for (const tally of Object.values(this.byKind)) for (const field of Object.keys(total) as Array<keyof KindTally>) total[field] += tally[field];
    return total;
  }

  planEntries(): PlanEntry[] {
    const entries: PlanEntry[] = [];
    for (const [namespace, row] of this.rows) {
      for (let column = 0; column * VERDICTS < row.length; column++) {
        const at = column * VERDICTS;
        const [create, update, unchanged, skip, fail] = [row[at]!, row[at + 1]!, row[at + 2]!, row[at + 3]!, row[at + 4]!];
        if (create + update + unchanged + skip + fail === 0) continue;
        const kind = this.kinds[column]!;
        entries.push({ namespace, kind, create, update, unchanged, skip, fail, reasons: this.reasons.get(`${namespace}\u0000${kind}`) ?? [] });
      }
    }
    return entries.sort((a, b) => a.namespace.localeCompare(b.namespace) || a.kind.localeCompare(b.kind));
  }
}
