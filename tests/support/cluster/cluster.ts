// The API semantics (validation, resourceVersions, status subresource, finalizers, admission, CRD registration)
// shared by the HTTP front end and the in-process API the simulated controllers use.
import { randomUUID } from 'node:crypto';
import type { KubeObject } from '../../../src/kube/types.ts';
import { apiVersionOf } from '../../../src/kube/types.ts';
import type { DeleteOptions, InProcessApi, ListOptions, PodExecSource, PodLogSource, ResourceRef } from './contract.ts';
import { admit, type Operation } from './admission.ts';
import type { AdmissionWebhooks } from './webhooks.ts';
import { checkQuota } from './quota.ts';
import { applyLimitRangeDefaults, limitRangeRefusal, defaultRequestsFromLimits, pvcLimitRangeRefusal } from './limit-ranges.ts';
import { admitCustomObject, crdToDef, CRD_CLEANUP_FINALIZER, settledStatus, validateCrd, validateStoredVersions } from './crd.ts';
import { alreadyExists, ApiError, badRequest, conflict, forbidden, invalid, invalidValue, notFound, required, type FieldError } from './errors.ts';
import { recordUpdate, serverSideApply } from './managed-fields.ts';
import { generatedSuffix, labelKeyProblem, labelValueProblem, nameProblem } from './names.ts';
import { clone, mergePatch } from './patch.ts';
import { builtinResources, servedVersions, storageVersion, type ResourceDef } from './resources.ts';
import { fieldMatcher, labelMatcher } from './selectors.ts';
import { deepFreeze, ObjectStore, objectKey, refKey, type Stored } from './store.ts';
import { validateDataUpdate, validatePvcUpdate } from './immutable.ts';
import { mergeStringData, validateSecret } from './secrets.ts';
import { validateAppsUpdate } from './apps.ts';
import { defaultBinding, validateBinding, validateBindingUpdate } from './rbac/binding-validation.ts';
import { schemaProblems } from './schemas.ts';
import { generateJobSelector, validateJobCreate, validateJobUpdate } from './jobs.ts';
import type { ClusterNetwork } from '../net/cluster-network.ts';
import { DEFAULT_NETWORK, ServiceAllocator, type ServiceNetwork } from './services.ts';
import { seededRandom } from './faults.ts';

export interface UserInfo {
  username: string;
  groups: string[];
}

export interface WriteOptions {
  dryRun?: boolean;
  fieldManager?: string;
  user?: UserInfo;
}

/** a check of a create (old null) or update of `obj` by `user` (undefined: an in-process controller's own write) */
export type WriteCheck = (def: ResourceDef, obj: KubeObject, old: KubeObject | null, user: UserInfo | undefined) => void;

export interface FullDeleteOptions extends DeleteOptions, WriteOptions {
  preconditions?: { uid?: string; resourceVersion?: string };
}

const CONTROLLER_USER: UserInfo = { username: 'system:serviceaccount:kubeflow:simulated-controllers', groups: ['system:serviceaccounts', 'system:authenticated'] };
const CRD_REF: ResourceRef = { group: 'apiextensions.k8s.io', resource: 'customresourcedefinitions' };
const NS_REF: ResourceRef = { group: '', resource: 'namespaces' };
const QUOTA_REF: ResourceRef = { group: '', resource: 'resourcequotas' };
const LIMIT_RANGE_REF: ResourceRef = { group: '', resource: 'limitranges' };
const VAP_REF: ResourceRef = { group: 'admissionregistration.k8s.io', resource: 'validatingadmissionpolicies' };
const VAPB_REF: ResourceRef = { group: 'admissionregistration.k8s.io', resource: 'validatingadmissionpolicybindings' };
/** Kinds whose create sets a status instead of dropping it (the real strategies' PrepareForCreate). */
const INITIAL_STATUS: Record<string, (o: KubeObject) => unknown> = {
  '/namespaces': () => ({ phase: 'Active' }),
  '/pods': () => ({ phase: 'Pending', qosClass: 'BestEffort' }),
  '/persistentvolumeclaims': () => ({ phase: 'Pending' }),
  '/persistentvolumes': () => ({ phase: 'Pending' }),
};

export class Cluster implements InProcessApi {
  readonly store: ObjectStore;
  private readonly defs = new Map<string, ResourceDef>();
  /** uid → where the object lives, for owner lookups */
  private readonly byUid = new Map<string, { ref: ResourceRef; key: string }>();
  /** owner uid → dependents' "<refKey>|<objectKey>" */
  private readonly dependents = new Map<string, Set<string>>();
  private readonly random: () => number;
  /** ClusterIPs and nodePorts the stored Services hold (services.ts) */
  readonly services: ServiceAllocator;
  /** the loopback network startCluster gives a cluster it runs (contract.ts) */
  network?: ClusterNetwork;
  /** mutating admission on CREATE, per resource (what a MutatingWebhookConfiguration with operations [CREATE] does) */
  private readonly createMutators = new Map<string, Array<(object: KubeObject) => void>>();
  /** checks of a write by its user that the storage makes before admission (rbac/authorizer.ts, the RBAC escalation checks) */
  private readonly writeChecks: WriteCheck[] = [];
  /** the admission webhooks the stored Mutating/ValidatingWebhookConfigurations name (webhooks.ts), once installed */
  webhooks?: AdmissionWebhooks;

