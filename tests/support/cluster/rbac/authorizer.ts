// The RBAC authorizer and the escalation checks of RBAC's own writes, written from kubernetes/kubernetes:
// - the privileged group: pkg/kubeapiserver/authorizer/config.go puts authorizerfactory.NewPrivilegedGroups
//   ("system:masters", staging/src/k8s.io/apiserver/pkg/authorization/authorizerfactory/builtin.go) before RBAC, so a
//   member of system:masters is allowed everything without a rule being read (bootstrappolicy/policy.go binds the same
//   group to cluster-admin);
// - which rules apply to a user: pkg/registry/rbac/validation/rule.go (VisitRulesFor: every ClusterRoleBinding, then
//   the RoleBindings of the request's namespace when it has one, so that a list or watch across namespaces needs a
//   ClusterRoleBinding; appliesToUser: User by name, Group by membership, ServiceAccount by
//   system:serviceaccount:<ns>:<name> with a RoleBinding's own namespace as the default; GetRoleReferenceRules: a Role
//   of the binding's namespace or a ClusterRole, a missing one is an error that only shows in the refusal's reason);
// - the decision: plugin/pkg/auth/authorizer/rbac/rbac.go (Authorize, "RBAC: <errors>" as the reason of a refusal);
// - the 403: staging/src/k8s.io/apiserver/pkg/endpoints/handlers/responsewriters/errors.go (forbiddenMessage,
//   Forbidden) with staging/src/k8s.io/apimachinery/pkg/api/errors/errors.go (NewForbidden);
// - escalation: pkg/registry/rbac/escalation_check.go (EscalationAllowed: system:masters; RoleEscalationAuthorized:
//   the `escalate` verb; BindingAuthorized: the `bind` verb on the referenced role), pkg/registry/rbac/validation/
//   rule.go (ConfirmNoEscalation and its message), pkg/registry/rbac/{role,clusterrole,rolebinding,clusterrolebinding}/
//   policybased/storage.go (which check each write gets; an update that only changes ownerReferences or finalizers is
//   let through, pkg/registry/rbac/helpers.go IsOnlyMutatingGCFields; a ClusterRole with an aggregationRule needs
//   full authority).
import type { KubeObject } from '../../../../src/kube/types.ts';
import type { UserInfo } from '../cluster.ts';
import { ApiError, notFound } from '../errors.ts';
import type { ResourceDef } from '../resources.ts';
import type { ObjectStore } from '../store.ts';
import { compactRules, compactString, covers, goQuotedList, ruleAllows, type Attributes, type PolicyRule } from './rules.ts';

export const RBAC_GROUP = 'rbac.authorization.k8s.io';
export const SYSTEM_MASTERS = 'system:masters';
const ref = (resource: string) => ({ group: RBAC_GROUP, resource });
export const RBAC_REFS = {
  roles: ref('roles'),
  roleBindings: ref('rolebindings'),
  clusterRoles: ref('clusterroles'),
  clusterRoleBindings: ref('clusterrolebindings'),
};

interface Subject {
  kind?: string;
  name?: string;
  namespace?: string;
}

interface RoleRef {
  apiGroup?: string;
  kind?: string;
  name?: string;
}

const SA_PREFIX = 'system:serviceaccount:';

/** serviceaccount.MakeUsername (staging/src/k8s.io/apiserver/pkg/authentication/serviceaccount/util.go) */
export function serviceAccountUsername(namespace: string, name: string): string {
  return `${SA_PREFIX}${namespace}:${name}`;
}

/** serviceaccount.SplitUsername: the namespace and name of a service account's username, or undefined */
export function splitServiceAccountUsername(username: string): { namespace: string; name: string } | undefined {
  if (!username.startsWith(SA_PREFIX)) return undefined;
  const parts = username.slice(SA_PREFIX.length).split(':');
  if (parts.length !== 2 || !parts[0] || !parts[1]) return undefined;
  return { namespace: parts[0], name: parts[1] };
}

function appliesTo(user: UserInfo, subjects: Subject[] | undefined, namespace: string): boolean {
  return (subjects ?? []).some((s) => {
    switch (s.kind) {
      case 'User':
        return user.username === s.name;
      case 'Group':
        return user.groups.includes(s.name ?? '');
      case 'ServiceAccount': {
        const ns = s.namespace || namespace;
        return ns !== '' && user.username === serviceAccountUsername(ns, s.name ?? '');
      }
      default:
        return false;
    }
  });
}

/** the lister's NotFound: singular lower-case kind (client-go's generated listers) */
function listerNotFound(kind: string, name: string): Error {
  return new Error(`${kind}.${RBAC_GROUP} "${name}" not found`);
}

export class RbacAuthorizer {
  constructor(private readonly store: ObjectStore) {}

