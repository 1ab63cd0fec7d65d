// Objects an admission webhook must admit, written while the API server cannot call it: in a fresh cluster Katib's,
// KServe's and the training operator's webhooks answer only once their operator's Pod is Ready, and until then the
// server refuses every matching write with a 500 "Internal error occurred: failed calling webhook "<name>": …"
// (failurePolicy Fail, kubernetes staging/src/k8s.io/apiserver/pkg/admission/plugin/webhook/validating|mutating/
// dispatcher.go). The server did not act on such a write, so it can be sent again.
// Velero treats such a create like any failed item (vmware-tanzu/velero pkg/restore/restore.go restoreItem: one
// error per object, the restore PartiallyFailed), but waits, bounded by its resource timeout, for what a fresh
// cluster is still setting up (crdAvailable polls a CRD until it is established). A webhook that cannot be called
// is of the second kind, so the restore waits for it: the objects of one webhook wait together, retried in rounds that
// grow from one to ten seconds, and the progress line says which webhook and how many objects. The restore's wait
// timeout bounds the time during which anything waits for a webhook, over the whole run: the kinds each webhook admits
// come in different steps, so waits for several webhooks would otherwise add up. When the wait ends, the objects still waiting, and any that meet the same webhook later, fail
// with one short sentence each, and one warning per webhook names them all and says that a rerun converges (it
// creates what is missing and leaves what was restored). A dry run does not wait: it reports at once.
import { unreachableWebhook } from '../kube/errors.ts';
import { listOf } from './errors.ts';
import { neutralWording, type Wording } from '../errors/remedy.ts';

/** the write of `object` failed because `webhook` could not be called, and the wait for it is over (or, dry: not begun) */
export class WebhookUnreachableError extends Error {
  constructor(readonly webhook: string, readonly object: string, dry = false) {
    super(dry
      ? `${object}: not checked, because the API server could not call admission webhook "${webhook}" (see the warning)`
      : `${object}: not restored, because the API server could not call admission webhook "${webhook}" (see the warning)`);
    this.name = 'WebhookUnreachableError';
  }
}

interface WebhookState {
  /** when the current wait began (undefined: the webhook answered since) */
  since: number | undefined;
  /** the server's words after "failed calling webhook …: ", from the first failure */
  why: string;
  /** objects waiting for the next round */
  waiting: Set<string>;
  /** objects given up on */
  stranded: Set<string>;
  gaveUp: boolean;
  round: { promise: Promise<boolean>; resolve: (retry: boolean) => void } | undefined;
  timer: NodeJS.Timeout | undefined;
  nextDelayMs: number;
}

const FIRST_ROUND_MS = 1000;
const LONGEST_ROUND_MS = 10_000;

export class WebhookWait {
  private readonly webhooks = new Map<string, WebhookState>();
  /** wall time during which at least one object waited for a webhook */
  waitedMs = 0;
  private waitingSince: number | undefined;

  constructor(
    /** 0 for a dry run, which does not wait */
    private readonly timeoutMs: number,
    private readonly say: (message: string) => void | Promise<void>,
    private readonly wording: Wording = neutralWording,
    /**
     * told when an object starts (true) and stops (false) waiting: the engine lends the waiting object's slot to the
     * others meanwhile, so that objects no webhook holds up go on at full pace
     */
    private readonly waiting: (waiting: boolean) => void = () => undefined,
    private readonly dry = false,
  ) {}

  /**
   * runs `write`; while it fails because a webhook cannot be called, waits for the webhook's next round and runs it
   * again. Throws WebhookUnreachableError once the wait is over, and any other error of the write as it is.
   */
  async write<T>(object: string, write: () => Promise<T>): Promise<T> {
    let waitedFor: string | undefined;
    for (;;) {
      let result: T;
      try {
        result = await write();
      } catch (error) {
        const webhook = unreachableWebhook(error);
        if (webhook === undefined) throw error;
        waitedFor = webhook.name;
        if (!(await this.nextRound(webhook.name, webhook.why, object))) throw new WebhookUnreachableError(webhook.name, object, this.dry);
        continue;
      }
      if (waitedFor !== undefined) this.passed(waitedFor);
      return result;
    }
  }