  constructor(options: { random?: () => number; store?: ObjectStore; serviceNetwork?: ServiceNetwork; allocationSeed?: number } = {}) {
    this.random = options.random ?? Math.random;
    this.store = options.store ?? new ObjectStore();
    // a random source of its own, so that allocating addresses does not change the names generateName produces
    this.services = new ServiceAllocator(options.serviceNetwork ?? DEFAULT_NETWORK, seededRandom(options.allocationSeed ?? 0x5e7c));
    for (const d of builtinResources()) this.defs.set(refKey(d), d);
    for (const s of this.store.scan({ group: '', resource: 'services' })) this.services.track(undefined, s.obj);
  }

  // ---- resource registry -------------------------------------------------------------------------------------

  resources(): ResourceDef[] {
    return [...this.defs.values()];
  }

  findResource(ref: ResourceRef): ResourceDef | undefined {
    return this.defs.get(refKey(ref));
  }

  resourceByKind(group: string, kind: string): ResourceDef | undefined {
    for (const d of this.defs.values()) if (d.group === group && d.kind === kind) return d;
    return undefined;
  }

  private def(ref: ResourceRef): ResourceDef {
    const d = this.findResource(ref);
    if (!d) throw new ApiError(404, 'NotFound', 'the server could not find the requested resource');
    return d;
  }

  /** The object as a client of `version` sees it: only apiVersion differs ("None" conversion). */
  convert(obj: KubeObject, def: ResourceDef, version: string): KubeObject {
    const apiVersion = apiVersionOf(def.group, version);
    return obj.apiVersion === apiVersion ? obj : { ...obj, apiVersion };
  }

  // ---- reads -------------------------------------------------------------------------------------------------

  getStored(ref: ResourceRef, name: string, namespace?: string): Stored | undefined {
    const d = this.def(ref);
    return this.store.get(d, objectKey(d.namespaced ? namespace : undefined, name));
  }

  get(ref: ResourceRef, name: string, namespace?: string): KubeObject | undefined {
    const s = this.getStored(ref, name, namespace);
    return s ? clone(s.obj) : undefined;
  }

  read(ref: ResourceRef, name: string, namespace?: string): KubeObject | undefined {
    const s = this.getStored(ref, name, namespace);
    return s ? deepFreeze(s.obj) : undefined;
  }

  list(ref: ResourceRef, options: ListOptions = {}): KubeObject[] {
    const d = this.def(ref);
    const byLabel = labelMatcher(options.labelSelector);
    const byField = fieldMatcher(options.fieldSelector);
    return this.store
      .scan(d, d.namespaced ? options.namespace : undefined)
      .filter((s) => byLabel(s.obj) && byField(s.obj))
      .map((s) => clone(s.obj));
  }

  private logSource: PodLogSource | undefined;

  serveLogs(source: PodLogSource): () => void {
    this.logSource = source;
    return () => { if (this.logSource === source) this.logSource = undefined; };
  }

  /** The kubelet's exec into running containers, for `pods/<name>/exec` (exec.ts); undefined without a kubelet. */
  execSource: PodExecSource | undefined;

  serveExec(source: PodExecSource): () => void {
    this.execSource = source;
    return () => { if (this.execSource === source) this.execSource = undefined; };
  }

  /**
   * A container's log as the API server relays it from the kubelet (pods/log): the Pod must exist, the container must
   * be one of its own (the only one may be left unnamed), and one that has not started answers 400 "container … is
   * waiting to start: ContainerCreating" (the kubelet's validateContainerLogStatus, kubernetes/kubernetes
   * pkg/kubelet/kubelet_pods.go). tailLines keeps the last lines.
   */
  podLog(namespace: string, name: string, container: string | undefined, tailLines: number | undefined): string {
    const ref: ResourceRef = { group: '', resource: 'pods' };
    const pod = this.get(ref, name, namespace);
    if (!pod) throw notFound({ group: '', resource: 'pods' }, name);
    const names = (((pod.spec as { containers?: { name: string }[] } | undefined)?.containers) ?? []).map((c) => c.name);
    const chosen = container ?? (names.length === 1 ? names[0]! : undefined);
    if (!chosen) throw badRequest(`a container name must be specified for pod ${name}, choose one of: [${names.join(' ')}]`);
    if (!names.includes(chosen)) throw badRequest(`container ${chosen} is not valid for pod ${name}`);
    const log = this.logSource?.(namespace, name, chosen);
    if (log === undefined) throw badRequest(`container "${chosen}" in pod "${name}" is waiting to start: ContainerCreating`);
    if (tailLines === undefined) return log;
    const lines = log.split('\n');
    if (lines.at(-1) === '') lines.pop();
    return lines.slice(-tailLines).map((l) => `${l}\n`).join('');
  }

  subscribe(listener: Parameters<InProcessApi['subscribe']>[0]): () => void {
    return this.store.subscribe(listener);
  }

  uidExists(uid: string): boolean {
    return this.byUid.has(uid);
  }

  locate(uid: string): { ref: ResourceRef; key: string } | undefined {
    return this.byUid.get(uid);
  }

  dependentsOf(uid: string): { ref: ResourceRef; stored: Stored }[] {
    const out: { ref: ResourceRef; stored: Stored }[] = [];
    for (const k of this.dependents.get(uid) ?? []) {
      const [rk, ok] = k.split('|') as [string, string];
      const d = this.defs.get(rk);
      const s = d ? this.store.get(d, ok) : undefined;
      if (d && s) out.push({ ref: d, stored: s });
    }
    return out;
  }

  // ---- writes ------------------------------------------------------------------------------------------------

