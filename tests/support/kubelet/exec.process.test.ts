// pods/exec through the embedded API server and the simulated kubelet, with @kubernetes/client-node's Exec as the
// client (it offers v5.channel.k8s.io first, so the API server's stream translator answers) and a bare `ws` client
// where a refused handshake's body or an older protocol is the point. What each answer follows upstream is in
// tests/support/cluster/exec.ts; how a container's environment and mounts are made, in container.ts.
import { expect } from 'chai';
import { Exec, KubeConfig, type V1Status } from '@kubernetes/client-node';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { request } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough, Readable } from 'node:stream';
import { WebSocket } from 'ws';
import type { KubeObject } from '../../../src/kube/types.ts';
import { startCluster, type RunningCluster } from '../cluster/index.ts';
import { canBindMount } from './container.ts';
import { simulatedKubelet, storageClass, type SimulatedKubelet } from './index.ts';
import { CONFIGMAPS, PODS, PVCS, SECRETS, STORAGE_CLASSES } from './refs.ts';

const NS = 'team';
const ROLES = { group: 'rbac.authorization.k8s.io', resource: 'roles' };
const BINDINGS = { group: 'rbac.authorization.k8s.io', resource: 'rolebindings' };

/** a Pod of two containers that run until a file appears in their shared emptyDir */
function workerPod(name: string, extra: { nodeSelector?: Record<string, string>; script?: string } = {}): KubeObject {
  const wait = extra.script ?? 'while [ ! -e /work/stop ]; do sleep 0.05; done';
  // the main container writes down its own environment first, for exec's to be compared with
  const main = `env > /work/main.env; ${wait}`;
  return {
    apiVersion: 'v1', kind: 'Pod', metadata: { name, namespace: NS },
    spec: {
      restartPolicy: 'Never',
      ...(extra.nodeSelector ? { nodeSelector: extra.nodeSelector } : {}),
      volumes: [
        { name: 'creds', secret: { secretName: 'creds' } }, { name: 'work', emptyDir: {} },
        { name: 'settings', configMap: { name: 'settings', items: [{ key: 'mode', path: 'conf/mode' }] } },
        { name: 'data', persistentVolumeClaim: { claimName: 'data' } },
      ],
      containers: [
        {
          name: 'main', image: 'busybox:1.36', command: ['sh', '-c', main],
          env: [
            { name: 'PLAIN', value: 'plain-value' },
            { name: 'FROM_SECRET', valueFrom: { secretKeyRef: { name: 'creds', key: 'password' } } },
            { name: 'FROM_CONFIGMAP', valueFrom: { configMapKeyRef: { name: 'settings', key: 'mode' } } },
            { name: 'CREDS_FILE', value: '/etc/creds/password' },
          ],
          envFrom: [{ prefix: 'ALL_', secretRef: { name: 'creds' } }],
          volumeMounts: [{ name: 'creds', mountPath: '/etc/creds', readOnly: true }, { name: 'work', mountPath: '/work' }, { name: 'data', mountPath: '/data', readOnly: true }],
        },
        {
          name: 'side', image: 'busybox:1.36', command: ['sh', '-c', wait], env: [{ name: 'SIDE', value: 'side-value' }],
          volumeMounts: [{ name: 'work', mountPath: '/work' }, { name: 'settings', mountPath: '/etc/settings' }, { name: 'data', mountPath: '/data' }],
        },
      ],
    },
  };
}

interface ExecResult { stdout: string; stderr: string; status: V1Status }

