// Requests sent per verb, retries included: how tests prove that a rerun wrote nothing.

export const verbs = ['get', 'list', 'watch', 'create', 'update', 'patch', 'delete'] as const;
export type Verb = (typeof verbs)[number];
const writeVerbs: ReadonlySet<Verb> = new Set(['create', 'update', 'patch', 'delete']);

export type RequestCounts = Record<Verb, number>;

export class RequestCounter {
  private readonly counts: RequestCounts = { get: 0, list: 0, watch: 0, create: 0, update: 0, patch: 0, delete: 0 };
  /** dry-run writes change nothing, so they are counted apart */
  private dryRuns = 0;

  record(verb: Verb, dryRun = false): void {
    if (dryRun) this.dryRuns++;
    else this.counts[verb]++;
  }

  snapshot(): RequestCounts & { writes: number; dryRuns: number } {
    return { ...this.counts, writes: this.writes(), dryRuns: this.dryRuns };
  }

  writes(): number {
    let total = 0;
    for (const verb of writeVerbs) total += this.counts[verb];
    return total;
  }
}