  /**
   * registers a mutating webhook called for every CREATE of `ref` (not on UPDATE), before validation: mutating
   * admission runs before validating admission (kubernetes/kubernetes staging/src/k8s.io/apiserver/pkg/admission/
   * plugin/webhook/mutating), and a webhook registered for operations [CREATE] is not called on UPDATE
   */
  addCreateMutator(ref: ResourceRef, mutate: (object: KubeObject) => void): () => void {
    const list = this.createMutators.get(refKey(ref)) ?? [];
    list.push(mutate);
    this.createMutators.set(refKey(ref), list);
    return () => { list.splice(list.indexOf(mutate), 1); };
  }

  /**
   * registers a check every CREATE and UPDATE (patch and apply included) goes through with the writing user, before
   * validating admission: what the RBAC kinds' policybased storages do (kubernetes/kubernetes pkg/registry/rbac/
   * role/policybased/storage.go and its siblings). Returns the withdrawal.
   */
  addWriteCheck(check: WriteCheck): () => void {
    this.writeChecks.push(check);
    return () => { this.writeChecks.splice(this.writeChecks.indexOf(check), 1); };
  }

  create(ref: ResourceRef, object: KubeObject, options: WriteOptions = {}): KubeObject {
    return clone(this.createOwned(ref, clone(object), options));
  }

  /**
   * create for a caller that hands over an object nobody else holds (the HTTP front end's decoded request body) and
   * only reads the answer: the stored object itself, which must not be modified. It saves the two deep copies the
   * in-process API makes to keep its callers' objects and the store's apart.
   */
  createOwned(ref: ResourceRef, obj: KubeObject, options: WriteOptions = {}): KubeObject {
    const d = this.def(ref);
    obj.metadata ??= {};
    // decoding converts stringData into data before any admission sees the object (secrets.ts)
    if (isSecrets(d)) mergeStringData(obj);
    for (const mutate of this.createMutators.get(refKey(ref)) ?? []) mutate(obj);
    this.webhooks?.mutate('CREATE', d, obj, null, options.dryRun ?? false, (options.user ?? CONTROLLER_USER).username);
    const meta = obj.metadata;
    if (!meta.name && meta.generateName) meta.name = meta.generateName + generatedSuffix(this.random);
    const name = meta.name ?? '';
    const namespace = d.namespaced ? meta.namespace : undefined;
    this.checkVersion(d, obj);
    this.checkDefinitionAcceptsCreates(d);
    const errors = this.validateMeta(d, obj);
    if (isSecrets(d)) errors.push(...validateSecret(obj));
    if (errors.length) throw invalid(d.kind, d.group, name, errors);
    if (d.namespaced) this.checkNamespaceAcceptsContent(d, namespace!, name);
    else delete meta.namespace;
    this.admitCustom(d, obj, undefined);
    const key = objectKey(namespace, name);
    if (this.store.get(d, key)) throw alreadyExists(d, name);

    obj.apiVersion = apiVersionOf(d.group, storageVersion(d));
    meta.uid = randomUUID();
    meta.creationTimestamp = now();
    meta.generation = 1;
    delete meta.deletionTimestamp;
    delete meta.deletionGracePeriodSeconds;
    delete meta.resourceVersion;
    this.prepareForCreate(d, obj);
    if (d.builtin) {
      const schemaErrors = schemaProblems(d, obj);
      if (schemaErrors.length) throw invalid(d.kind, d.group, name, schemaErrors);
    }
    if (isBindings(d)) {
      defaultBinding(obj);
      const bindingErrors = validateBinding(obj, d.namespaced);
      if (bindingErrors.length) throw invalid(d.kind, d.group, name, bindingErrors);
    }
    if (isJobs(d)) {
      generateJobSelector(obj);
      const jobErrors = validateJobCreate(obj);
      if (jobErrors.length) throw invalid(d.kind, d.group, name, jobErrors);
    }
    if (isCrd(d)) {
      validateCrd(obj);
      const def = crdToDef(obj);
      const existing = this.findResource(def);
      if (existing && existing.builtin) throw invalid('CustomResourceDefinition', CRD_REF.group, name, [invalidValue('spec.group', def.group, 'cannot redefine a built-in resource')]);
      obj.status = settledStatus(obj, undefined, meta.creationTimestamp);
      meta.finalizers = [...new Set([...(meta.finalizers ?? []), CRD_CLEANUP_FINALIZER])];
    }
    if (isServices(d)) {
      // the handler records managed fields from the request, before the registry allocates (kubernetes
      // staging/src/k8s.io/apiserver/pkg/endpoints/handlers/create.go, then pkg/registry/core/service/storage): an
      // allocated clusterIP or nodePort belongs to no field manager
      if (options.fieldManager && !options.dryRun && !Array.isArray(meta.managedFields)) recordUpdate(undefined, obj, options.fieldManager, meta.creationTimestamp);
      this.services.prepareCreate(obj);
    }
    if (d.group === '' && d.resource === 'pods') {
      // defaulting, then the mutating LimitRanger, before any validating admission and the ResourceQuota check last
      // (limit-ranges.ts; kubernetes pkg/kubeapiserver/options/plugins.go orders LimitRanger before ResourceQuota)
      defaultRequestsFromLimits(obj);
      const limitRanges = this.store.scan(LIMIT_RANGE_REF, namespace).map((s) => s.obj);
      applyLimitRangeDefaults(obj, limitRanges);
      // LimitRanger's validation runs before the other validating plugins (kubernetes pkg/kubeapiserver/options/plugins.go)
      const why = limitRangeRefusal(obj, limitRanges);
      if (why) throw forbidden(d, name, why);
    }
    if (isClaims(d)) this.admitClaimLimits(d, obj);
    this.admit('CREATE', d, obj, null, options);
    // the ResourceQuota plugin is the last validating plugin (kubernetes pkg/kubeapiserver/options/plugins.go)
    if (d.namespaced) this.admitQuota('CREATE', d, obj, null, '', options);
    if (options.fieldManager && !options.dryRun && !Array.isArray(meta.managedFields)) recordUpdate(undefined, obj, options.fieldManager, meta.creationTimestamp);
    if (options.dryRun) return obj;
    const stored = this.write(d, key, obj, 'ADDED');
    if (isCrd(d)) this.defs.set(refKey(crdToDef(obj)), crdToDef(obj));
    return stored.obj;
  }

