// Who a request comes from, written from kubernetes/kubernetes:
// - bearer tokens: staging/src/k8s.io/apiserver/pkg/authentication/request/bearertoken/bearertoken.go ("Bearer
//   <token>", the scheme case-insensitive) against a static token file's users (staging/src/k8s.io/apiserver/
//   plugin/pkg/authenticator/token/tokenfile), every authenticated user also in system:authenticated
//   (staging/src/k8s.io/apiserver/pkg/authentication/group/authenticated_group_adder.go);
// - legacy service-account tokens: pkg/serviceaccount/legacy.go (the token of a kubernetes.io/service-account-token
//   Secret the token controller filled, valid while the Secret and its ServiceAccount, with the uid the Secret names,
//   exist) as system:serviceaccount:<ns>:<name> in system:serviceaccounts and system:serviceaccounts:<ns>
//   (staging/src/k8s.io/apiserver/pkg/authentication/serviceaccount/util.go, MakeUsername, MakeGroupNames);
// - impersonation: staging/src/k8s.io/apiserver/pkg/endpoints/filters/impersonation.go (WithImpersonation,
//   buildImpersonationRequests): Impersonate-User (a service account's username impersonates that serviceaccount),
//   Impersonate-Group, Impersonate-Uid and Impersonate-Extra-<key>, each authorized as the `impersonate` verb on
//   users, groups, serviceaccounts (in their namespace), uids or userextras/<key>; a service account impersonated
//   without groups gets its fixed groups; system:authenticated is added unless a group given is it or
//   system:unauthenticated; groups, uid or extras without a user are refused.
import { randomBytes } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import type { UserInfo } from '../cluster.ts';
import { ApiError } from '../errors.ts';
import type { ObjectStore } from '../store.ts';
import { forbiddenFor, serviceAccountUsername, splitServiceAccountUsername, type RbacAuthorizer } from './authorizer.ts';
import type { Attributes } from './rules.ts';

export const AUTHENTICATED = 'system:authenticated';
export const UNAUTHENTICATED = 'system:unauthenticated';
const TOKEN_TYPE = 'kubernetes.io/service-account-token';

/** a user a test names: groups besides system:authenticated, which every authenticated user has */
export interface UserSpec {
  username: string;
  groups?: string[];
}

function withAuthenticated(groups: readonly string[]): string[] {
  return groups.includes(AUTHENTICATED) ? [...groups] : [...groups, AUTHENTICATED];
}

/** serviceaccount.MakeGroupNames */
export function serviceAccountGroups(namespace: string): string[] {
  return ['system:serviceaccounts', `system:serviceaccounts:${namespace}`];
}

export class TokenAuthenticator {
  private readonly tokens = new Map<string, UserInfo>();

  constructor(private readonly store: ObjectStore) {}

  /** a static token for `user` (what a --token-auth-file line gives); returns the token */
  issue(user: UserSpec, token = randomBytes(24).toString('base64url')): string {
    this.tokens.set(token, { username: user.username, groups: [...(user.groups ?? [])] });
    return token;
  }

  /** the user a request's Authorization header authenticates, or undefined (401) */
  authenticate(header: string | undefined): UserInfo | undefined {
    const m = /^bearer\s+(\S+)\s*$/i.exec(header ?? '');
    if (!m) return undefined;
    const token = m[1]!;
    const user = this.tokens.get(token) ?? this.serviceAccount(token);
    return user ? { username: user.username, groups: withAuthenticated(user.groups) } : undefined;
  }

  private serviceAccount(token: string): UserInfo | undefined {
    for (const s of this.store.scan({ group: '', resource: 'secrets' })) {
      const secret = s.obj as { type?: string; data?: Record<string, string> } & typeof s.obj;
      if (secret.type !== TOKEN_TYPE || !secret.data?.token) continue;
      if (Buffer.from(secret.data.token, 'base64').toString('utf8') !== token) continue;
      if (secret.metadata.deletionTimestamp) return undefined;
      const namespace = secret.metadata.namespace ?? '';
      const name = secret.metadata.annotations?.['kubernetes.io/service-account.name'] ?? '';
      const uid = secret.metadata.annotations?.['kubernetes.io/service-account.uid'];
      const account = this.store.get({ group: '', resource: 'serviceaccounts' }, `${namespace}/${name}`)?.obj;
      if (!account || account.metadata.deletionTimestamp || (uid && uid !== account.metadata.uid)) return undefined;
      return { username: serviceAccountUsername(namespace, name), groups: serviceAccountGroups(namespace) };
    }
    return undefined;
  }
}

