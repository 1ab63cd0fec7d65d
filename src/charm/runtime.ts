// Everything a handler may ask about this dispatch, each fact fetched at most once and only when asked.
import type { DispatchContext } from '../juju/context.ts';
import type { HookTools, LogLevel } from '../juju/hook-tools.ts';
import type { Redactor } from '../juju/redact.ts';
import { parseConfig, type ConfigResult } from './config.ts';
import type { KubeClient } from '../kube/client.ts';
import { existsSync } from 'node:fs';
import type { S3Readiness } from '../store/settings.ts';
import type { GuardFact } from './guard-fact.ts';
import type { StatusNote } from './status.ts';
import type { ControlPlaneView } from '../controlplane/steps.ts';
import { KfuError } from '../errors/index.ts';

/**
 * What the handlers of this dispatch found out, for the status collected once after them (collectStatus in
 * hooks.ts, as ops' collect-status): kept on the runtime, which lives exactly as long as the dispatch.
 */
export interface DispatchFacts {
  /** the guard as this dispatch converged or inspected it */
  guard?: GuardFact;
  /** the s3-credentials relation read once: the status and its contributors all ask */
  s3?: Promise<S3Readiness>;
  /** the control-plane relations read once: the service's settings and the status both ask */
  controlPlane?: Promise<ControlPlaneView>;
  /** notes a handler adds to the status (e.g. a control-plane request not written) */
  notes: StatusNote[];
}

const SERVICE_ACCOUNT_TOKEN = '/var/run/secrets/kubernetes.io/serviceaccount/token';

/** Neither the pod's service account nor KUBECONFIG: there is no cluster to talk to. */
export class KubeUnavailableError extends KfuError {
  static override readonly errorId = 'KubeUnavailableError';
  constructor(sentence: string) {
    super(sentence, { kind: 'unavailable' });
  }
}

/** The passphrase in an `encryption-key` secret's content: its `key` field, or its only field. */
export function keyOfSecret(content: Record<string, string>): string {
  const values = Object.values(content);
  const key = content.key ?? (values.length === 1 ? values[0] : undefined);
  if (!key) throw new Error('the encryption-key secret has no "key" field; create it with juju add-secret <name> key=<passphrase>');
  return key;
}

export class CharmRuntime {
  readonly facts: DispatchFacts = { notes: [] };
  private rawConfig?: Promise<Record<string, unknown>>;
  private configResult?: Promise<ConfigResult>;
  private leader?: Promise<boolean>;
  private kubeClient?: Promise<KubeClient>;

  constructor(
    readonly context: DispatchContext,
    readonly tools: HookTools,
    readonly redactor: Redactor,
  ) {}

  /** The options as config-get gives them, for the few places that must act on one option whatever the others say. */
  configValues(): Promise<Record<string, unknown>> {
    this.rawConfig ??= this.tools.configGet();
    return this.rawConfig;
  }

  config(): Promise<ConfigResult> {
    this.configResult ??= this.configValues().then(parseConfig);
    return this.configResult;
  }

  isLeader(): Promise<boolean> {
    this.leader ??= this.tools.isLeader();
    return this.leader;
  }

  /** A Kubernetes client: in-cluster config when present, else KUBECONFIG (tests and the demo point it at their cluster). */
  kube(): Promise<KubeClient> {
    this.kubeClient ??= (async () => {
      const inCluster = Boolean(process.env.KUBERNETES_SERVICE_HOST) && existsSync(SERVICE_ACCOUNT_TOKEN);
      if (!inCluster && !this.context.kubeconfig) {
        throw new KubeUnavailableError('No Kubernetes API is reachable: the charm has no pod service account and KUBECONFIG is not set; deploy it on a Kubernetes model with --trust.');
      }
      const config = await this.config();
      const { KubeClient } = await import('../kube/client.ts');
      return KubeClient.load({
        ...(this.context.kubeconfig ? { kubeconfig: this.context.kubeconfig } : {}),
        ...(config.ok ? { concurrency: config.config['api-concurrency'] } : {}),
      });
    })();
    return this.kubeClient;
  }

  /** The passphrase behind the `encryption-key` config option, or undefined when the option is not set. */
  async encryptionKey(): Promise<string | undefined> {
    const config = await this.config();
    if (!config.ok) throw new Error(config.problem);
    const uri = config.config['encryption-key'];
    if (!uri) return undefined;
    // The revision this unit tracks: a newer one is taken up only once the restic repositories open with it
    // (src/charm/restic-key.ts refreshes after adding its password to them).
    return keyOfSecret(await this.tools.secretGet(uri));
  }

  async log(level: LogLevel, message: string): Promise<void> {
    try {
      await this.tools.jujuLog(level, message);
    } catch {
      // Logging must never turn a handled problem into a failed hook.
    }
  }
}