  update(ref: ResourceRef, object: KubeObject, options: WriteOptions = {}): KubeObject {
    return this.updateWith(ref, object, 'main', options);
  }

  updateStatus(ref: ResourceRef, object: KubeObject, options: WriteOptions = {}): KubeObject {
    return this.updateWith(ref, object, 'status', options);
  }

  /** update or updateStatus for a caller that hands over its object and only reads the answer (see createOwned) */
  updateOwned(ref: ResourceRef, object: KubeObject, subresource: 'main' | 'status', options: WriteOptions = {}): KubeObject {
    return this.updateFrom(ref, object, subresource, options, false);
  }

  mergePatch(ref: ResourceRef, name: string, namespace: string | undefined, patch: unknown, options: WriteOptions = {}): KubeObject {
    return this.patch(ref, name, namespace, (cur) => mergePatch(cur, patch) as KubeObject, 'main', options);
  }

  /** Read-modify-write of one object against its current version (what every PATCH is). */
  patch(
    ref: ResourceRef,
    name: string,
    namespace: string | undefined,
    change: (current: KubeObject) => KubeObject,
    subresource: 'main' | 'status',
    options: WriteOptions = {},
  ): KubeObject {
    const d = this.def(ref);
    const cur = this.getStored(ref, name, namespace);
    if (!cur) throw notFound(d, name);
    const next = change(clone(cur.obj));
    if (!next || typeof next !== 'object') throw new ApiError(422, 'Invalid', 'the patch did not produce an object');
    next.metadata ??= {};
    // a patch that sets resourceVersion asks for optimistic concurrency; otherwise it applies to the object as it is
    // (the real handler retries on its own conflicts: kubernetes/kubernetes staging/src/k8s.io/apiserver/pkg/endpoints/
    // handlers/patch.go, MaxRetryWhenPatchConflicts; here nothing can write between the read and the write)
    if (next.metadata.resourceVersion === undefined || next.metadata.resourceVersion === cur.obj.metadata.resourceVersion)
      next.metadata.resourceVersion = cur.obj.metadata.resourceVersion;
    return this.updateWith(ref, next, subresource, options);
  }

  /** Server-side apply: creates the object when absent; otherwise merges by field ownership. */
  apply(ref: ResourceRef, config: KubeObject, manager: string, force: boolean, subresource: 'main' | 'status', options: WriteOptions = {}): KubeObject {
    const d = this.def(ref);
    const name = config.metadata?.name ?? '';
    const namespace = d.namespaced ? config.metadata?.namespace : undefined;
    const cur = this.getStored(ref, name, namespace);
    const stamp = now();
    if (!cur) {
      if (subresource === 'status') throw notFound(d, name);
      const created = serverSideApply(undefined, config, manager, force, stamp);
      created.metadata.name = name;
      if (namespace) created.metadata.namespace = namespace;
      return this.create(ref, created, { ...options, fieldManager: undefined });
    }
    const base = this.convert(cur.obj, d, versionOf(config.apiVersion));
    const next = serverSideApply(base, config, manager, force, stamp, subresource === 'status' ? 'status' : undefined);
    next.metadata.resourceVersion = cur.obj.metadata.resourceVersion;
    return this.updateWith(ref, next, subresource, { ...options, fieldManager: undefined }, true);
  }

  private updateWith(ref: ResourceRef, object: KubeObject, subresource: 'main' | 'status', options: WriteOptions, keepManagedFields = false): KubeObject {
    return clone(this.updateFrom(ref, clone(object), subresource, options, keepManagedFields));
  }