interface ImpersonationRequest {
  kind: 'User' | 'ServiceAccount' | 'Group' | 'UID' | 'UserExtra';
  namespace: string;
  name: string;
  fieldPath: string;
}

/** Go's %v of a []ObjectReference, as the refusal of groups without a user prints it */
function goObjectReferences(requests: ImpersonationRequest[]): string {
  const apiVersion = (r: ImpersonationRequest) => (r.kind === 'UID' || r.kind === 'UserExtra' ? 'authentication.k8s.io/v1' : '');
  return `[${requests.map((r) => `{${[r.kind, r.namespace, r.name, '', apiVersion(r), '', r.fieldPath].join(' ')}}`).join(' ')}]`;
}

const headerValues = (headers: IncomingHttpHeaders, name: string): string[] => {
  const v = headers[name];
  if (v === undefined) return [];
  return (Array.isArray(v) ? v : v.split(',')).map((x) => x.trim()).filter((x) => x !== '');
};

/**
 * The user a request acts as: `requestor` itself without impersonation headers, else the impersonated user once
 * each part of it is authorized. Throws the 403 of the first part refused, or the 500 of groups without a user.
 */
export function impersonate(authz: RbacAuthorizer, requestor: UserInfo, headers: IncomingHttpHeaders, uri: string): UserInfo {
  const requests: ImpersonationRequest[] = [];
  const requestedUser = headerValues(headers, 'impersonate-user')[0] ?? '';
  if (requestedUser) {
    const sa = splitServiceAccountUsername(requestedUser);
    requests.push(sa ? { kind: 'ServiceAccount', namespace: sa.namespace, name: sa.name, fieldPath: '' } : { kind: 'User', namespace: '', name: requestedUser, fieldPath: '' });
  }
  const groupHeaders = headerValues(headers, 'impersonate-group');
  for (const group of groupHeaders) requests.push({ kind: 'Group', namespace: '', name: group, fieldPath: '' });
  let hasExtra = false;
  for (const [header, value] of Object.entries(headers)) {
    if (!header.startsWith('impersonate-extra-')) continue;
    hasExtra = true;
    const key = decodeURIComponent(header.slice('impersonate-extra-'.length));
    for (const v of Array.isArray(value) ? value : [value ?? '']) requests.push({ kind: 'UserExtra', namespace: '', name: v, fieldPath: key });
  }
  const uid = headerValues(headers, 'impersonate-uid')[0] ?? '';
  if (uid) requests.push({ kind: 'UID', namespace: '', name: uid, fieldPath: '' });
  if (requests.length === 0) return requestor;
  if ((groupHeaders.length || hasExtra || uid) && !requestedUser)
    throw new ApiError(500, 'InternalError', `Internal Server Error: ${JSON.stringify(uri)}: requested ${goObjectReferences(requests)} without impersonating a user`);

  let username = '';
  let groups: string[] = [];
  for (const r of requests) {
    const attrs: Attributes = { user: requestor, verb: 'impersonate', isResourceRequest: true, path: '', apiGroup: '', namespace: r.namespace, resource: '', subresource: '', name: r.name };
    switch (r.kind) {
      case 'ServiceAccount':
        attrs.resource = 'serviceaccounts';
        username = serviceAccountUsername(r.namespace, r.name);
        if (!groupHeaders.length) groups = serviceAccountGroups(r.namespace);
        break;
      case 'User':
        attrs.resource = 'users';
        username = r.name;
        break;
      case 'Group':
        attrs.resource = 'groups';
        groups.push(r.name);
        break;
      case 'UserExtra':
        attrs.apiGroup = 'authentication.k8s.io';
        attrs.resource = 'userextras';
        attrs.subresource = r.fieldPath;
        break;
      case 'UID':
        attrs.apiGroup = 'authentication.k8s.io';
        attrs.resource = 'uids';
        break;
    }
    const decision = authz.authorize(attrs);
    if (!decision.allowed) throw forbiddenFor(attrs, decision.reason);
  }
  if (username !== 'system:anonymous') {
    if (!groups.some((g) => g === AUTHENTICATED || g === UNAUTHENTICATED)) groups.push(AUTHENTICATED);
  } else if (!groups.includes(UNAUTHENTICATED)) groups.push(UNAUTHENTICATED);
  return { username, groups };
}
