// Requests sent per verb, retries included: how tests prove that a rerun wrote nothing. Beside the verbs, the same
// requests by purpose (a status patch is a PATCH, discovery is a GET), so a bench can say where a run's requests go.

export const verbs = ['get', 'list', 'watch', 'create', 'update', 'patch', 'delete'] as const;
export type Verb = (typeof verbs)[number];
const writeVerbs: ReadonlySet<Verb> = new Set(['create', 'update', 'patch', 'delete']);

export type RequestCounts = Record<Verb, number>;

/**
 * What a request was for: `status` writes the status subresource, `patch` is any other patch (a restore's resume of
 * a suspended job, a Profile nudge), `discovery` reads /api and /apis, `dryRun` is any dryRun=All write.
 */
export const purposes = ['create', 'status', 'patch', 'update', 'delete', 'get', 'list', 'watch', 'discovery', 'dryRun'] as const;
export type Purpose = (typeof purposes)[number];
export type PurposeCounts = Record<Purpose, number>;

export class RequestCounter {
  private readonly counts: RequestCounts = { get: 0, list: 0, watch: 0, create: 0, update: 0, patch: 0, delete: 0 };
  private readonly byPurpose = Object.fromEntries(purposes.map((p) => [p, 0])) as PurposeCounts;
  /** dry-run writes change nothing, so they are counted apart */
  private dryRuns = 0;

  record(verb: Verb, dryRun = false, purpose?: Purpose): void {
    if (dryRun) this.dryRuns++;
    else this.counts[verb]++;
    this.byPurpose[dryRun ? 'dryRun' : (purpose ?? verb)]++;
  }

  snapshot(): RequestCounts & { writes: number; dryRuns: number } {
    return { ...this.counts, writes: this.writes(), dryRuns: this.dryRuns };
  }

  /** requests per purpose, retries included */
  purposes(): PurposeCounts {
    return { ...this.byPurpose };
  }

  writes(): number {
    let total = 0;
    for (const verb of writeVerbs) total += this.counts[verb];
    return total;
  }
}