  /** The update itself: `input` becomes the server's; the answer is the stored object (or what would be stored). */
  private updateFrom(ref: ResourceRef, input: KubeObject, subresource: 'main' | 'status', options: WriteOptions, keepManagedFields: boolean): KubeObject {
    const d = this.def(ref);
    input.metadata ??= {};
    const name = input.metadata.name ?? '';
    const namespace = d.namespaced ? input.metadata.namespace : undefined;
    const key = objectKey(namespace, name);
    const cur = this.store.get(d, key);
    if (!cur) throw notFound(d, name);
    this.checkVersion(d, input);
    const rv = input.metadata.resourceVersion;
    if (rv !== undefined && rv !== '' && rv !== cur.obj.metadata.resourceVersion) throw conflict(d, name);
    const old = cur.obj;
    let next: KubeObject;
    if (subresource === 'status') {
      next = { ...clone(old), status: input.status };
      if (input.status === undefined) delete next.status;
    } else {
      next = input;
      if (isSecrets(d)) mergeStringData(next);
      const errors = this.validateMeta(d, next);
      if (errors.length) throw invalid(d.kind, d.group, name, errors);
      if (d.statusSubresource || isCrd(d)) {
        if (old.status === undefined) delete next.status;
        else next.status = clone(old.status);
      }
    }
    if (subresource === 'main') next.apiVersion = input.apiVersion;
    if (subresource === 'main') this.webhooks?.mutate('UPDATE', d, next, old, options.dryRun ?? false, (options.user ?? CONTROLLER_USER).username);
    this.admitCustom(d, next, old);
    next.apiVersion = old.apiVersion;
    next.kind = old.kind;
    const meta = next.metadata;
    // identity and server-owned fields never change through an update
    meta.name = old.metadata.name;
    if (d.namespaced) meta.namespace = old.metadata.namespace;
    else delete meta.namespace;
    meta.uid = old.metadata.uid;
    meta.creationTimestamp = old.metadata.creationTimestamp;
    if (old.metadata.deletionTimestamp) {
      meta.deletionTimestamp = old.metadata.deletionTimestamp;
      meta.deletionGracePeriodSeconds = old.metadata.deletionGracePeriodSeconds;
      const added = (meta.finalizers ?? []).filter((f) => !(old.metadata.finalizers ?? []).includes(f));
      if (added.length)
        throw invalid(d.kind, d.group, name, [forbiddenField('metadata.finalizers', 'no new finalizers can be added if the object is being deleted, found new finalizers ' + JSON.stringify(added))]);
    } else {
      delete meta.deletionTimestamp;
      delete meta.deletionGracePeriodSeconds;
    }
    meta.generation = old.metadata.generation ?? 1;
    if (specChanged(old, next, d.statusSubresource || isCrd(d))) meta.generation += 1;
    if (!keepManagedFields && options.fieldManager) recordUpdate(old, next, options.fieldManager, now(), subresource === 'status' ? 'status' : undefined);
    else if (!keepManagedFields && old.metadata.managedFields && meta.managedFields === undefined) meta.managedFields = old.metadata.managedFields;

    if (isCrd(d)) {
      if (subresource === 'main') {
        validateCrd(next);
        next.status = settledStatus(next, old, now());
      }
      validateStoredVersions(next);
    }
    if (d.group === '' && d.resource === 'namespaces' && old.metadata.deletionTimestamp) next.status = clone(old.status);
    if (isServices(d) && subresource === 'main') this.services.prepareUpdate(next, old);
    if (d.builtin && subresource === 'main') {
      const schemaErrors = schemaProblems(d, next);
      if (schemaErrors.length) throw invalid(d.kind, d.group, name, schemaErrors);
    }
    if (isJobs(d) && subresource === 'main') {
      const jobErrors = validateJobUpdate(next, old);
      if (jobErrors.length) throw invalid(d.kind, d.group, name, jobErrors);
    }
    if (d.group === 'apps' && subresource === 'main') {
      const appsErrors = validateAppsUpdate(d.resource, next, old);
      if (appsErrors.length) throw invalid(d.kind, d.group, name, appsErrors);
    }
    if (isBindings(d)) {
      defaultBinding(next);
      const bindingErrors = validateBindingUpdate(next, old, d.namespaced);
      if (bindingErrors.length) throw invalid(d.kind, d.group, name, bindingErrors);
    }
    if (d.group === '' && subresource === 'main') {
      const immutableErrors = d.resource === 'persistentvolumeclaims' ? validatePvcUpdate(next, old)
        : d.resource === 'secrets' ? [...validateDataUpdate('Secret', next, old), ...validateSecret(next)]
          : d.resource === 'configmaps' ? validateDataUpdate('ConfigMap', next, old) : [];
      if (immutableErrors.length) throw invalid(d.kind, d.group, name, immutableErrors);
    }

    if (isClaims(d) && subresource === 'main') this.admitClaimLimits(d, next);
    this.admit('UPDATE', d, next, old, options, subresource === 'status' ? 'status' : '');
    if (d.namespaced && !sameContent(old, next)) this.admitQuota('UPDATE', d, next, old, subresource === 'status' ? 'status' : '', options);
    if (sameContent(old, next)) return old;
    if (options.dryRun) return next;
    if (this.readyToVanish(d, next)) {
      this.remove(d, key);
      return next;
    }
    const stored = this.write(d, key, next, 'MODIFIED');
    if (isCrd(d)) this.defs.set(refKey(crdToDef(next)), crdToDef(next));
    return stored.obj;
  }

  /** Namespace finalize: the namespace controller's last step, through spec.finalizers. */
  finalizeNamespace(name: string, finalizers: string[]): KubeObject {
    const cur = this.getStored(NS_REF, name);
    if (!cur) throw notFound(NS_REF, name);
    const next = clone(cur.obj);
    next.spec = { ...(next.spec as object | undefined), finalizers };
    return this.updateWith(NS_REF, next, 'main', {}, false);
  }

  delete(ref: ResourceRef, name: string, namespace?: string, options: FullDeleteOptions = {}): void {
    this.deleteObject(ref, name, namespace, options);
  }