describe('simulated pods/exec (WebSocket, client-node Exec)', function () {
  this.timeout(60_000);
  let cluster: RunningCluster;
  let kubelet: SimulatedKubelet;
  let stopKubelet: () => void;
  let dataDir: string;
  let admin: KubeConfig;

  /** resolves with the Pod once `ready` holds for it, from the cluster's own change feed (no polling) */
  function podWhen(name: string, ready: (pod: KubeObject) => boolean): Promise<KubeObject> {
    return new Promise((resolve) => {
      const now = cluster.api.get(PODS, name, NS);
      if (now && ready(now)) return resolve(now);
      const unsubscribe = cluster.api.subscribe((event) => {
        if (event.ref.resource !== 'pods' || event.object.metadata.name !== name || event.object.metadata.namespace !== NS) return;
        if (!ready(event.object)) return;
        unsubscribe();
        resolve(event.object);
      });
    });
  }
  const phase = (pod: KubeObject) => (pod.status as { phase?: string } | undefined)?.phase;
  const allRunning = (pod: KubeObject) => phase(pod) === 'Running'
    && ((pod.status as { containerStatuses?: { state: { running?: unknown } }[] }).containerStatuses ?? []).every((c) => c.state.running !== undefined);

  /** client-node's Exec, to the end: what came on stdout and stderr, and the Status of the error channel */
  async function exec(config: KubeConfig, pod: string, container: string, command: string[], stdin?: string): Promise<ExecResult> {
    const stdout = new PassThrough();
    const stderr = new PassThrough();
    let out = '';
    let err = '';
    stdout.on('data', (d: Buffer) => { out += d.toString(); });
    stderr.on('data', (d: Buffer) => { err += d.toString(); });
    let status: V1Status | undefined;
    const ws = await new Exec(config).exec(NS, pod, container, command, stdout, stderr, stdin === undefined ? null : Readable.from([stdin]), false, (s) => { status = s; });
    await new Promise<void>((resolve) => {
      if (ws.readyState === 3) return resolve(); // CLOSED
      ws.on('close', () => resolve());
    });
    if (!status) throw new Error('the exec ended without a Status');
    return { stdout: out, stderr: err, status };
  }

  /** a bare WebSocket handshake: its HTTP answer when refused, or the messages of the session */
  function raw(path: string, token: string, protocols: string[]): Promise<{ code: number; body: string } | { protocol: string; messages: Buffer[] }> {
    return new Promise((resolve, reject) => {
      const ws = new WebSocket(`${cluster.server.replace('https', 'wss')}${path}`, protocols, { ca: cluster.caCert, headers: { Authorization: `Bearer ${token}` } });
      const messages: Buffer[] = [];
      ws.on('unexpected-response', (_req, res) => {
        let body = '';
        res.on('data', (d: Buffer) => { body += d.toString(); });
        res.on('end', () => resolve({ code: res.statusCode ?? 0, body }));
      });
      ws.on('message', (data) => messages.push(Buffer.isBuffer(data) ? data : Buffer.from(data as ArrayBuffer)));
      ws.on('close', () => resolve({ protocol: ws.protocol, messages }));
      ws.on('error', (e) => { if (!/Unexpected server response/.test(e.message)) reject(e); });
    });
  }
  const execPath = (pod: string, query: string) => `/api/v1/namespaces/${NS}/pods/${pod}/exec?${query}`;

  before(async function () {
    cluster = await startCluster({ kubeflowCrds: false, controllers: false });
    dataDir = mkdtempSync(join(tmpdir(), 'kubelet-exec-'));
    kubelet = simulatedKubelet({ dataDir, nodes: ['n1'], configRetryMs: 2000 });
    stopKubelet = kubelet.start(cluster.api);
    cluster.api.create({ group: '', resource: 'namespaces' }, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } });
    cluster.api.create(SECRETS, { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'creds', namespace: NS }, data: { password: Buffer.from('s3cret-pw').toString('base64'), token: Buffer.from('tok-123').toString('base64') } });
    cluster.api.create(CONFIGMAPS, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'settings', namespace: NS }, data: { mode: 'fast' } });
    cluster.api.create(STORAGE_CLASSES, storageClass('fast', { isDefault: true }));
    cluster.api.create(PVCS, { apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata: { name: 'data', namespace: NS }, spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } } });
    admin = new KubeConfig();
    admin.loadFromFile(cluster.kubeconfigPath);
    cluster.api.create(PODS, workerPod('worker'));
    await podWhen('worker', allRunning);
  });
  after(async function () {
    stopKubelet?.();
    await kubelet?.idle();
    await cluster?.stop();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  });

  it('runs `env` with exactly the environment the kubelet gave that container, and Success on the error channel', async () => {
    const main = await exec(admin, 'worker', 'main', ['env']);
    expect(main.status).to.deep.equal({ metadata: {}, status: 'Success' });
    const vars = Object.fromEntries(main.stdout.trim().split('\n').map((line) => [line.slice(0, line.indexOf('=')), line.slice(line.indexOf('=') + 1)]));
    expect(vars).to.include({ PLAIN: 'plain-value', FROM_SECRET: 's3cret-pw', FROM_CONFIGMAP: 'fast', ALL_password: 's3cret-pw', ALL_token: 'tok-123' });
    expect(vars).to.not.have.property('SIDE');
    // exactly the container's own: what its process wrote down at its start, less what its shell added
    const shellOwn = new Set(['PWD', 'OLDPWD', 'SHLVL', '_']);
    const lines = (text: string) => text.trim().split('\n').filter((line) => !shellOwn.has(line.slice(0, line.indexOf('=')))).sort();
    const own = await exec(admin, 'worker', 'main', ['cat', '/work/main.env']);
    expect(lines(main.stdout)).to.deep.equal(lines(own.stdout));
    // a path in the environment is the container's mount, as its own process has it
    expect((await exec(admin, 'worker', 'main', ['sh', '-c', 'cat "$CREDS_FILE"'])).stdout).to.equal('s3cret-pw');
    const side = await exec(admin, 'worker', 'side', ['env']);
    expect(side.stdout).to.include('SIDE=side-value\n');
    expect(side.stdout).to.not.include('s3cret-pw');
  });

  it('sees the container\'s volumes at their mount paths: a Secret\'s keys as files, a ConfigMap\'s items at their paths, the shared emptyDir', async () => {
    const listed = await exec(admin, 'worker', 'main', ['ls', '/etc/creds']);
    expect(listed.stdout.split('\n').filter(Boolean).sort()).to.deep.equal(['password', 'token']);
    expect((await exec(admin, 'worker', 'main', ['cat', '/etc/creds/password'])).stdout).to.equal('s3cret-pw');
    expect((await exec(admin, 'worker', 'side', ['cat', '/etc/settings/conf/mode'])).stdout).to.equal('fast');
    // what one container writes to the emptyDir the other reads; a container without the Secret's mount has no such file
    await exec(admin, 'worker', 'side', ['sh', '-c', 'echo shared > /work/note']);
    expect((await exec(admin, 'worker', 'main', ['cat', '/work/note'])).stdout).to.equal('shared\n');
    const absent = await exec(admin, 'worker', 'side', ['cat', '/etc/creds/password']);
    expect(absent.status.reason).to.equal('NonZeroExitCode');
  });

  it('sees a claim mounted read-only as the container does: a write fails (a private copy where bind mounts are not possible)', async () => {
    await exec(admin, 'worker', 'side', ['sh', '-c', 'echo from-side > /data/note']);
    const write = await exec(admin, 'worker', 'main', ['sh', '-c', 'echo x > /data/mine']);
    if (canBindMount()) {
      // the same read-only bind mount as the container's: EROFS, and the other container's write is seen
      expect(write.status.reason).to.equal('NonZeroExitCode');
      expect(write.stderr).to.match(/Read-only file system/);
      expect((await exec(admin, 'worker', 'main', ['cat', '/data/note'])).stdout).to.equal('from-side\n');
    }
    expect(existsSync(join(kubelet.volumePath(NS, 'data'), 'mine')), 'the claim itself is never written through a read-only mount').to.equal(false);
  });

  it('relays stdout, stderr and a non-zero exit code as upstream words it (v5 through the translator)', async () => {
    const result = await exec(admin, 'worker', 'main', ['sh', '-c', 'echo out; echo err >&2; exit 3']);
    expect(result.stdout).to.equal('out\n');
    expect(result.stderr).to.equal('err\n');
    expect(result.status).to.deep.equal({
      metadata: {}, status: 'Failure', reason: 'NonZeroExitCode',
      message: 'command terminated with non-zero exit code: command terminated with exit code 3',
      details: { causes: [{ reason: 'ExitCode', message: '3' }] },
    });
  });

  it('feeds stdin and ends it on the client\'s v5 close signal', async () => {
    const result = await exec(admin, 'worker', 'main', ['sh', '-c', 'cat; echo " (end)"'], 'from the client');
    expect(result.stdout).to.equal('from the client (end)\n');
    expect(result.status.status).to.equal('Success');
  });

  it('answers an executable that is not in the image with the runtime\'s error as an InternalError', async () => {
    const result = await exec(admin, 'worker', 'main', ['no-such-tool']);
    expect(result.status.reason).to.equal('InternalError');
    expect(result.status.code).to.equal(500);
    expect(result.status.message).to.match(/^Internal error occurred: Internal error occurred: error executing command in container: failed to exec in container: failed to start exec "[0-9a-f]{64}": OCI runtime exec failed: exec failed: unable to start container process: exec: "no-such-tool": executable file not found in \$PATH: unknown$/);
  });

  it('refuses before the upgrade what the API server checks itself: the container unnamed or not the Pod\'s, an unknown Pod, a Pod on no node', async () => {
    const token = cluster.token;
    const unnamed = await raw(execPath('worker', 'command=env&stdout=true'), token, ['v5.channel.k8s.io']);
    expect(unnamed).to.have.property('code', 400);
    expect(JSON.parse((unnamed as { body: string }).body)).to.include({ reason: 'BadRequest', message: 'a container name must be specified for pod worker, choose one of: [main side]' });
    const wrong = await raw(execPath('worker', 'command=env&stdout=true&container=nope'), token, ['v5.channel.k8s.io']);
    expect(JSON.parse((wrong as { body: string }).body)).to.include({ code: 400, message: 'container nope is not valid for pod worker' });
    const missing = await raw(execPath('ghost', 'command=env&stdout=true'), token, ['v5.channel.k8s.io']);
    expect(JSON.parse((missing as { body: string }).body)).to.include({ code: 404, reason: 'NotFound', message: 'pods "ghost" not found' });
    cluster.api.create(PODS, workerPod('nowhere', { nodeSelector: { 'kubernetes.io/hostname': 'elsewhere' } }));
    await podWhen('nowhere', (pod) => ((pod.status as { conditions?: { reason?: string }[] } | undefined)?.conditions ?? []).some((c) => c.reason === 'Unschedulable'));
    const unscheduled = await raw(execPath('nowhere', 'command=env&stdout=true&container=main'), token, ['v5.channel.k8s.io']);
    expect(JSON.parse((unscheduled as { body: string }).body)).to.include({ code: 400, message: 'pod nowhere does not have a host assigned' });
    // a plain GET is no upgrade: the proxy wants one
    const plain = await new Promise<{ code: number; body: string }>((resolve, reject) => {
      request(`${cluster.server}${execPath('worker', 'command=env&stdout=true&container=main')}`, { ca: cluster.caCert, headers: { Authorization: `Bearer ${token}` } }, (res) => {
        let body = '';
        res.on('data', (d: Buffer) => { body += d.toString(); });
        res.on('end', () => resolve({ code: res.statusCode ?? 0, body }));
      }).on('error', reject).end();
    });
    expect(JSON.parse(plain.body)).to.include({ code: 400, message: 'Upgrade request required' });
  });

  it('answers a user without pods/exec 403 (RBAC asks `get` of the WebSocket GET; 1.30 has no second `create` check)', async () => {
    cluster.api.create(BINDINGS, { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'RoleBinding', metadata: { name: 'viewer', namespace: NS }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'view' }, subjects: [{ kind: 'User', apiGroup: 'rbac.authorization.k8s.io', name: 'viewer@example.com' }] });
    const viewer = new KubeConfig();
    viewer.loadFromString(cluster.kubeconfigFor({ username: 'viewer@example.com' }, NS));
    await exec(viewer, 'worker', 'main', ['env']).then(() => { throw new Error('the exec was allowed'); }, (e: Error) => expect(e.message).to.match(/Unexpected server response: 403/));
    const refused = await raw(execPath('worker', 'command=env&stdout=true&container=main'), cluster.issueToken({ username: 'viewer@example.com' }), ['v5.channel.k8s.io']);
    expect(refused).to.have.property('code', 403);
    expect(JSON.parse((refused as { body: string }).body)).to.include({
      reason: 'Forbidden',
      message: 'pods "worker" is forbidden: User "viewer@example.com" cannot get resource "pods/exec" in API group "" in the namespace "team"',
    });
    // `get` on pods/exec is enough on a 1.30 server (from 1.35, AuthorizePodWebsocketUpgradeCreatePermission asks `create` too)
    cluster.api.create(ROLES, { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'Role', metadata: { name: 'exec-get', namespace: NS }, rules: [{ apiGroups: [''], resources: ['pods/exec'], verbs: ['get'] }] });
    cluster.api.create(BINDINGS, { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'RoleBinding', metadata: { name: 'viewer-exec', namespace: NS }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'exec-get' }, subjects: [{ kind: 'User', apiGroup: 'rbac.authorization.k8s.io', name: 'viewer@example.com' }] });
    expect((await exec(viewer, 'worker', 'main', ['cat', '/etc/creds/token'])).stdout).to.equal('tok-123');
  });

  it('speaks v4.channel.k8s.io when the client offers no v5: the kubelet\'s answer, containerd\'s exit message', async () => {
    const session = await raw(execPath('worker', 'command=sh&command=-c&command=echo%20hi%3B%20exit%205&stdout=true&container=main'), cluster.token, ['v4.channel.k8s.io']);
    expect(session).to.have.property('protocol', 'v4.channel.k8s.io');
    const messages = (session as { messages: Buffer[] }).messages;
    expect(messages[0]).to.deep.equal(Buffer.of(1)); // the empty message on stdout that says the streams are there
    expect(Buffer.concat(messages.filter((m) => m[0] === 1).map((m) => m.subarray(1))).toString()).to.equal('hi\n');
    const status = JSON.parse(messages.find((m) => m[0] === 3)!.subarray(1).toString());
    expect(status).to.deep.equal({
      metadata: {}, status: 'Failure', reason: 'NonZeroExitCode',
      message: 'command terminated with non-zero exit code: error executing command [sh -c echo hi; exit 5], exit code 5',
      details: { causes: [{ reason: 'ExitCode', message: '5' }] },
    });
  });

  it('finds no container that has not started: a Pending Pod waiting for its Secret (CreateContainerConfigError)', async () => {
    cluster.api.create(PODS, { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'waiting', namespace: NS }, spec: { restartPolicy: 'Never', containers: [{ name: 'main', image: 'busybox:1.36', command: ['sh', '-c', 'true'], env: [{ name: 'X', valueFrom: { secretKeyRef: { name: 'absent', key: 'x' } } }] }] } });
    await podWhen('waiting', (pod) => ((pod.status as { containerStatuses?: { state: { waiting?: { reason?: string } } }[] } | undefined)?.containerStatuses ?? [])
      .some((c) => c.state.waiting?.reason === 'CreateContainerConfigError'));
    // the only container may be left unnamed
    const result = await exec(admin, 'waiting', '', ['env']);
    expect(result.status.message).to.equal('Internal error occurred: unable to upgrade connection: container not found ("main")');
    // the kubelet gives up on it after configRetryMs: the Pod fails, and nothing of it is left running at the end
    await podWhen('waiting', (pod) => phase(pod) === 'Failed');
  });

  it('finds no container once it has ended: v5 an InternalError on the error channel, v4 a 500 before the upgrade', async () => {
    await exec(admin, 'worker', 'side', ['touch', '/work/stop']);
    await podWhen('worker', (pod) => phase(pod) === 'Succeeded');
    const after = await exec(admin, 'worker', 'main', ['env']);
    expect(after.stdout).to.equal('');
    expect(after.status).to.deep.equal({
      metadata: {}, status: 'Failure', reason: 'InternalError', code: 500,
      message: 'Internal error occurred: unable to upgrade connection: container not found ("main")',
      details: { causes: [{ message: 'unable to upgrade connection: container not found ("main")' }] },
    });
    const v4 = await raw(execPath('worker', 'command=env&stdout=true&container=main'), cluster.token, ['v4.channel.k8s.io']);
    expect(v4).to.deep.equal({ code: 500, body: 'container not found ("main")' });
  });
});