  /** one warning per webhook whose wait ended with objects not restored */
  finish(): string[] {
    const warnings: string[] = [];
    for (const [name, state] of [...this.webhooks].sort(([a], [b]) => a.localeCompare(b))) {
      if (state.timer) clearTimeout(state.timer);
      state.round?.resolve(false);
      if (state.stranded.size === 0) continue;
      const objects = [...state.stranded].sort();
      if (this.dry) {
        warnings.push(`admission webhook "${name}" could not be called (a dry run does not wait): ${state.why}. ${objects.length} object(s) it must admit were not checked: ${listOf(objects, 10)}. Its operator is likely still starting; ${this.wording.term({ term: 'restore' })} waits for it, for at most the wait timeout.`);
        continue;
      }
      const waited = ` within ${this.wording.term({ term: 'wait-timeout', seconds: Math.round(this.timeoutMs / 1000) })}`;
      const rerun = `run ${this.wording.term({ term: 'restore' })} again: it creates these and leaves what was restored as it is`;
      warnings.push(`admission webhook "${name}" could not be called${waited}: ${state.why}. ${objects.length} object(s) it must admit were not restored: ${listOf(objects, 10)}. Its operator is likely still starting; once its Pod is Ready, ${rerun} (or ${this.wording.remedy({ fix: 'raise-wait-timeout' })}).`);
    }
    return warnings;
  }

  /** true: retry now; false: the wait for this webhook is over */
  private async nextRound(name: string, why: string, object: string): Promise<boolean> {
    let state = this.webhooks.get(name);
    if (!state) {
      state = { since: undefined, why, waiting: new Set(), stranded: new Set(), gaveUp: false, round: undefined, timer: undefined, nextDelayMs: FIRST_ROUND_MS };
      this.webhooks.set(name, state);
    }
    if (state.gaveUp || this.spentMs() >= this.timeoutMs) {
      state.gaveUp = true;
      state.stranded.add(object);
      return false;
    }
    if (state.since === undefined) {
      state.since = Date.now();
      state.nextDelayMs = FIRST_ROUND_MS;
      void this.say(`admission webhook "${name}" cannot be called yet (${why}): waiting for it (${Math.round((this.timeoutMs - this.spentMs()) / 1000)} s left of the ${Math.round(this.timeoutMs / 1000)} s the restore waits for webhooks), its objects retried meanwhile`);
    }
    state.waiting.add(object);
    this.waitingSince ??= Date.now();
    if (!state.round) {
      let resolve!: (retry: boolean) => void;
      const promise = new Promise<boolean>((r) => { resolve = r; });
      state.round = { promise, resolve };
      this.schedule(name, state);
    }
    this.waiting(true);
    const retry = await state.round.promise.finally(() => this.waiting(false));
    state.waiting.delete(object);
    if (!retry) state.stranded.add(object);
    this.noteIdle();
    return retry;
  }

  private schedule(name: string, state: WebhookState): void {
    const left = this.timeoutMs - this.spentMs();
    const delay = Math.max(0, Math.min(state.nextDelayMs, left));
    state.nextDelayMs = Math.min(state.nextDelayMs * 2, LONGEST_ROUND_MS);
    state.timer = setTimeout(() => {
      state.timer = undefined;
      const round = state.round!;
      state.round = undefined;
      const over = this.spentMs() >= this.timeoutMs;
      if (over) state.gaveUp = true;
      else void this.say(`waiting for admission webhook "${name}": ${state.waiting.size} object(s) wait on it, ${Math.round((Date.now() - state.since!) / 1000)} s so far (${Math.round(this.spentMs() / 1000)} s of at most ${Math.round(this.timeoutMs / 1000)} s for all webhooks)`);
      round.resolve(!over);
    }, delay);
    state.timer.unref?.();
  }

  /** a write that passed the webhook ends its wait: a later failure starts a new one */
  private passed(name: string): void {
    const state = this.webhooks.get(name);
    if (state && state.waiting.size === 0 && !state.gaveUp) state.since = undefined;
  }

  /** wall time during which something waited for a webhook, the current wait included */
  private spentMs(): number {
    return this.waitedMs + (this.waitingSince === undefined ? 0 : Date.now() - this.waitingSince);
  }

  private noteIdle(): void {
    const anyWaiting = [...this.webhooks.values()].some((s) => s.waiting.size > 0);
    if (!anyWaiting && this.waitingSince !== undefined) {
      this.waitedMs += Date.now() - this.waitingSince;
      this.waitingSince = undefined;
    }
  }
}