  /** Returns the object as it is after the request: marked for deletion (still there) or gone. */
  deleteObject(ref: ResourceRef, name: string, namespace?: string, options: FullDeleteOptions = {}): { object: KubeObject; gone: boolean } {
    const d = this.def(ref);
    const key = objectKey(d.namespaced ? namespace : undefined, name);
    const cur = this.store.get(d, key);
    if (!cur) throw notFound(d, name);
    const pre = options.preconditions;
    if (pre?.uid && pre.uid !== cur.obj.metadata.uid)
      throw new ApiError(409, 'Conflict', `Operation cannot be fulfilled on ${d.group ? `${d.resource}.${d.group}` : d.resource} "${name}": Precondition failed: UID in precondition: ${pre.uid}, UID in object meta: ${cur.obj.metadata.uid}`, { name, kind: d.resource });
    if (pre?.resourceVersion && pre.resourceVersion !== cur.obj.metadata.resourceVersion)
      throw new ApiError(409, 'Conflict', `Operation cannot be fulfilled on ${d.group ? `${d.resource}.${d.group}` : d.resource} "${name}": Precondition failed: ResourceVersion in precondition: ${pre.resourceVersion}, ResourceVersion in object meta: ${cur.obj.metadata.resourceVersion}`, { name, kind: d.resource });
    this.admit('DELETE', d, null, cur.obj, options);
    if (options.dryRun) return { object: clone(cur.obj), gone: false };
    const next = clone(cur.obj);
    const finalizers = [...(next.metadata.finalizers ?? [])];
    const policy = options.propagationPolicy;
    if (policy === 'Foreground' && !finalizers.includes('foregroundDeletion') && this.dependentsOf(next.metadata.uid ?? '').length > 0) finalizers.push('foregroundDeletion');
    if (policy === 'Orphan' && !finalizers.includes('orphan')) finalizers.push('orphan');
    const isNamespace = d.group === '' && d.resource === 'namespaces';
    const specFinalizers = isNamespace ? ((next.spec as { finalizers?: string[] } | undefined)?.finalizers ?? []) : [];
    if (finalizers.length === 0 && specFinalizers.length === 0) {
      const gone = this.remove(d, key);
      return { object: clone(gone?.obj ?? cur.obj), gone: true };
    }
    if (next.metadata.deletionTimestamp && sameList(finalizers, next.metadata.finalizers ?? [])) return { object: clone(cur.obj), gone: false };
    next.metadata.finalizers = finalizers;
    next.metadata.deletionTimestamp ??= now();
    next.metadata.deletionGracePeriodSeconds = 0;
    if (isNamespace) next.status = { ...(next.status as object | undefined), phase: 'Terminating' };
    const stored = this.write(d, key, next, 'MODIFIED');
    return { object: clone(stored.obj), gone: false };
  }

  // ---- internals ---------------------------------------------------------------------------------------------

  private write(d: ResourceDef, key: string, obj: KubeObject, type: 'ADDED' | 'MODIFIED'): Stored {
    const previous = this.store.get(d, key);
    const stored = this.store.put(d, key, obj, type);
    this.index(d, key, previous?.obj, stored.obj);
    return stored;
  }

  private remove(d: ResourceDef, key: string): Stored | undefined {
    const previous = this.store.get(d, key);
    const gone = this.store.remove(d, key);
    if (previous) this.index(d, key, previous.obj, undefined);
    if (gone && isCrd(d)) {
      const served = crdToDef(gone.obj);
      this.defs.delete(refKey(served));
      this.store.dropTable(served);
    }
    return gone;
  }

  private index(d: ResourceDef, key: string, before: KubeObject | undefined, after: KubeObject | undefined): void {
    if (isServices(d)) this.services.track(before, after);
    const link = `${refKey(d)}|${key}`;
    for (const o of before?.metadata.ownerReferences ?? []) this.dependents.get(o.uid)?.delete(link);
    if (before?.metadata.uid && !after) this.byUid.delete(before.metadata.uid);
    if (after?.metadata.uid) this.byUid.set(after.metadata.uid, { ref: { group: d.group, resource: d.resource }, key });
    for (const o of after?.metadata.ownerReferences ?? []) {
      let set = this.dependents.get(o.uid);
      if (!set) this.dependents.set(o.uid, (set = new Set()));
      set.add(link);
    }
  }

  private readyToVanish(d: ResourceDef, obj: KubeObject): boolean {
    if (!obj.metadata.deletionTimestamp || (obj.metadata.finalizers ?? []).length > 0) return false;
    if (d.group === '' && d.resource === 'namespaces') return ((obj.spec as { finalizers?: string[] } | undefined)?.finalizers ?? []).length === 0;
    return true;
  }

  private checkVersion(d: ResourceDef, obj: KubeObject): void {
    const v = versionOf(obj.apiVersion ?? '');
    const group = obj.apiVersion?.includes('/') ? obj.apiVersion.split('/')[0] : '';
    if (group !== d.group || !servedVersions(d).includes(v))
      throw new ApiError(400, 'BadRequest', `the API version in the data (${obj.apiVersion}) does not match the expected API version (${apiVersionOf(d.group, storageVersion(d))})`);
    if (obj.kind !== d.kind) throw new ApiError(400, 'BadRequest', `the kind in the data (${obj.kind}) does not match the expected kind (${d.kind})`);
  }

  /** a custom resource's body through its CRD's schema (crd-schema.ts), in the version the request used */
  private admitCustom(d: ResourceDef, obj: KubeObject, old: KubeObject | undefined): void {
    if (d.builtin) return;
    const crd = this.store.get(CRD_REF, objectKey(undefined, `${d.resource}.${d.group}`));
    if (crd) admitCustomObject(crd.obj, versionOf(obj.apiVersion ?? ''), obj, old);
  }

