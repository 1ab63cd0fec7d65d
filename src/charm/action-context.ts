// What an action's run() gets: typed params and config, S3 settings, a Kubernetes client, progress, results, failure.
import type { KubeClient } from '../kube/client.ts';
import type { S3Settings } from '../store/settings.ts';
import type { CharmConfig } from './config.ts';
import { flattenResults } from './results.ts';
import type { ActionName, ParamsOf } from './actions/params.ts';
import { KubeUnavailableError, type CharmRuntime } from './runtime.ts';
import { readS3Readiness } from './s3.ts';
import { KfuError, describeInline } from '../errors/index.ts';

/** Thrown by ctx.fail(): the action ends with this sentence through action-fail and a non-zero exit. */
export class ActionFailure extends KfuError {
  static override readonly errorId = 'ActionFailure';
  constructor(sentence: string) {
    super(sentence, { kind: 'failed' });
  }
}

export interface ActionContext<A extends ActionName = ActionName> {
  readonly action: A;
  readonly params: ParamsOf<A>;
  readonly config: CharmConfig;
  /** the unit, model and relation facts of this dispatch */
  readonly unitName: string;
  readonly modelName: string;
  /** S3 settings from s3-integrator; fails the action with one sentence when S3 is not ready. */
  s3(): Promise<S3Settings>;
  /**
   * S3 settings checked against the bucket before any Job starts: the bucket answers, in the region given. rclone in
   * the Jobs signs for the region it is given, and on a 301 switches region only when no endpoint is set
   * (rclone/rclone backend/s3/s3.go `updateRegionForBucket`: "can't set region ... as endpoint is set"); the Jobs always
   * set one. So a mismatch that the actions' SDK client would follow fails here at once, naming the region S3 named,
   * and the settings returned carry the region S3 confirmed (x-amz-bucket-region of HeadBucket).
   */
  s3ForJobs(): Promise<S3Settings>;
  /** A Kubernetes client (in-cluster, else KUBECONFIG), made on first use. */
  kube(): Promise<KubeClient>;
  /** The passphrase of the `encryption-key` secret, or undefined when it is not set. */
  encryptionKey(): Promise<string | undefined>;
  /** Streams a progress line to `juju run` (at most one a second; the newest is always delivered before the end). */
  progress(message: string): Promise<void>;
  /** Adds results; nested objects and arrays become dot keys (`backups.0.id`). */
  setResults(record: Record<string, unknown>): Promise<void>;
  /** Ends the action as failed with one sentence saying what went wrong and what to do. */
  fail(sentence: string): never;
  /** The unit's key/value state (state-get/state-set), which survives across hooks and actions. */
  stateGet(key: string): Promise<string | undefined>;
  /** An empty value deletes the key. */
  stateSet(data: Record<string, string>): Promise<void>;
  /** The charm runtime of this dispatch, for the charm's own modules (relations, guard); actions use the rest. */
  readonly charm: CharmRuntime;
  /** juju-log, for operators reading debug-log. */
  log(level: 'DEBUG' | 'INFO' | 'WARNING' | 'ERROR', message: string): Promise<void>;
}

export const PROGRESS_INTERVAL_MS = 1000;

export interface ProgressChannel {
  progress(message: string): Promise<void>;
  /** delivers the newest progress line that the rate limit held back */
  flush(): Promise<void>;
}

export function rateLimitedProgress(deliver: (message: string) => Promise<void>, intervalMs = PROGRESS_INTERVAL_MS, now = () => Date.now()): ProgressChannel {
  let lastSent = -Infinity;
  let pending: string | undefined;
  // A line already shown tells the user nothing new: it is dropped, so a long wait never fills the log with one line.
  const sent = new Set<string>();
  const send = async (message: string) => {
    sent.add(message);
    await deliver(message);
  };
  return {
    async progress(message) {
      if (sent.has(message)) return;
      if (now() - lastSent >= intervalMs) {
        lastSent = now();
        pending = undefined;
        await send(message);
      } else pending = message;
    },
    async flush() {
      if (pending === undefined || sent.has(pending)) return;
      const message = pending;
      pending = undefined;
      lastSent = now();
      await send(message);
    },
  };
}

export function createActionContext<A extends ActionName>(
  charm: CharmRuntime,
  action: A,
  params: ParamsOf<A>,
  config: CharmConfig,
  progress: ProgressChannel,
): ActionContext<A> {
  const fail = (sentence: string): never => {
    throw new ActionFailure(sentence);
  };
  return {
    action,
    params,
    config,
    unitName: charm.context.unitName,
    modelName: charm.context.model.name,
    async s3() {
      const readiness = await readS3Readiness(charm);
      switch (readiness.state) {
        case 'ready':
          return readiness.settings;
        case 'no-relation':
          return fail('S3 is not configured: relate this charm to s3-integrator (juju integrate kubeflow-upgrader s3-integrator) and retry.');
        case 'waiting':
          return fail(`S3 is not ready yet (${readiness.message}); retry once the unit is active.`);
        case 'invalid':
          return fail(`S3 cannot be used: ${readiness.problem}.`);
      }
    },
    async s3ForJobs() {
      const settings = await this.s3();
      const [{ checkBucket }, { charmProblemSentence }] = await Promise.all([import('../store/s3-client.ts'), import('./s3-wording.ts')]);
      // The SDK client as the action's own reads use it, finding AWS as they do, but not following a redirect.
      const check = await checkBucket(settings, { followRegionRedirects: false });
      if (!check.ok) return fail(`S3 cannot be used: ${charmProblemSentence(check.problem)}. Nothing was started.`);
      return check.region ? { ...settings, region: check.region } : settings;
    },
    async kube() {
      try {
        return await charm.kube();
      } catch (error) {
        if (error instanceof KubeUnavailableError) return fail(error.message);
        throw error;
      }
    },
    async encryptionKey() {
      try {
        return await charm.encryptionKey();
      } catch (error) {
        return fail(`The encryption-key cannot be read: ${describeInline(error)}.`);
      }
    },
    progress: (message) => progress.progress(message),
    async setResults(record) {
      await charm.tools.actionSet(flattenResults(record));
    },
    fail,
    stateGet: (key) => charm.tools.stateGetKey(key),
    stateSet: (data) => charm.tools.stateSet(data),
    charm,
    log: (level, message) => charm.log(level, message),
  };
}
