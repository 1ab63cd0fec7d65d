// A dry run's creates: the target answers a dryRun=All create with what it would store (its admission, validation,
// defaulting and pruning applied) or refuses it with its sentence. An object whose namespace the target does not
// have yet (its Profile is not restored in a dry run) is asked in a namespace the target has: NamespaceLifecycle
// refuses any create in a missing namespace, dry runs included. What the target cannot be asked there (the
// profile's quota and limits) is predicted (admission-forecast.ts).
import type { ApiResource, KubeObject } from '../kube/types.ts';
import { isAlreadyExists } from '../kube/errors.ts';
import { describe } from '../errors/index.ts';
import type { RestoreKube } from './kube-port.ts';
import type { Preflight } from './preflight.ts';
import type { SpooledItem } from './spool.ts';
import type { Verdict } from './report.ts';
import { AdmissionForecast } from './admission-forecast.ts';
import { droppedFields, dropSentences } from './target-schema.ts';
import { listOf } from './errors.ts';
import { WebhookUnreachableError, type WebhookWait } from './webhook-wait.ts';

export class DryRunAsk {
  private constructor(
    /** the namespaces the target has; a request for an object elsewhere is asked in a stand-in namespace */
    private readonly targetNamespaces: ReadonlySet<string> | undefined,
    /** where such a request is asked (standInNamespace) */
    private readonly standIn: { name: string; profile: boolean } | undefined,
    /** the quota and LimitRange admission the target cannot be asked about, predicted */
    readonly forecast: AdmissionForecast,
  ) {}

  static async open(kube: RestoreKube, preflight: Pick<Preflight, 'profiles' | 'namespaces'>): Promise<DryRunAsk> {
    const namespaces = await kube.findByResource('', 'namespaces');
    const listed = namespaces ? (await kube.listAll(namespaces)).items : [];
    const target = namespaces ? new Set(listed.map((n) => n.metadata.name ?? '')) : undefined;
    const forecast = await AdmissionForecast.open(kube, preflight.profiles, preflight.namespaces, target ?? new Set());
    return new DryRunAsk(target, standInNamespace(listed), forecast);
  }

  /** `asIs` (the object as a real create would send it, before any mark) asked of the target */
  async create(
    kube: RestoreKube, webhookWait: Pick<WebhookWait, 'write'>, fieldManager: string, dropped: string[],
    resource: ApiResource, item: SpooledItem, asIs: KubeObject, record: (verdict: Verdict, reason?: string) => Verdict, name: string,
  ): Promise<Verdict> {
    let sent = asIs;
    const namespace = sent.metadata.namespace;
    const standIn = resource.namespaced && namespace && this.targetNamespaces && !this.targetNamespaces.has(namespace) ? this.standIn?.name : undefined;
    if (standIn) sent = { ...sent, metadata: { ...sent.metadata, namespace: standIn } };
    // taken before the first await, so in restore order: the forecast charges what it admits as the server would
    const predicted = this.forecast.admit(resource, asIs);
    const accepted = (reason?: string): Verdict => {
      if (predicted?.refusal !== undefined) return record('fail', `${name}: would be refused by the target (predicted, not asked): 403 Forbidden: ${predicted.refusal}`);
      this.forecast.adopt(resource, asIs);
      return record('create', reason);
    };
    try {
      const answer = await webhookWait.write(name, () => kube.create(resource, sent, { dryRun: true, fieldManager }));
      const fields = droppedFields(sent, answer);
      dropped.push(...dropSentences(item.object, fields, true));
      return accepted(fields.length ? `${name}: accepted; the target's schema would drop ${listOf(fields, 5)}` : undefined);
    } catch (error) {
      if (error instanceof WebhookUnreachableError) return record('fail', error.message);
      // a same-named object in the stand-in namespace says nothing about this one
      if (standIn && isAlreadyExists(error)) return accepted();
      // An admission webhook may judge the namespace as well as the object (Katib's Experiment validator refuses a
      // namespace without its metrics-collector label, kubeflow/katib pkg/webhook/v1beta1/experiment/
      // validation_webhook.go): its answer about a stand-in that is no profile namespace says nothing about the
      // profile namespace the Profile's controller will make, so it is reported as not asked, its sentence quoted.
      const denial = standIn && !this.standIn?.profile ? webhookDenial(error) : undefined;
      if (denial) return accepted(`${name}: not asked of admission webhook "${denial}": the target has no namespace ${namespace} yet and no profile namespace to ask in; asked in ${standIn}, it said: ${describe(error)}`);
      if (predicted?.refusal === undefined) predicted?.undo();
      return record('fail', `${name}: refused by the target: ${describe(error)}`);
    }
  }
}

/**
 * Where a dry run asks about objects of a namespace the target does not have yet: a profile namespace of the target if
 * it has one (its Profile's controller owns it: kubeflow/kubeflow components/profile-controller/controllers/
 * profile_controller.go SetControllerReference), whose labels the admission webhooks select and check as they will the
 * restored profile's; else `default`, which every cluster has.
 */
function standInNamespace(namespaces: readonly KubeObject[]): { name: string; profile: boolean } | undefined {
  const live = namespaces.filter((n) => !n.metadata.deletionTimestamp && n.metadata.name);
  const profile = live.find((n) => n.metadata.ownerReferences?.some((o) => o.kind === 'Profile' && o.controller === true));
  if (profile) return { name: profile.metadata.name!, profile: true };
  const names = live.map((n) => n.metadata.name!).sort();
  const name = names.includes('default') ? 'default' : names[0];
  return name ? { name, profile: false } : undefined;
}

/** the webhook that answered and refused (kube-apiserver: `admission webhook "<name>" denied the request: …`) */
function webhookDenial(error: unknown): string | undefined {
  return /admission webhook "([^"]+)" denied the request/.exec(describe(error))?.[1];
}