  private checkDefinitionAcceptsCreates(d: ResourceDef): void {
    if (d.builtin) return;
    const crd = this.store.get(CRD_REF, objectKey(undefined, `${d.resource}.${d.group}`));
    if (crd?.obj.metadata.deletionTimestamp)
      throw new ApiError(405, 'MethodNotAllowed', `create not allowed while custom resource definition is terminating`);
  }

  private checkNamespaceAcceptsContent(d: ResourceDef, namespace: string, name: string): void {
    const ns = this.store.get(NS_REF, objectKey(undefined, namespace));
    if (!ns) throw notFound(NS_REF, namespace);
    if (ns.obj.metadata.deletionTimestamp)
      throw forbidden(d, name, `unable to create new content in namespace ${namespace} because it is being terminated`, [
        { reason: 'NamespaceTerminating', message: `namespace ${namespace} is being terminated`, field: 'metadata.namespace' },
      ]);
  }

  private validateMeta(d: ResourceDef, obj: KubeObject): FieldError[] {
    const meta = obj.metadata;
    const errors: FieldError[] = [];
    if (!meta.name) errors.push(required('metadata.name', 'name or generateName is required'));
    else {
      const problem = nameProblem(meta.name, d.nameRule);
      if (problem) errors.push(invalidValue('metadata.name', meta.name, problem));
    }
    if (d.namespaced && !meta.namespace) errors.push(required('metadata.namespace'));
    for (const [k, v] of Object.entries(meta.labels ?? {})) {
      const kp = labelKeyProblem(k);
      if (kp) errors.push(invalidValue('metadata.labels', k, kp));
      const vp = typeof v === 'string' ? labelValueProblem(v) : 'must be a string';
      if (vp) errors.push(invalidValue('metadata.labels', v, vp));
    }
    for (const [k, v] of Object.entries(meta.annotations ?? {})) {
      const kp = labelKeyProblem(k);
      if (kp) errors.push(invalidValue('metadata.annotations', k, kp));
      if (typeof v !== 'string') errors.push(invalidValue(`metadata.annotations`, v, 'must be a string'));
    }
    // ValidateOwnerReferences (k8s.io/apimachinery pkg/api/validation/objectmeta.go): each reference names an owner
    // fully, and at most one is the controller
    let firstController = '';
    for (const ref of meta.ownerReferences ?? []) {
      const apiVersion = ref.apiVersion ?? '';
      const version = apiVersion.includes('/') ? apiVersion.slice(apiVersion.indexOf('/') + 1) : apiVersion;
      if (!version) errors.push(invalidValue('metadata.ownerReferences.apiVersion', apiVersion, 'version must not be empty'));
      if (!ref.kind) errors.push(invalidValue('metadata.ownerReferences.kind', ref.kind ?? '', 'kind must not be empty'));
      if (!ref.name) errors.push(invalidValue('metadata.ownerReferences.name', ref.name ?? '', 'name must not be empty'));
      if (!ref.uid) errors.push(invalidValue('metadata.ownerReferences.uid', ref.uid ?? '', 'uid must not be empty'));
      if (ref.controller === true) {
        const current = `${ref.kind}/${ref.name}`;
        if (firstController) errors.push(invalidValue('metadata.ownerReferences', meta.ownerReferences, `Only one reference can have Controller set to true. Found "true" in references for ${firstController} and ${current}`));
        else firstController = current;
      }
    }
    const size = Object.entries(meta.annotations ?? {}).reduce((n, [k, v]) => n + k.length + String(v).length, 0);
    if (size > 262144) errors.push({ field: 'metadata.annotations', type: 'FieldValueTooLong', text: 'Too long: must have at most 262144 bytes' });
    if (d.group === '' && (d.resource === 'secrets' || d.resource === 'configmaps')) {
      const bytes = Object.values((obj.data ?? {}) as Record<string, string>).reduce((n, v) => n + String(v).length, 0);
      if (bytes > 1024 * 1024 * (d.resource === 'secrets' ? 1.34 : 1)) errors.push({ field: 'data', type: 'FieldValueTooLong', text: 'Too long: must have at most 1048576 bytes' });
    }
    return errors;
  }

  private prepareForCreate(d: ResourceDef, obj: KubeObject): void {
    const k = refKey(d);
    const initial = INITIAL_STATUS[k];
    if (initial) obj.status = initial(obj);
    else if (d.statusSubresource) delete obj.status;
    if (k === '/namespaces') {
      obj.spec = { finalizers: ['kubernetes'] };
      obj.metadata.labels = { ...obj.metadata.labels, 'kubernetes.io/metadata.name': obj.metadata.name ?? '' };
    }
    if (k === '/secrets' && !obj.type) obj.type = 'Opaque';
  }

  /**
   * LimitRanger's validation of a claim's storage requests (limit-ranges.ts, pvcLimitRangeRefusal; kubernetes/kubernetes
   * plugin/pkg/admission/limitranger/admission.go, PersistentVolumeClaimValidateLimitFunc): a 403 with its sentence.
   */
  private admitClaimLimits(d: ResourceDef, claim: KubeObject): void {
    const why = pvcLimitRangeRefusal(claim, this.store.scan(LIMIT_RANGE_REF, claim.metadata.namespace).map((s) => s.obj));
    if (why) throw forbidden(d, claim.metadata.name ?? '', why);
  }

