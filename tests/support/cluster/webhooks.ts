// Admission webhooks: the MutatingWebhookConfigurations and ValidatingWebhookConfigurations stored in the cluster are
// matched against every write and the simulated servers they name are called in-process, as kube-apiserver's webhook
// plugins do (kubernetes/kubernetes staging/src/k8s.io/apiserver/pkg/admission/plugin/webhook):
// - generic/webhook.go ShouldCallHook: rules (operations, apiGroups, apiVersions, resources, scope), namespaceSelector
//   for namespaced objects (the namespace's labels), objectSelector (the object's or old object's labels),
//   matchConditions (CEL over object, oldObject, request);
// - mutating/dispatcher.go: mutating webhooks in order, each seeing the previous one's result; validating/dispatcher.go:
//   every validating webhook, the first refusal answered;
// - a call that fails (no ready endpoint: kube-proxy refuses the ClusterIP, as on MicroK8s without aggregator routing)
//   is, under failurePolicy Fail (the admissionregistration/v1 default), `apierrors.NewInternalError(err)` with err
//   `failed calling webhook "<name>": failed to call webhook: Post "https://<svc>.<ns>.svc:443<path>?timeout=10s":
//   dial tcp <clusterIP>:443: connect: connection refused` (util/webhook/error.go ErrCallingWebhook; the dispatchers'
//   "failing closed" branch); under Ignore the webhook is skipped;
// - a refusal is errors/statuserror.go ToStatusErr: `<resource> "<name>" is forbidden: admission webhook "<name>"
//   denied the request: <message>`, with the webhook's code (403 when it gave none) and reason Forbidden;
// - a dry-run request reaches only webhooks whose sideEffects are None or NoneOnDryRun, otherwise 400 `admission
//   webhook "<name>" does not support dry run` (errors/statuserror.go NewDryRunUnsupportedErr).
// A webhook's endpoint is ready when a Pod its Service selects is Ready (net/endpoints-controller.ts serviceEndpoints,
// what the EndpointSlices and so kube-proxy carry), so a simulated operator becomes reachable exactly when its Pod does.
import type { KubeObject } from '../../../src/kube/types.ts';
import { ruleMatches, selectorMatches, type LabelSelector, type ResourceRule } from './admission.ts';
import { compileCel, toCel } from './cel.ts';
import { ApiError, qualified } from './errors.ts';
import { serviceEndpoints } from '../net/endpoints-controller.ts';
import type { ResourceDef } from './resources.ts';
import type { Cluster } from './cluster.ts';

export type WebhookOperation = 'CREATE' | 'UPDATE';

/** what a simulated webhook server is asked (the AdmissionReview request's parts the Kubeflow webhooks read) */
export interface WebhookRequest {
  operation: WebhookOperation;
  resource: string;
  group: string;
  version: string;
  name: string;
  namespace: string;
  object: KubeObject;
  oldObject: KubeObject | null;
  dryRun: boolean;
  /** the cluster as the webhook's own client reads it (Katib's validator reads the namespace) */
  cluster: Cluster;
}

/**
 * a webhook server's answer: allowed (a mutating one may have changed `request.object` in place, which stands for
 * its JSON patch), or refused with the Result it sets (controller-runtime pkg/webhook/admission/response.go: Denied
 * is code 403 reason Forbidden, Errored(code, err) is that code without a reason)
 */
export type WebhookAnswer = { allowed: true } | { allowed: false; code: number; reason?: string; message: string };

export type WebhookHandler = (request: WebhookRequest) => WebhookAnswer;

interface ServiceReference { namespace?: string; name?: string; path?: string; port?: number }
interface Webhook {
  name: string;
  clientConfig?: { service?: ServiceReference; url?: string };
  rules?: ResourceRule[];
  failurePolicy?: 'Fail' | 'Ignore';
  namespaceSelector?: LabelSelector;
  objectSelector?: LabelSelector;
  sideEffects?: string;
  matchConditions?: Array<{ name: string; expression: string }>;
}

const MUTATING = { group: 'admissionregistration.k8s.io', resource: 'mutatingwebhookconfigurations' };
const VALIDATING = { group: 'admissionregistration.k8s.io', resource: 'validatingwebhookconfigurations' };
const SERVICES = { group: '', resource: 'services' };
const NAMESPACES = { group: '', resource: 'namespaces' };

/** the simulated webhook servers, by `<namespace>/<service><path>`, and the dispatch of stored configurations to them */
export class AdmissionWebhooks {
  private readonly servers = new Map<string, WebhookHandler>();

  constructor(private readonly cluster: Cluster) {}

  /** a simulated server answering `path` behind the Service `namespace/service`; returns its removal */
  serve(namespace: string, service: string, path: string, handler: WebhookHandler): () => void {
    const key = `${namespace}/${service}${path}`;
    this.servers.set(key, handler);
    return () => { if (this.servers.get(key) === handler) this.servers.delete(key); };
  }

  /** mutating admission: each matching webhook in turn may change `object` */
  mutate(operation: WebhookOperation, d: ResourceDef, object: KubeObject, old: KubeObject | null, dryRun: boolean, username: string): void {
    this.dispatch(MUTATING, operation, d, object, old, dryRun, username);
  }

