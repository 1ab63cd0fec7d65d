// A Kubeflow profile owner through @kubernetes/client-node over TLS, against the embedded API server's authentication
// and RBAC. Every expectation is written from upstream, never from the product (src/):
// - the owner is bound by the profile controller's RoleBinding namespaceAdmin to kubeflow-admin in their namespace
//   (kubeflow/kubeflow components/profile-controller/controllers/profile_controller.go), which aggregates
//   kubeflow-edit, kubeflow-view and kubeflow-kubernetes-* (canonical/kubeflow-roles-operator
//   src/manifests/kubeflow-roles.yaml): read and write Secrets, Pods, Jobs, pods/log, RoleBindings in that namespace;
// - the 403 sentences: staging/src/k8s.io/apiserver/pkg/endpoints/handlers/responsewriters/errors.go
//   (forbiddenMessage) inside apimachinery's NewForbidden ("<resource> is forbidden: ...");
// - the escalation refusal: pkg/registry/rbac/validation/rule.go (ConfirmNoEscalation), with the missing rules as
//   pkg/apis/rbac/v1/helpers.go CompactString prints them;
// - impersonation: staging/src/k8s.io/apiserver/pkg/endpoints/filters/impersonation.go;
// - aggregation: pkg/controller/clusterroleaggregation/clusterroleaggregation_controller.go.
import { expect } from 'chai';
import * as k8s from '@kubernetes/client-node';
import { request as httpsRequest } from 'node:https';
import { startCluster, type RunningCluster } from '../index.ts';

interface Status { code: number; reason: string; message: string; details?: Record<string, unknown> }

async function refusal(p: Promise<unknown>): Promise<Status> {
  try {
    await p;
  } catch (e) {
    const body = (e as k8s.ApiException<string>).body;
    return (typeof body === 'string' ? JSON.parse(body) : body) as Status;
  }
  throw new Error('expected the API server to refuse the request');
}

const ALICE = 'alice@example.com';
const BOB = 'bob@example.com';