  /**
   * ResourceQuota admission (quota.ts): a 403 naming the quota, as the API server answers
   * (kubernetes/kubernetes staging/src/k8s.io/apiserver/pkg/admission/plugin/resourcequota/controller.go); a write
   * that is admitted and not a dry run charges the quotas it counts against, in their status.used, before it is stored.
   */
  private admitQuota(operation: 'CREATE' | 'UPDATE', d: ResourceDef, obj: KubeObject, old: KubeObject | null, subresource: string, options: WriteOptions): void {
    const namespace = obj.metadata.namespace ?? '';
    if (this.store.count(QUOTA_REF) === 0) return;
    const quotas = this.store.scan(QUOTA_REF, namespace).map((s) => s.obj);
    if (quotas.length === 0) return;
    const decision = checkQuota(quotas, { operation, group: d.group, resource: d.resource, subresource, object: obj, old });
    if (decision.refusal !== undefined) throw forbidden(d, obj.metadata.name ?? '', decision.refusal);
    if (options.dryRun) return;
    const quotaDef = this.def(QUOTA_REF);
    for (const quota of decision.charged) this.write(quotaDef, objectKey(namespace, quota.metadata.name ?? ''), clone(quota), 'MODIFIED');
  }

  private admit(op: Operation, d: ResourceDef, obj: KubeObject | null, old: KubeObject | null, options: WriteOptions, subResource = ''): void {
    if (obj && subResource === '') for (const check of this.writeChecks) check(d, obj, old, options.user);
    if (this.store.count(VAPB_REF) > 0) this.admitPolicies(op, d, obj, old, options, subResource);
    // validating webhooks after the policies (kubernetes pkg/kubeapiserver/options/plugins.go orders
    // ValidatingAdmissionPolicy before ValidatingAdmissionWebhook)
    if (obj && op !== 'DELETE' && op !== 'CONNECT' && subResource === '') this.webhooks?.validate(op, d, obj, old, options.dryRun ?? false, (options.user ?? CONTROLLER_USER).username);
  }

  private admitPolicies(op: Operation, d: ResourceDef, obj: KubeObject | null, old: KubeObject | null, options: WriteOptions, subResource: string): void {
    const source = {
      policies: () => this.store.scan(VAP_REF).map((s) => s.obj),
      bindings: () => this.store.scan(VAPB_REF).map((s) => s.obj),
    };
    const subject = (obj ?? old)!;
    const namespace = d.namespaced ? (subject.metadata.namespace ?? '') : '';
    admit(
      source,
      {
        operation: op,
        group: d.group,
        version: versionOf(subject.apiVersion),
        resource: d.resource,
        kind: d.kind,
        subResource,
        name: subject.metadata.name ?? '',
        namespace,
        object: obj,
        oldObject: old,
        user: options.user ?? CONTROLLER_USER,
        dryRun: options.dryRun ?? false,
      },
      d.namespaced,
      namespace ? this.store.get(NS_REF, objectKey(undefined, namespace))?.obj : undefined,
    );
  }
}

function forbiddenField(field: string, detail: string): FieldError {
  return { field, type: 'FieldValueForbidden', text: `Forbidden: ${detail}` };
}

function isBindings(d: ResourceDef): boolean {
  return d.group === 'rbac.authorization.k8s.io' && (d.resource === 'rolebindings' || d.resource === 'clusterrolebindings');
}

function isJobs(d: ResourceDef): boolean {
  return d.group === 'batch' && d.resource === 'jobs';
}

function isClaims(d: ResourceDef): boolean {
  return d.group === '' && d.resource === 'persistentvolumeclaims';
}

function isSecrets(d: ResourceDef): boolean {
  return d.group === '' && d.resource === 'secrets';
}

function isServices(d: ResourceDef): boolean {
  return d.group === '' && d.resource === 'services';
}

function isCrd(d: ResourceDef): boolean {
  return d.group === CRD_REF.group && d.resource === CRD_REF.resource;
}

export function versionOf(apiVersion: string): string {
  const i = apiVersion.indexOf('/');
  return i >= 0 ? apiVersion.slice(i + 1) : apiVersion;
}

// RFC 3339 to the second, as metav1.Time marshals (kubernetes apimachinery pkg/apis/meta/v1/time.go): the same text
// for every write within one second, so it is made once per second
let nowSecond = Number.NaN;
let nowText = '';
function now(): string {
  const second = Math.floor(Date.now() / 1000);
  if (second !== nowSecond) {
    nowSecond = second;
    nowText = new Date(second * 1000).toISOString().replace(/\.\d+Z$/, 'Z');
  }
  return nowText;
}

function sameList(a: string[], b: string[]): boolean {
  return a.length === b.length && a.every((x, i) => x === b[i]);
}

function withoutVolatile(o: KubeObject): string {
  const { metadata, ...rest } = o;
  const { resourceVersion: _rv, managedFields: _mf, ...m } = metadata;
  return JSON.stringify({ ...rest, metadata: m });
}

function sameContent(a: KubeObject, b: KubeObject): boolean {
  return withoutVolatile(a) === withoutVolatile(b) && JSON.stringify(a.metadata.managedFields ?? null) === JSON.stringify(b.metadata.managedFields ?? null);
}

/** generation counts changes to everything but metadata (and status, where status is its own subresource). */
function specChanged(a: KubeObject, b: KubeObject, statusSeparate: boolean): boolean {
  const strip = (o: KubeObject) => {
    const { metadata: _m, apiVersion: _a, kind: _k, ...rest } = o;
    if (statusSeparate) delete rest.status;
    return JSON.stringify(rest);
  };
  return strip(a) !== strip(b);
}

export { CRD_REF, NS_REF };