  roleReferenceRules(roleRef: RoleRef | undefined, bindingNamespace: string): PolicyRule[] {
    const name = roleRef?.name ?? '';
    if (roleRef?.kind === 'Role') {
      const role = this.store.get(RBAC_REFS.roles, `${bindingNamespace}/${name}`)?.obj;
      if (!role) throw listerNotFound('role', name);
      return ((role as { rules?: PolicyRule[] }).rules) ?? [];
    }
    if (roleRef?.kind === 'ClusterRole') {
      const role = this.store.get(RBAC_REFS.clusterRoles, `/${name}`)?.obj;
      if (!role) throw listerNotFound('clusterrole', name);
      return ((role as { rules?: PolicyRule[] }).rules) ?? [];
    }
    throw new Error(`unsupported role reference kind: "${roleRef?.kind ?? ''}"`);
  }

  /** VisitRulesFor: the visitor returns false to stop */
  visitRulesFor(user: UserInfo, namespace: string, visit: (rule: PolicyRule | undefined, error: Error | undefined) => boolean): void {
    for (const s of this.store.scan(RBAC_REFS.clusterRoleBindings)) {
      const b = s.obj as KubeObject & { subjects?: Subject[]; roleRef?: RoleRef };
      if (!appliesTo(user, b.subjects, '')) continue;
      let rules: PolicyRule[];
      try {
        rules = this.roleReferenceRules(b.roleRef, '');
      } catch (e) {
        if (!visit(undefined, e as Error)) return;
        continue;
      }
      for (const r of rules) if (!visit(r, undefined)) return;
    }
    if (!namespace) return;
    for (const s of this.store.scan(RBAC_REFS.roleBindings, namespace)) {
      const b = s.obj as KubeObject & { subjects?: Subject[]; roleRef?: RoleRef };
      if (!appliesTo(user, b.subjects, namespace)) continue;
      let rules: PolicyRule[];
      try {
        rules = this.roleReferenceRules(b.roleRef, namespace);
      } catch (e) {
        if (!visit(undefined, e as Error)) return;
        continue;
      }
      for (const r of rules) if (!visit(r, undefined)) return;
    }
  }

  /** RulesFor: every rule the user holds in `namespace` ('' = cluster-wide only), and the errors met on the way */
  rulesFor(user: UserInfo, namespace: string): { rules: PolicyRule[]; errors: Error[] } {
    const rules: PolicyRule[] = [];
    const errors: Error[] = [];
    this.visitRulesFor(user, namespace, (rule, error) => {
      if (rule) rules.push(rule);
      if (error) errors.push(error);
      return true;
    });
    return { rules, errors };
  }

  /** the union authorizer: system:masters first, then RBAC; `reason` is RBAC's on a refusal */
  authorize(a: Attributes): { allowed: boolean; reason: string } {
    if (a.user.groups.includes(SYSTEM_MASTERS)) return { allowed: true, reason: '' };
    let allowed = false;
    const errors: string[] = [];
    this.visitRulesFor(a.user, a.namespace, (rule, error) => {
      if (rule && ruleAllows(a, rule)) {
        allowed = true;
        return false;
      }
      if (error && !errors.includes(error.message)) errors.push(error.message);
      return true;
    });
    if (allowed) return { allowed, reason: '' };
    // utilerrors.NewAggregate(...).Error(): one error alone, several in brackets
    const aggregate = errors.length === 1 ? errors[0]! : `[${errors.join(', ')}]`;
    return { allowed: false, reason: errors.length ? `RBAC: ${aggregate}` : '' };
  }
}

/** responsewriters.forbiddenMessage */
export function forbiddenMessage(a: Attributes): string {
  if (!a.isResourceRequest) return `User "${a.user.username}" cannot ${a.verb} path "${a.path}"`;
  const resource = a.subresource ? `${a.resource}/${a.subresource}` : a.resource;
  if (a.namespace) return `User "${a.user.username}" cannot ${a.verb} resource "${resource}" in API group "${a.apiGroup}" in the namespace "${a.namespace}"`;
  return `User "${a.user.username}" cannot ${a.verb} resource "${resource}" in API group "${a.apiGroup}" at the cluster scope`;
}

/** apierrors.NewForbidden(GroupResource, name, err) */
export function newForbidden(group: string, resource: string, name: string, message: string): ApiError {
  const qualified = group ? `${resource}.${group}` : resource;
  const text = !resource ? `forbidden: ${message}` : name ? `${qualified} "${name}" is forbidden: ${message}` : `${qualified} is forbidden: ${message}`;
  const details: { name?: string; group?: string; kind?: string } = {};
  if (name) details.name = name;
  if (group) details.group = group;
  if (resource) details.kind = resource;
  return new ApiError(403, 'Forbidden', text, details);
}