  /** validating admission: throws the first refusal or failed call */
  validate(operation: WebhookOperation, d: ResourceDef, object: KubeObject, old: KubeObject | null, dryRun: boolean, username: string): void {
    this.dispatch(VALIDATING, operation, d, structuredClone(object), old, dryRun, username);
  }

  private dispatch(kind: typeof MUTATING, operation: WebhookOperation, d: ResourceDef, object: KubeObject, old: KubeObject | null, dryRun: boolean, username: string): void {
    // the configurations themselves are never subject to webhooks (generic/webhook.go IsExemptAdmissionConfigurationResource)
    if (d.group === MUTATING.group || !this.cluster.findResource(kind)) return;
    const configurations = this.cluster.list(kind);
    if (configurations.length === 0) return;
    const version = versionOf(object.apiVersion);
    const request = {
      operation, group: d.group, version, resource: d.resource, subResource: '', name: object.metadata.name ?? '',
      namespace: d.namespaced ? object.metadata.namespace ?? '' : '',
    };
    const namespaceLabels = d.namespaced ? this.cluster.get(NAMESPACES, request.namespace)?.metadata.labels ?? {} : {};
    for (const configuration of configurations.sort((a, b) => (a.metadata.name ?? '').localeCompare(b.metadata.name ?? ''))) {
      for (const hook of ((configuration as { webhooks?: Webhook[] }).webhooks ?? [])) {
        if (!(hook.rules ?? []).some((rule) => ruleMatches(rule, { ...request, kind: d.kind, object, oldObject: old, user: { username, groups: [] }, dryRun }, d.namespaced))) continue;
        if (d.namespaced && hook.namespaceSelector && !selectorMatches(hook.namespaceSelector, namespaceLabels)) continue;
        if (hook.objectSelector && !selectorMatches(hook.objectSelector, object.metadata.labels ?? {}) && !(old && selectorMatches(hook.objectSelector, old.metadata.labels ?? {}))) continue;
        if (!(hook.matchConditions ?? []).every((c) => compileCel(c.expression)({ object: toCel(object), oldObject: toCel(old), request: toCel({ ...request, userInfo: { username } }) }) === true)) continue;
        if (dryRun && hook.sideEffects !== 'None' && hook.sideEffects !== 'NoneOnDryRun')
          throw new ApiError(400, 'BadRequest', `admission webhook "${hook.name}" does not support dry run`);
        const answer = this.call(hook, { operation, resource: d.resource, group: d.group, version, name: request.name, namespace: request.namespace, object, oldObject: old, dryRun, cluster: this.cluster });
        if (answer === undefined || answer.allowed) continue;
        throw refusal(d, request.name, hook.name, answer);
      }
    }
  }

  /** the answer, or undefined when the call failed and failurePolicy is Ignore */
  private call(hook: Webhook, request: WebhookRequest): WebhookAnswer | undefined {
    const service = hook.clientConfig?.service ?? {};
    const namespace = service.namespace ?? '';
    const name = service.name ?? '';
    const path = service.path ?? '/';
    const port = service.port ?? 443;
    const url = `https://${name}.${namespace}.svc:${port}${path}?timeout=10s`;
    const failed = (why: string): undefined => {
      if (hook.failurePolicy === 'Ignore') return undefined;
      const message = `failed calling webhook "${hook.name}": failed to call webhook: Post "${url}": ${why}`;
      throw new ApiError(500, 'InternalError', `Internal error occurred: ${message}`, { causes: [{ message }] });
    };
    const svc = this.cluster.get(SERVICES, name, namespace);
    if (!svc) return failed(`service "${name}" not found`);
    const clusterIp = (svc.spec as { clusterIP?: string } | undefined)?.clusterIP ?? '';
    const ready = [...serviceEndpoints(this.cluster, svc).values()].some((group) => group.endpoints.some((e) => e.ready));
    if (!ready) return failed(`dial tcp ${clusterIp}:${port}: connect: connection refused`);
    const handler = this.servers.get(`${namespace}/${name}${path}`);
    // controller-runtime's mux answers a path it does not serve with 404, which the apiserver's REST client reports
    if (!handler) return failed('the server could not find the requested resource');
    return handler(request);
  }
}

/** errors/statuserror.go ToStatusErr */
function refusal(d: ResourceDef, name: string, webhook: string, answer: Extract<WebhookAnswer, { allowed: false }>): ApiError {
  const code = answer.code || 403;
  const deniedBy = `admission webhook "${webhook}" denied the request`;
  const message = answer.message ? `${deniedBy}: ${answer.message}` : answer.reason ? `${deniedBy}: ${answer.reason}` : `${deniedBy} without explanation`;
  if (code === 500) return new ApiError(500, answer.reason || 'InternalError', `Internal error occurred: ${message}`, { causes: [{ message }] });
  const details: { name: string; kind: string; group?: string } = { name: name || 'Unknown', kind: d.resource };
  if (d.group) details.group = d.group;
  return new ApiError(code, answer.reason || 'Forbidden', `${qualified(d)} "${name || 'Unknown'}" is forbidden: ${message}`, details);
}

function versionOf(apiVersion: string | undefined): string {
  const v = apiVersion ?? '';
  return v.includes('/') ? v.slice(v.indexOf('/') + 1) : v;
}