describe('a Kubeflow profile owner against the embedded API server\'s RBAC (client-node over TLS)', function () {
  let c: RunningCluster;
  let admin: k8s.KubeConfig;
  let alice: k8s.KubeConfig;

  const as = (kc: k8s.KubeConfig) => ({
    core: kc.makeApiClient(k8s.CoreV1Api),
    batch: kc.makeApiClient(k8s.BatchV1Api),
    rbac: kc.makeApiClient(k8s.RbacAuthorizationV1Api),
  });

  /** resolves once `done()` holds, tested at once and after every change the store makes (a sign, not a timer) */
  function until(done: () => boolean, what: string): Promise<void> {
    return new Promise((resolve, reject) => {
      if (done()) return resolve();
      const timer = setTimeout(() => {
        unsubscribe();
        reject(new Error(`timed out waiting for ${what}`));
      }, 10_000);
      const unsubscribe = c.cluster.store.subscribeRaw(() => {
        if (!done()) return;
        clearTimeout(timer);
        unsubscribe();
        resolve();
      });
    });
  }

  /** whether RBAC lets `username` (in system:authenticated) do `verb` on a core resource in `namespace` */
  const allowed = (username: string, verb: string, resource: string, namespace: string, apiGroup = '') =>
    c.rbac.authorize({ user: { username, groups: ['system:authenticated'] }, verb, isResourceRequest: true, path: '', apiGroup, namespace, resource, subresource: '', name: '' }).allowed;

  /** a raw HTTPS request with the cluster's CA, for what client-node does not send (impersonation headers, watches) */
  function raw(path: string, token: string, headers: Record<string, string> = {}): Promise<{ http: number; body: string }> {
    return new Promise((resolve, reject) => {
      const req = httpsRequest(`${c.server}${path}`, { ca: c.caCert, headers: { Authorization: `Bearer ${token}`, ...headers } }, (res) => {
        let body = '';
        res.on('data', (d: Buffer) => (body += d.toString()));
        res.on('end', () => resolve({ http: res.statusCode ?? 0, body }));
      });
      req.on('error', reject);
      req.end();
    });
  }

  before(async () => {
    c = await startCluster({});
    admin = new k8s.KubeConfig();
    admin.loadFromFile(c.kubeconfigPath);
    const objects = k8s.KubernetesObjectApi.makeApiClient(admin);
    for (const [name, owner] of [['alice', ALICE], ['bob', BOB]] as const)
      await objects.create({ apiVersion: 'kubeflow.org/v1', kind: 'Profile', metadata: { name }, spec: { owner: { kind: 'User', name: owner } } } as k8s.KubernetesObject);
    // the profile controller's namespaceAdmin binding, and the aggregation controller's rules behind kubeflow-admin
    await until(() => allowed(ALICE, 'list', 'secrets', 'alice') && allowed(BOB, 'list', 'secrets', 'bob'), 'the owners\' namespaceAdmin bindings to an aggregated kubeflow-admin');
    const core = as(admin).core;
    for (const namespace of ['alice', 'bob', 'kubeflow'])
      await core.createNamespacedSecret({ namespace, body: { metadata: { name: `${namespace}-secret` }, stringData: { key: 'value' } } });
    await core.createNamespacedPod({ namespace: 'alice', body: { metadata: { name: 'notebook' }, spec: { containers: [{ name: 'main', image: 'busybox' }] } } });
    alice = new k8s.KubeConfig();
    alice.loadFromString(c.kubeconfigFor({ username: ALICE }, 'alice'));
  });
  after(async () => c.stop());

  it('reads Secrets, Pods and Jobs in the owner\'s own namespace, and reaches pods/log past authorization', async () => {
    const { core, batch } = as(alice);
    expect((await core.listNamespacedSecret({ namespace: 'alice' })).items.map((s) => s.metadata?.name)).to.include('alice-secret');
    expect((await core.readNamespacedSecret({ namespace: 'alice', name: 'alice-secret' })).data?.key).to.equal(Buffer.from('value').toString('base64'));
    expect((await core.listNamespacedPod({ namespace: 'alice' })).items.map((p) => p.metadata?.name)).to.deep.equal(['notebook']);
    expect((await batch.listNamespacedJob({ namespace: 'alice' })).items).to.be.an('array');
    // no kubelet runs here: the log endpoint answers the kubelet's 400 for a container not started, which a request
    // RBAC refused would never reach (authorization runs before the handler)
    const log = await refusal(core.readNamespacedPodLog({ namespace: 'alice', name: 'notebook' }));
    expect(log.code).to.equal(400);
    expect(log.message).to.equal('container "main" in pod "notebook" is waiting to start: ContainerCreating');
    // get on namespaces at namespace scope is the owner's own namespace only
    expect((await core.readNamespace({ name: 'alice' })).metadata?.name).to.equal('alice');
    expect((await refusal(core.readNamespace({ name: 'bob' }))).message).to.equal(`namespaces "bob" is forbidden: User "${ALICE}" cannot get resource "namespaces" in API group "" in the namespace "bob"`);
  });

  it('refuses Secrets of another profile and of the model namespace with the upstream 403 Status', async () => {
    const { core } = as(alice);
    for (const namespace of ['bob', 'kubeflow']) {
      const s = await refusal(core.listNamespacedSecret({ namespace }));
      expect(s).to.deep.include({ code: 403, reason: 'Forbidden', message: `secrets is forbidden: User "${ALICE}" cannot list resource "secrets" in API group "" in the namespace "${namespace}"` });
      expect(s.details).to.deep.equal({ kind: 'secrets' });
      const one = await refusal(core.readNamespacedSecret({ namespace, name: `${namespace}-secret` }));
      expect(one.message).to.equal(`secrets "${namespace}-secret" is forbidden: User "${ALICE}" cannot get resource "secrets" in API group "" in the namespace "${namespace}"`);
      expect(one.details).to.deep.equal({ name: `${namespace}-secret`, kind: 'secrets' });
    }
  });

  it('refuses listing and watching Secrets across namespaces: that needs cluster scope', async () => {
    const s = await refusal(as(alice).core.listSecretForAllNamespaces());
    expect(s).to.deep.include({ code: 403, message: `secrets is forbidden: User "${ALICE}" cannot list resource "secrets" in API group "" at the cluster scope` });
    const token = c.issueToken({ username: ALICE });
    const watch = await raw('/api/v1/secrets?watch=true', token);
    expect(watch.http).to.equal(403);
    expect(JSON.parse(watch.body).message).to.equal(`secrets is forbidden: User "${ALICE}" cannot watch resource "secrets" in API group "" at the cluster scope`);
    // a watch in the owner's namespace is allowed: its first event is the Secret there
    const own = await new Promise<string>((resolve, reject) => {
      const req = httpsRequest(`${c.server}/api/v1/namespaces/alice/secrets?watch=true`, { ca: c.caCert, headers: { Authorization: `Bearer ${token}` } }, (res) => {
        res.once('data', (d: Buffer) => {
          resolve(`${res.statusCode} ${d.toString().split('\n')[0]}`);
          req.destroy();
        });
      });
      req.on('error', reject);
      req.end();
    });
    expect(own).to.match(/^200 \{"type":"ADDED","object":\{.*"name":"alice-secret"/);
  });

  it('creates a Job in the owner\'s namespace, and none in another', async () => {
    const job = (namespace: string) => ({ namespace, body: { metadata: { name: 'probe' }, spec: { template: { spec: { restartPolicy: 'Never', containers: [{ name: 'main', image: 'busybox' }] } } } } });
    const created = await as(alice).batch.createNamespacedJob(job('alice'));
    expect(created.metadata?.uid).to.be.a('string');
    expect((await refusal(as(alice).batch.createNamespacedJob(job('bob')))).message)
      .to.equal(`jobs.batch is forbidden: User "${ALICE}" cannot create resource "jobs" in API group "batch" in the namespace "bob"`);
  });

  it('refuses to let the owner bind cluster-admin in their namespace, and lets them share what they hold', async () => {
    const binding = (name: string, role: string, kind = 'ClusterRole') => ({
      namespace: 'alice',
      body: { metadata: { name }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind, name: role }, subjects: [{ kind: 'User', name: 'mallory@example.com', apiGroup: 'rbac.authorization.k8s.io' }] },
    });
    const s = await refusal(as(alice).rbac.createNamespacedRoleBinding(binding('escalate', 'cluster-admin')));
    expect(s).to.deep.include({
      code: 403,
      reason: 'Forbidden',
      message: `rolebindings.rbac.authorization.k8s.io "escalate" is forbidden: user "${ALICE}" (groups=["system:authenticated"]) is attempting to grant RBAC permissions not currently held:\n{APIGroups:["*"], Resources:["*"], Verbs:["*"]}\n{NonResourceURLs:["*"], Verbs:["*"]}`,
    });
    expect(s.details).to.deep.equal({ name: 'escalate', group: 'rbac.authorization.k8s.io', kind: 'rolebindings' });
    // kubeflow-edit is part of kubeflow-admin, which the owner holds in alice: a contributor binding as KFAM makes it
    const shared = await as(alice).rbac.createNamespacedRoleBinding(binding('contributor', 'kubeflow-edit'));
    expect(shared.roleRef.name).to.equal('kubeflow-edit');
    // a Role of the namespace with rules the owner holds is theirs to make; one with more is refused
    const role = (name: string, rules: k8s.V1PolicyRule[]) => ({ namespace: 'alice', body: { metadata: { name }, rules } });
    await as(alice).rbac.createNamespacedRole(role('secret-reader', [{ apiGroups: [''], resources: ['secrets'], verbs: ['get', 'list'] }]));
    const wider = await refusal(as(alice).rbac.createNamespacedRole(role('node-reader', [{ apiGroups: [''], resources: ['nodes', 'secrets'], verbs: ['get', 'list'] }])));
    expect(wider.message).to.equal(`roles.rbac.authorization.k8s.io "node-reader" is forbidden: user "${ALICE}" (groups=["system:authenticated"]) is attempting to grant RBAC permissions not currently held:\n{APIGroups:[""], Resources:["nodes"], Verbs:["get" "list"]}`);
    // the admin (system:masters) is not checked: a restore running as the charm writes any binding
    await as(admin).rbac.createNamespacedRoleBinding(binding('restored-admin', 'cluster-admin'));
  });

  it('refuses impersonation without the impersonate verb; an admin impersonating the owner gets the owner\'s refusals', async () => {
    const token = c.issueToken({ username: ALICE });
    const asBob = await raw('/api/v1/namespaces/bob/secrets', token, { 'Impersonate-User': BOB });
    expect(asBob.http).to.equal(403);
    expect(JSON.parse(asBob.body)).to.deep.include({ reason: 'Forbidden', message: `users "${BOB}" is forbidden: User "${ALICE}" cannot impersonate resource "users" in API group "" at the cluster scope` });
    const asMasters = await raw('/api/v1/secrets', token, { 'Impersonate-User': ALICE, 'Impersonate-Group': 'system:masters' });
    expect(JSON.parse(asMasters.body).message).to.equal(`users "${ALICE}" is forbidden: User "${ALICE}" cannot impersonate resource "users" in API group "" at the cluster scope`);
    // kubeflow-kubernetes-edit grants impersonate on serviceaccounts: the owner may act as default-editor in alice
    const asEditor = await raw('/api/v1/namespaces/alice/pods', token, { 'Impersonate-User': 'system:serviceaccount:alice:default-editor' });
    expect(asEditor.http).to.equal(200);
    const editorInBob = await raw('/api/v1/namespaces/bob/pods', token, { 'Impersonate-User': 'system:serviceaccount:bob:default-editor' });
    expect(JSON.parse(editorInBob.body).message).to.equal(`serviceaccounts "default-editor" is forbidden: User "${ALICE}" cannot impersonate resource "serviceaccounts" in API group "" in the namespace "bob"`);
    const byAdmin = await raw('/api/v1/namespaces/bob/secrets', c.token, { 'Impersonate-User': ALICE });
    expect(byAdmin.http).to.equal(403);
    expect(JSON.parse(byAdmin.body).message).to.equal(`secrets is forbidden: User "${ALICE}" cannot list resource "secrets" in API group "" in the namespace "bob"`);
  });

  it('lets any authenticated user discover the API, and nothing more without a binding', async () => {
    const nobody = new k8s.KubeConfig();
    nobody.loadFromString(c.kubeconfigFor({ username: 'nobody@example.com' }));
    const core = nobody.makeApiClient(k8s.CoreV1Api);
    expect((await core.getAPIResources()).resources.map((r) => r.name)).to.include('secrets');
    expect((await nobody.makeApiClient(k8s.ApisApi).getAPIVersions()).groups.map((g) => g.name)).to.include('kubeflow.org');
    expect((await refusal(core.listNamespace())).message).to.equal('namespaces is forbidden: User "nobody@example.com" cannot list resource "namespaces" in API group "" at the cluster scope');
  });

  it('authenticates a service account token Secret as its ServiceAccount, with the profile controller\'s binding', async () => {
    await as(admin).core.createNamespacedSecret({ namespace: 'alice', body: { metadata: { name: 'editor-token', annotations: { 'kubernetes.io/service-account.name': 'default-editor' } }, type: 'kubernetes.io/service-account-token' } });
    await until(() => Boolean((c.api.get({ group: '', resource: 'secrets' }, 'editor-token', 'alice')?.data as Record<string, string> | undefined)?.token), 'the token controller to fill the token');
    const data = c.api.get({ group: '', resource: 'secrets' }, 'editor-token', 'alice')!.data as Record<string, string>;
    const token = Buffer.from(data.token!, 'base64').toString('utf8');
    expect((await raw('/api/v1/namespaces/alice/pods', token)).http).to.equal(200);
    const other = await raw('/api/v1/namespaces/bob/pods', token);
    expect(JSON.parse(other.body).message).to.equal('pods is forbidden: User "system:serviceaccount:alice:default-editor" cannot list resource "pods" in API group "" in the namespace "bob"');
  });

  it('aggregates a new ClusterRole labelled aggregate-to-edit into edit, and one labelled aggregate-to-kubeflow-edit into the owner\'s kubeflow-admin', async () => {
    const { rbac, core } = as(admin);
    await core.createNamespace({ body: { metadata: { name: 'carol' } } });
    await rbac.createNamespacedRoleBinding({ namespace: 'carol', body: { metadata: { name: 'carol-edit' }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'edit' }, subjects: [{ kind: 'User', name: 'carol@example.com', apiGroup: 'rbac.authorization.k8s.io' }] } });
    const carol = new k8s.KubeConfig();
    carol.loadFromString(c.kubeconfigFor({ username: 'carol@example.com' }, 'carol'));
    const quotas = () => carol.makeApiClient(k8s.CoreV1Api).createNamespacedResourceQuota({ namespace: 'carol', body: { metadata: { name: 'q' }, spec: { hard: { pods: '5' } } } });
    // edit (system:aggregate-to-edit) reads resourcequotas but never writes them
    expect((await refusal(quotas())).message).to.equal('resourcequotas is forbidden: User "carol@example.com" cannot create resource "resourcequotas" in API group "" in the namespace "carol"');
    await rbac.createClusterRole({ body: { metadata: { name: 'quota-writer', labels: { 'rbac.authorization.k8s.io/aggregate-to-edit': 'true' } }, rules: [{ apiGroups: [''], resources: ['resourcequotas'], verbs: ['create'] }] } });
    await until(() => allowed('carol@example.com', 'create', 'resourcequotas', 'carol'), 'edit to aggregate quota-writer');
    expect((await quotas()).metadata?.name).to.equal('q');
    const edit = await rbac.readClusterRole({ name: 'edit' });
    expect(edit.rules).to.deep.include({ apiGroups: [''], resources: ['resourcequotas'], verbs: ['create'] });
    // the owner's kubeflow-admin gains what kubeflow-edit aggregates, through two levels, and loses it again
    expect(allowed(ALICE, 'create', 'limitranges', 'alice')).to.equal(false);
    await rbac.createClusterRole({ body: { metadata: { name: 'limits-writer', labels: { 'rbac.authorization.kubeflow.org/aggregate-to-kubeflow-edit': 'true' } }, rules: [{ apiGroups: [''], resources: ['limitranges'], verbs: ['create'] }] } });
    await until(() => allowed(ALICE, 'create', 'limitranges', 'alice'), 'kubeflow-admin to aggregate limits-writer through kubeflow-edit');
    await as(alice).core.createNamespacedLimitRange({ namespace: 'alice', body: { metadata: { name: 'limits' }, spec: { limits: [{ type: 'Container', max: { cpu: '4' } }] } } });
    await rbac.deleteClusterRole({ name: 'limits-writer' });
    await until(() => !allowed(ALICE, 'create', 'limitranges', 'alice'), 'kubeflow-admin to drop limits-writer\'s rules');
  });
});