/** responsewriters.Forbidden: the 403 for a request the authorizer did not allow */
export function forbiddenFor(a: Attributes, reason: string): ApiError {
  const message = forbiddenMessage(a);
  return newForbidden(a.apiGroup, a.resource, a.name, reason ? `${message}: ${reason}` : message);
}

// ---- escalation --------------------------------------------------------------------------------------------------

const FULL_AUTHORITY: PolicyRule[] = [
  { verbs: ['*'], apiGroups: ['*'], resources: ['*'] },
  { verbs: ['*'], nonResourceURLs: ['*'] },
];

function attributes(user: UserInfo, verb: string, resource: string, name: string, namespace: string): Attributes {
  return { user, verb, isResourceRequest: true, path: '', apiGroup: RBAC_GROUP, namespace, resource, subresource: '', name };
}

/** ConfirmNoEscalation: the user holds every rule they grant, in the namespace of the write */
function confirmNoEscalation(authz: RbacAuthorizer, user: UserInfo, namespace: string, rules: PolicyRule[]): string | undefined {
  const owner = authz.rulesFor(user, namespace);
  const { covered, missing } = covers(owner.rules, rules);
  if (covered) return undefined;
  const descriptions = [...new Set(compactRules(missing).map(compactString))].sort();
  let msg = `user "${user.username}" (groups=${goQuotedList(user.groups)}) is attempting to grant RBAC permissions not currently held:\n${descriptions.join('\n')}`;
  if (owner.errors.length) msg += `; resolution errors: [${owner.errors.map((e) => e.message).join(' ')}]`;
  return msg;
}

/** IsOnlyMutatingGCFields: old and new differ at most in ownerReferences and finalizers (and what the server sets) */
function onlyGcFields(next: KubeObject, old: KubeObject): boolean {
  const strip = (o: KubeObject) => {
    const { ownerReferences: _o, finalizers: _f, managedFields: _m, resourceVersion: _r, generation: _g, ...meta } = o.metadata;
    return JSON.stringify({ ...o, apiVersion: undefined, metadata: meta });
  };
  return strip(next) === strip(old);
}

/**
 * The policybased storages' checks for a write of a Role, ClusterRole, RoleBinding or ClusterRoleBinding by `user`;
 * throws the 403 (or the 404 of a binding's missing role) a real server answers. A write with no user is an in-process
 * controller's, which writes with its own privileged identity, and is not checked.
 */
export function checkRbacWrite(authz: RbacAuthorizer, def: ResourceDef, obj: KubeObject, old: KubeObject | null, user: UserInfo | undefined): void {
  if (def.group !== RBAC_GROUP || !user) return;
  if (user.groups.includes(SYSTEM_MASTERS)) return; // EscalationAllowed
  if (old && onlyGcFields(obj, old)) return;
  const name = obj.metadata.name ?? '';
  const namespace = def.namespaced ? (obj.metadata.namespace ?? '') : '';
  const refuse = (message: string) => newForbidden(RBAC_GROUP, def.resource, name, message);
  if (def.resource === 'roles' || def.resource === 'clusterroles') {
    if (authz.authorize(attributes(user, 'escalate', def.resource, name, namespace)).allowed) return; // RoleEscalationAuthorized
    const why = confirmNoEscalation(authz, user, namespace, ((obj as { rules?: PolicyRule[] }).rules) ?? []);
    if (why) throw refuse(why);
    if (def.resource === 'clusterroles' && (obj as { aggregationRule?: unknown }).aggregationRule && confirmNoEscalation(authz, user, namespace, FULL_AUTHORITY))
      throw refuse('must have cluster-admin privileges to use the aggregationRule');
    return;
  }
  if (def.resource === 'rolebindings' || def.resource === 'clusterrolebindings') {
    const roleRef = ((obj as { roleRef?: RoleRef }).roleRef) ?? {};
    const resource = roleRef.kind === 'ClusterRole' ? 'clusterroles' : roleRef.kind === 'Role' ? 'roles' : undefined;
    // BindingAuthorized: the bind verb on the referenced role, in the binding's namespace
    if (resource && authz.authorize({ ...attributes(user, 'bind', resource, roleRef.name ?? '', namespace), apiGroup: roleRef.apiGroup ?? '' }).allowed) return;
    // GetRoleReferenceRules through the registry: a missing role is a 404 of its own
    let rules: PolicyRule[];
    try {
      rules = authz.roleReferenceRules(roleRef, namespace);
    } catch {
      if (resource) throw notFound({ group: RBAC_GROUP, resource }, roleRef.name ?? '');
      throw new ApiError(500, 'InternalError', `Internal error occurred: unsupported role reference kind: "${roleRef.kind ?? ''}"`);
    }
    const why = confirmNoEscalation(authz, user, namespace, rules);
    if (why) throw refuse(why);
  }
}
