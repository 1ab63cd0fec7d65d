// The embedded cluster's network as Pods see it: ClusterIPs from the cluster's own loopback range, Endpoints and
// EndpointSlices that follow readiness, kube-proxy refusing a Service without ready endpoints, the cluster DNS with
// and without search domains, and real Go programs (rclone) reaching a server Pod through its Service's name.
// Each expectation is what upstream does; the modules (cluster-network.ts, cluster-dns.ts, endpoints-controller.ts,
// kube-proxy.ts, ../kubelet/prober.ts, ../kubelet/pod-network.ts) name the file each behaviour follows.
import { expect } from 'chai';
import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { Resolver } from 'node:dns/promises';
import { execFileSync, spawn } from 'node:child_process';
import { connect, createServer, type Socket } from 'node:net';
import { createInterface } from 'node:readline';
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { KubeObject } from '../../../src/kube/types.ts';
import type { InProcessApi } from '../cluster/contract.ts';
import { startCluster, type RunningCluster } from '../cluster/index.ts';
import { simulatedKubelet, type SimulatedKubelet } from '../kubelet/index.ts';
import { inCidr } from './cluster-network.ts';
import { startKubeProxy } from './kube-proxy.ts';

const here = dirname(fileURLToPath(import.meta.url));

const SERVICES = { group: '', resource: 'services' };
const PODS = { group: '', resource: 'pods' };
const JOBS = { group: 'batch', resource: 'jobs' };
const ENDPOINTS = { group: '', resource: 'endpoints' };
const SLICES = { group: 'discovery.k8s.io', resource: 'endpointslices' };
const NAMESPACES = { group: '', resource: 'namespaces' };

/** resolves with the first value `check` gives after any change in the cluster (or at once), or fails after `ms` */
function until<T>(api: InProcessApi, what: string, check: () => T | undefined, ms = 30_000): Promise<T> {
  return new Promise((resolve, reject) => {
    let done = false;
    const finish = (fn: () => void) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      unsubscribe();
      fn();
    };
    const attempt = () => {
      try {
        const value = check();
        if (value !== undefined && value !== false) finish(() => resolve(value));
      } catch (error) {
        finish(() => reject(error as Error));
      }
    };
    const timer = setTimeout(() => finish(() => reject(new Error(`timed out waiting for ${what}`))), ms);
    const unsubscribe = api.subscribe(attempt);
    attempt();
  });
}

/** connects to host:port: 'open' once it accepts, or the error code (ECONNREFUSED) */
function dial(host: string, port: number): Promise<string> {
  return new Promise((resolve) => {
    const socket = connect({ host, port });
    socket.once('connect', () => { socket.destroy(); resolve('open'); });
    socket.once('error', (error: NodeJS.ErrnoException) => resolve(error.code ?? error.message));
  });
}

/** waits for host:port to answer `want` (kube-proxy opens and closes its listeners right after the slices change) */
async function dialUntil(host: string, port: number, want: string, ms = 10_000): Promise<void> {
  const deadline = Date.now() + ms;
  let last = '';
  while (Date.now() < deadline) {
    last = await dial(host, port);
    if (last === want) return;
    await new Promise((r) => setImmediate(r));
  }
  throw new Error(`${host}:${port} answered ${last}, not ${want}`);
}

/** the rules of one chain, or every rule of a table, as `iptables -S` prints them */
function iptablesRules(table: 'nat' | 'filter', chain?: string): string[] {
  return execFileSync('iptables', ['-w', '-t', table, '-S', ...(chain ? [chain] : [])], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).split('\n').filter(Boolean);
}
const rulesOf = (table: 'nat' | 'filter', chain: string) => iptablesRules(table, chain).filter((line) => line.startsWith('-A '));

/** writes `text` and resolves with what the echo server sends back */
function roundTrip(socket: Socket, text: string): Promise<string> {
  return new Promise((resolve, reject) => {
    let got = '';
    const onData = (d: Buffer) => {
      got += d.toString();
      if (got.length >= text.length) {
        socket.off('data', onData);
        resolve(got);
      }
    };
    socket.on('data', onData);
    socket.once('error', reject);
    socket.write(text);
  });
}

/** an HTTP GET through a raw socket: the status line and body */
function httpGet(host: string, port: number, hostHeader: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host, port }, () => socket.write(`GET / HTTP/1.0\r\nHost: ${hostHeader}\r\n\r\n`));
    let text = '';
    socket.on('data', (d: Buffer) => { text += d.toString(); });
    socket.on('end', () => resolve(text));
    socket.on('error', reject);
  });
}

type PodStatus = { podIP?: string; podIPs?: { ip: string }[]; phase?: string; conditions?: { type: string; status: string }[]; containerStatuses?: { ready: boolean; state: { terminated?: { exitCode: number; message?: string } } }[] };
const statusOf = (pod: KubeObject | undefined) => (pod?.status ?? {}) as PodStatus;
const conditionOf = (pod: KubeObject | undefined, type: string) => statusOf(pod).conditions?.find((c) => c.type === type)?.status;
const clusterIpOf = (service: KubeObject | undefined) => (service?.spec as { clusterIP?: string } | undefined)?.clusterIP;

/** a bare Pod running `rclone serve http <folder>` on its own IP (downward API), with a tcpSocket readiness probe */
function serverPod(name: string, namespace: string, labels: Record<string, string>, folder: string, gate?: string): KubeObject {
  const serve = ['rclone', 'serve', 'http', '/srv', '--addr', '$(POD_IP):8080'];
  return {
    apiVersion: 'v1', kind: 'Pod', metadata: { name, namespace, labels: { ...labels, 'sidecar.istio.io/inject': 'false' } },
    spec: {
      restartPolicy: 'Never',
      containers: [{
        name: 'server', image: 'rclone/rclone:1.60',
        // with a gate, the server starts only once the test creates the file: the Pod runs unready until then
        ...(gate
          ? { command: ['sh', '-c', `while [ ! -e /gate/open ]; do sleep 0.05; done; exec ${serve.join(' ')}`] }
          : { args: serve.slice(1) }),
        env: [{ name: 'POD_IP', valueFrom: { fieldRef: { fieldPath: 'status.podIP' } } }],
        ports: [{ name: 'http', containerPort: 8080, protocol: 'TCP' }],
        readinessProbe: { tcpSocket: { port: 'http' }, periodSeconds: 1 },
        volumeMounts: [{ name: 'srv', mountPath: '/srv' }, ...(gate ? [{ name: 'gate', mountPath: '/gate' }] : [])],
      }],
      volumes: [{ name: 'srv', hostPath: { path: folder } }, ...(gate ? [{ name: 'gate', hostPath: { path: gate } }] : [])],
    },
  };
}

function service(name: string, namespace: string, spec: Record<string, unknown>): KubeObject {
  return { apiVersion: 'v1', kind: 'Service', metadata: { name, namespace }, spec };
}

/** a Job of one container; its termination message is the output's tail on failure */
function job(name: string, namespace: string, container: Record<string, unknown>): KubeObject {
  return {
    apiVersion: 'batch/v1', kind: 'Job', metadata: { name, namespace },
    spec: { backoffLimit: 0, template: { metadata: { labels: { 'sidecar.istio.io/inject': 'false' } }, spec: { restartPolicy: 'Never', containers: [{ name: 'main', terminationMessagePolicy: 'FallbackToLogsOnError', ...container }] } } },
  };
}

async function jobPod(api: InProcessApi, name: string, namespace: string): Promise<KubeObject> {
  return until(api, `the Pod of Job ${name} to end`, () => api.list(PODS, { namespace, labelSelector: `job-name=${name}` })
    .find((p) => ['Succeeded', 'Failed'].includes(statusOf(p).phase ?? '')));
}

describe('the embedded cluster network', function () {
  let cluster: RunningCluster;
  let kubelet: SimulatedKubelet;
  let stopKubelet: () => void;
  let scratch: string;
  let api: InProcessApi;

  before(async function () {
    if (process.getuid?.() !== 0) throw new Error('these tests need root: the cluster DNS listens on port 53 and each container gets its own /etc/resolv.conf and /etc/hosts through bind mounts in its own mount namespace');
    cluster = await startCluster({ kubeflowCrds: false, controllers: false });
    api = cluster.api;
    expect(api.network, 'a cluster started as root has its loopback network').to.not.equal(undefined);
    scratch = mkdtempSync(join(tmpdir(), 'net-test-'));
    kubelet = simulatedKubelet({ dataDir: join(scratch, 'data'), nodes: ['n1'] });
    stopKubelet = kubelet.start(api);
    for (const name of ['team', 'other']) api.create(NAMESPACES, { apiVersion: 'v1', kind: 'Namespace', metadata: { name } });
  });
  after(async function () {
    stopKubelet?.();
    await kubelet?.idle();
    await cluster?.stop();
    if (scratch) rmSync(scratch, { recursive: true, force: true });
  });

  it('allocates ClusterIPs from the cluster\'s own loopback range, keeps them immutable, and leaves a headless Service without one', function () {
    const network = api.network!;
    expect(network.serviceCidr).to.match(/^127\.\d+\.0\.0\/16$/);
    expect(network.serviceCidr).to.not.equal('127.0.0.0/16');
    const made = api.create(SERVICES, service('alloc', 'team', { selector: { app: 'alloc' }, ports: [{ port: 80 }] }));
    const ip = clusterIpOf(made)!;
    expect(inCidr(ip, network.serviceCidr), ip).to.equal(true);
    expect((made.spec as { clusterIPs: string[] }).clusterIPs).to.deep.equal([ip]);
    const other = network.serviceCidr.replace(/\.0\.0\/16$/, '.9.9');
    let refusal: Error | undefined;
    try {
      api.update(SERVICES, { ...made, spec: { ...(made.spec as object), clusterIP: other, clusterIPs: [other] } });
    } catch (error) {
      refusal = error as Error;
    }
    expect(refusal?.message).to.equal(`Service "alloc" is invalid: spec.clusterIPs[0]: Invalid value: []string{"${other}"}: may not change once set`);
    const headless = api.create(SERVICES, service('alloc-headless', 'team', { clusterIP: 'None', selector: { app: 'alloc' }, ports: [{ port: 80 }] }));
    expect((headless.spec as { clusterIPs: string[] }).clusterIPs).to.deep.equal(['None']);
  });

  it('lists a selected Pod as not ready until its readiness probe connects, then as ready; kube-proxy refuses until then and forwards after', async function () {
    const folder = join(scratch, 'web');
    const gate = join(scratch, 'web-gate');
    for (const f of [folder, gate]) mkdirSync(f, { recursive: true });
    writeFileSync(join(folder, 'hello.txt'), 'hi');
    const svc = api.create(SERVICES, service('web', 'team', { selector: { app: 'web' }, ports: [{ name: 'http', port: 80, targetPort: 'http' }] }));
    const ip = clusterIpOf(svc)!;
    api.create(PODS, serverPod('web-0', 'team', { app: 'web' }, folder, gate));

    const podIP = await until(api, 'web-0 to run with an IP', () => {
      const pod = api.get(PODS, 'web-0', 'team');
      return statusOf(pod).phase === 'Running' ? statusOf(pod).podIP : undefined;
    });
    expect(inCidr(podIP, api.network!.podCidr), podIP).to.equal(true);
    expect(statusOf(api.get(PODS, 'web-0', 'team')).podIPs).to.deep.equal([{ ip: podIP }]);
    const notReady = await until(api, 'web-0 as a not-ready address', () => {
      const subsets = (api.get(ENDPOINTS, 'web', 'team')?.['subsets'] ?? []) as { notReadyAddresses?: { ip: string }[]; ports?: unknown[] }[];
      return subsets.find((s) => s.notReadyAddresses?.length);
    });
    expect(notReady).to.deep.include({ ports: [{ name: 'http', port: 8080, protocol: 'TCP' }] });
    expect(notReady.notReadyAddresses!.map((a) => a.ip)).to.deep.equal([podIP]);
    const slice = api.list(SLICES, { namespace: 'team', labelSelector: 'kubernetes.io/service-name=web' })[0] as KubeObject & { endpoints: { addresses: string[]; conditions: { ready: boolean } }[]; ports: unknown[] };
    expect(slice.endpoints).to.have.length(1);
    expect(slice.endpoints[0]).to.deep.include({ addresses: [podIP], conditions: { ready: false, serving: false, terminating: false } });
    expect(slice.ports).to.deep.equal([{ name: 'http', port: 8080, protocol: 'TCP' }]);
    expect(conditionOf(api.get(PODS, 'web-0', 'team'), 'Ready')).to.equal('False');
    expect(await dial(ip, 80), 'no ready endpoint: REJECT').to.equal('ECONNREFUSED');

    writeFileSync(join(gate, 'open'), '');
    await until(api, 'web-0 to be Ready', () => conditionOf(api.get(PODS, 'web-0', 'team'), 'Ready') === 'True');
    const ready = await until(api, 'web-0 as a ready address', () => {
      const subsets = (api.get(ENDPOINTS, 'web', 'team')?.['subsets'] ?? []) as { addresses?: { ip: string }[]; notReadyAddresses?: unknown[] }[];
      return subsets.find((s) => s.addresses?.length);
    });
    expect(ready.addresses!.map((a) => a.ip)).to.deep.equal([podIP]);
    expect(ready.notReadyAddresses).to.equal(undefined);
    await dialUntil(ip, 80, 'open');
    const listing = await httpGet(ip, 80, 'web.team.svc');
    expect(listing).to.match(/^HTTP\/1\.[01] 200/);
    expect(listing).to.include('hello.txt');

    // the Pod goes: its process ends, its address leaves the Endpoints and the Service refuses again
    api.delete(PODS, 'web-0', 'team');
    await until(api, 'the Endpoints to empty', () => ((api.get(ENDPOINTS, 'web', 'team')?.['subsets'] as unknown[] | undefined) ?? []).length === 0);
    await dialUntil(ip, 80, 'ECONNREFUSED');
    await dialUntil(podIP, 8080, 'ECONNREFUSED');
  });

  it('answers <service>.<namespace>.svc.cluster.local with the ClusterIP, a headless Service with its ready Pod IPs, anything else NXDOMAIN or REFUSED', async function () {
    const network = api.network!;
    const folder = join(scratch, 'dns-srv');
    mkdirSync(folder, { recursive: true });
    const svc = api.create(SERVICES, service('named', 'team', { selector: { app: 'named' }, ports: [{ port: 8080, targetPort: 'http' }] }));
    api.create(SERVICES, service('named-headless', 'team', { clusterIP: 'None', selector: { app: 'named' }, ports: [{ port: 8080, targetPort: 'http' }] }));
    api.create(PODS, serverPod('named-0', 'team', { app: 'named' }, folder));
    const podIP = await until(api, 'named-0 Ready', () => {
      const pod = api.get(PODS, 'named-0', 'team');
      return conditionOf(pod, 'Ready') === 'True' ? statusOf(pod).podIP : undefined;
    });
    const resolver = new Resolver({ timeout: 2000, tries: 1 });
    resolver.setServers([network.dnsIp]);
    expect(await resolver.resolve4('named.team.svc.cluster.local')).to.deep.equal([clusterIpOf(svc)]);
    await until(api, 'the headless slice to list named-0 ready', () => api.list(SLICES, { namespace: 'team', labelSelector: 'kubernetes.io/service-name=named-headless' })
      .some((s) => ((s as { endpoints?: { conditions?: { ready?: boolean } }[] }).endpoints ?? []).some((e) => e.conditions?.ready)));
    expect(await resolver.resolve4('named-headless.team.svc.cluster.local')).to.deep.equal([podIP]);
    expect(await resolver.resolve4(`${podIP.replaceAll('.', '-')}.team.pod.cluster.local`)).to.deep.equal([podIP]);
    const code = (name: string) => resolver.resolve4(name).then(() => 'found', (error: NodeJS.ErrnoException) => error.code);
    expect(await code('absent.team.svc.cluster.local')).to.equal('ENOTFOUND');
    expect(await code('named.nowhere.svc.cluster.local')).to.equal('ENOTFOUND');
    expect(await code('named.team.svc')).to.equal('EREFUSED'); // the bare name is the resolver's business (search), not the server's
    expect(await code('example.org')).to.equal('EREFUSED'); // nothing is forwarded
    expect(await resolver.resolve6('named.team.svc.cluster.local').catch((e: NodeJS.ErrnoException) => e.code)).to.equal('ENODATA');
  });

  it('gives each container the Pod\'s resolv.conf (search domains, ndots:5), /etc/hosts with its hostname, and status.podIP', async function () {
    api.create(SERVICES, service('lookup', 'team', { selector: { app: 'lookup' }, ports: [{ port: 80 }] }));
    const ip = clusterIpOf(api.get(SERVICES, 'lookup', 'team'))!;
    // glibc's getent applies the search list and ndots from /etc/resolv.conf, as any resolver in the container does
    const script = [
      'r() { out=$(getent hosts "$1") || return 1; echo "${out%% *}"; }',
      'printf "%s|%s|%s|%s|%s|%s\\n" "$(r lookup)" "$(r lookup.team)" "$(r lookup.team.svc)" "$(r lookup.team.svc.cluster.local)" "$(r lookup.team.svc.cluster.local.)" "$(r absent || echo none)" > /dev/termination-log',
      'cat /etc/resolv.conf >> /dev/termination-log',
      'printf "ip=%s\\n" "$POD_IP" >> /dev/termination-log',
      'grep -v "^#" /etc/hosts | tail -n 1 >> /dev/termination-log',
    ].join('\n');
    api.create(JOBS, job('resolve', 'other', { image: 'busybox:1.36', command: ['sh', '-c', script], env: [{ name: 'POD_IP', valueFrom: { fieldRef: { fieldPath: 'status.podIP' } } }] }));
    const pod = await jobPod(api, 'resolve', 'other');
    const message = statusOf(pod).containerStatuses![0]!.state.terminated!.message!;
    const network = api.network!;
    const podIP = statusOf(pod).podIP!;
    // from another namespace the bare name misses (the search list starts with the Pod's own namespace), while
    // <svc>.<ns> is found through the second search domain, svc.cluster.local
    expect(message.split('\n')).to.deep.equal([
      `|${ip}|${ip}|${ip}|${ip}|none`,
      `nameserver ${network.dnsIp}`,
      'search other.svc.cluster.local svc.cluster.local cluster.local',
      'options ndots:5',
      `ip=${podIP}`,
      `${podIP}\t${pod.metadata.name}`,
      '',
    ]);
    api.create(JOBS, job('resolve-local', 'team', { image: 'busybox:1.36', command: ['sh', '-c', 'printf "%s|%s" "$(getent hosts lookup | cut -d " " -f 1)" "$(getent hosts lookup.team | cut -d " " -f 1)" > /dev/termination-log'] }));
    const local = await jobPod(api, 'resolve-local', 'team');
    expect(statusOf(local).containerStatuses![0]!.state.terminated!.message).to.equal(`${ip}|${ip}`);
  });

  it('lets rclone (a Go program) in another namespace reach a server Pod through its Service name, and refuses a Service without ready endpoints', async function () {
    const folder = join(scratch, 'files');
    mkdirSync(folder, { recursive: true });
    writeFileSync(join(folder, 'backup-1.tar'), 'one');
    writeFileSync(join(folder, 'backup-2.tar'), 'two');
    api.create(SERVICES, service('files', 'team', { selector: { app: 'files' }, ports: [{ name: 'http', port: 8080, targetPort: 'http' }] }));
    api.create(PODS, serverPod('files-0', 'team', { app: 'files' }, folder));
    await until(api, 'files-0 Ready', () => conditionOf(api.get(PODS, 'files-0', 'team'), 'Ready') === 'True');
    await until(api, 'the files Endpoints ready', () => ((api.get(ENDPOINTS, 'files', 'team')?.['subsets'] ?? []) as { addresses?: unknown[] }[]).some((s) => s.addresses?.length));
    await dialUntil(clusterIpOf(api.get(SERVICES, 'files', 'team'))!, 8080, 'open');

    for (const [name, host] of [['lsf-short', 'files.team.svc'], ['lsf-fqdn', 'files.team.svc.cluster.local']] as const) {
      api.create(JOBS, job(name, 'other', { image: 'rclone/rclone:1.60', args: ['lsf', ':http:', '--http-url', `http://${host}:8080`] }));
      const pod = await jobPod(api, name, 'other');
      expect(statusOf(pod).phase, kubelet.logs('other', pod.metadata.name ?? '')).to.equal('Succeeded');
      const listed = (kubelet.logs('other', pod.metadata.name ?? '') ?? '').split('\n').filter((line) => line && !line.includes('NOTICE: Config file'));
      expect(listed).to.deep.equal(['backup-1.tar', 'backup-2.tar']);
    }

    api.create(SERVICES, service('nobody', 'team', { selector: { app: 'nobody' }, ports: [{ name: 'http', port: 8080 }] }));
    await until(api, 'the nobody Endpoints', () => api.get(ENDPOINTS, 'nobody', 'team'));
    api.create(JOBS, job('lsf-refused', 'other', { image: 'rclone/rclone:1.60', args: ['lsf', ':http:', '--http-url', 'http://nobody.team.svc:8080', '--low-level-retries', '1', '--retries', '1'] }));
    const refused = await jobPod(api, 'lsf-refused', 'other');
    expect(statusOf(refused).phase).to.equal('Failed');
    expect(kubelet.logs('other', refused.metadata.name ?? '')).to.match(/dial tcp 127\.\d+\.\d+\.\d+:8080: connect: connection refused/);
  });

  it('lets restic (a Go program) back up to `rclone serve restic` in another namespace through rest:http://<service>.<namespace>.svc', async function () {
    const folder = join(scratch, 'repo');
    mkdirSync(folder, { recursive: true });
    api.create(SERVICES, service('repo', 'team', { selector: { app: 'repo' }, ports: [{ name: 'rest', port: 8000, targetPort: 'rest' }] }));
    api.create(PODS, {
      apiVersion: 'v1', kind: 'Pod', metadata: { name: 'repo-0', namespace: 'team', labels: { app: 'repo', 'sidecar.istio.io/inject': 'false' } },
      spec: {
        restartPolicy: 'Never',
        containers: [{
          name: 'gateway', image: 'rclone/rclone:1.60', args: ['serve', 'restic', '/srv', '--addr', '$(POD_IP):8000'],
          env: [{ name: 'POD_IP', valueFrom: { fieldRef: { fieldPath: 'status.podIP' } } }],
          ports: [{ name: 'rest', containerPort: 8000 }],
          readinessProbe: { tcpSocket: { port: 'rest' }, periodSeconds: 1 },
          volumeMounts: [{ name: 'srv', mountPath: '/srv' }],
        }],
        volumes: [{ name: 'srv', hostPath: { path: folder } }],
      },
    });
    await until(api, 'the repo Endpoints ready', () => ((api.get(ENDPOINTS, 'repo', 'team')?.['subsets'] ?? []) as { addresses?: unknown[] }[]).some((s) => s.addresses?.length));
    await dialUntil(clusterIpOf(api.get(SERVICES, 'repo', 'team'))!, 8000, 'open');
    api.create(JOBS, job('restic', 'other', {
      image: 'restic/restic:0.14.0', command: ['sh', '-c', 'restic init && echo data > "$HOME/f" && restic backup "$HOME/f" && restic snapshots --compact'],
      env: [{ name: 'RESTIC_REPOSITORY', value: 'rest:http://repo.team.svc:8000/' }, { name: 'RESTIC_PASSWORD', value: 'pw' }],
    }));
    const pod = await jobPod(api, 'restic', 'other');
    const log = kubelet.logs('other', pod.metadata.name ?? '') ?? '';
    expect(statusOf(pod).phase, log).to.equal('Succeeded');
    expect(log).to.match(/created restic repository \w+ at rest:http:\/\/repo\.team\.svc:8000\//);
    expect(log).to.match(/1 snapshots/);
    expect(readdirSync(join(folder, 'snapshots'))).to.have.length(1);
    api.delete(PODS, 'repo-0', 'team');
  });

  it('forwards in the kernel as kube-proxy\'s iptables proxier does: DNAT in the cluster\'s own nat chain, REJECT for a port without ready endpoints, established connections kept, every rule gone on stop', async function () {
    expect(kubelet.proxyMode(), 'the kubelet\'s kube-proxy relays unless asked for the kernel').to.equal('userspace');
    // a cluster of its own with a kube-proxy the test drives, its endpoints given by hand
    const other = await startCluster({ kubeflowCrds: false, controllers: false });
    const network = other.api.network!;
    const proxy = startKubeProxy(other.api, network, { mode: 'iptables' });
    const echo = createServer((socket) => socket.pipe(socket));
    try {
      expect(proxy.mode, 'as root with iptables, asked for the kernel, it forwards there').to.equal('iptables');
      const octet = network.serviceCidr.split('.')[1];
      const chains = { nat: `KFU-SVC-${octet}-${process.pid}`, filter: `KFU-FW-${octet}-${process.pid}` };
      const podIp = network.allocatePodIp();
      await new Promise<void>((resolve) => echo.listen(9000, podIp, resolve));
      other.api.create(NAMESPACES, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'team' } });
      const ip = clusterIpOf(other.api.create(SERVICES, service('echo', 'team', { ports: [{ name: 'tcp', port: 80 }] })))!;
      const slice = (ready: boolean): KubeObject => ({
        apiVersion: 'discovery.k8s.io/v1', kind: 'EndpointSlice', metadata: { name: 'echo-1', namespace: 'team', labels: { 'kubernetes.io/service-name': 'echo' } },
        addressType: 'IPv4', ports: [{ name: 'tcp', port: 9000, protocol: 'TCP' }], endpoints: [{ addresses: [podIp], conditions: { ready } }],
      } as KubeObject);
      await proxy.synced();
      const echoRules = (table: 'nat' | 'filter', chain: string) => rulesOf(table, chain).filter((line) => line.includes(` -d ${ip}/32 `));
      expect(echoRules('filter', chains.filter)).to.deep.equal([`-A ${chains.filter} -d ${ip}/32 -p tcp -m comment --comment "team/echo:tcp has no endpoints" -m tcp --dport 80 -j REJECT --reject-with icmp-port-unreachable`]);
      expect(await dial(ip, 80), 'no ready endpoint: REJECT').to.equal('ECONNREFUSED');

      other.api.create(SLICES, slice(true));
      await proxy.synced();
      expect(echoRules('nat', chains.nat)).to.deep.equal([`-A ${chains.nat} -d ${ip}/32 -p tcp -m comment --comment "team/echo:tcp" -m tcp --dport 80 -j DNAT --to-destination ${podIp}:9000`]);
      expect(echoRules('filter', chains.filter)).to.deep.equal([]);
      const held = await new Promise<Socket>((resolve, reject) => { const s = connect(80, ip, () => resolve(s)); s.on('error', reject); });
      expect(await roundTrip(held, 'one'), 'DNAT to the ready endpoint').to.equal('one');

      // the endpoint turns unready: new connections are refused, the established one goes on (conntrack keeps it)
      const current = other.api.get(SLICES, 'echo-1', 'team')!;
      other.api.update(SLICES, { ...slice(false), metadata: current.metadata });
      await proxy.synced();
      expect(await dial(ip, 80)).to.equal('ECONNREFUSED');
      expect(await roundTrip(held, 'two')).to.equal('two');
      held.destroy();

      await proxy.stop();
      for (const table of ['nat', 'filter'] as const) expect(iptablesRules(table).filter((line) => line.includes(`-${octet}-${process.pid}`)), table).to.deep.equal([]);
    } finally {
      await proxy.stop();
      echo.close();
      await other.stop();
    }
  });

  it('removes the chains of a cluster whose process was killed before it could, when the next cluster starts', async function () {
    const script = [
      `import { startCluster } from ${JSON.stringify(join(here, '../cluster/index.ts'))};`,
      `import { startKubeProxy } from ${JSON.stringify(join(here, 'kube-proxy.ts'))};`,
      'const cluster = await startCluster({ kubeflowCrds: false, controllers: false });',
      'const proxy = startKubeProxy(cluster.api, cluster.api.network, { mode: \'iptables\' });',
      'await proxy.synced();',
      'console.log(JSON.stringify({ mode: proxy.mode, octet: cluster.api.network.serviceCidr.split(".")[1] }));',
      'setInterval(() => {}, 1000);',
    ].join('\n');
    const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
    const started = await new Promise<{ mode: string; octet: string }>((resolve, reject) => {
      createInterface({ input: child.stdout! }).once('line', (line) => resolve(JSON.parse(line)));
      child.once('exit', (code) => reject(new Error(`the cluster process exited with ${code} before it started`)));
    });
    expect(started.mode).to.equal('iptables');
    const theirs = (table: 'nat' | 'filter') => iptablesRules(table).filter((line) => line.includes(`-${started.octet}-${child.pid}`));
    expect(theirs('nat'), 'its chain and the jump to it').to.have.length(2);
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGKILL');
    await exited;
    expect(theirs('nat'), 'SIGKILL leaves them').to.have.length(2);

    const next = await startCluster({ kubeflowCrds: false, controllers: false });
    const proxy = startKubeProxy(next.api, next.api.network!, { mode: 'iptables' });
    try {
      expect(theirs('nat')).to.deep.equal([]);
      expect(theirs('filter')).to.deep.equal([]);
    } finally {
      await proxy.stop();
      await next.stop();
    }
  });

  it('falls back to a userspace relay when told to (or where iptables is not there): it forwards to a ready endpoint and refuses without one', async function () {
    const other = await startCluster({ kubeflowCrds: false, controllers: false });
    const network = other.api.network!;
    const proxy = startKubeProxy(other.api, network, { mode: 'userspace' });
    const echo = createServer((socket) => socket.pipe(socket));
    try {
      expect(proxy.mode).to.equal('userspace');
      const octet = network.serviceCidr.split('.')[1];
      const podIp = network.allocatePodIp();
      await new Promise<void>((resolve) => echo.listen(9000, podIp, resolve));
      other.api.create(NAMESPACES, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'team' } });
      const ip = clusterIpOf(other.api.create(SERVICES, service('echo', 'team', { ports: [{ name: 'tcp', port: 80 }] })))!;
      await proxy.synced();
      expect(await dial(ip, 80)).to.equal('ECONNREFUSED');
      other.api.create(SLICES, {
        apiVersion: 'discovery.k8s.io/v1', kind: 'EndpointSlice', metadata: { name: 'echo-1', namespace: 'team', labels: { 'kubernetes.io/service-name': 'echo' } },
        addressType: 'IPv4', ports: [{ name: 'tcp', port: 9000, protocol: 'TCP' }], endpoints: [{ addresses: [podIp], conditions: { ready: true } }],
      } as KubeObject);
      await proxy.synced();
      const socket = await new Promise<Socket>((resolve, reject) => { const s = connect(80, ip, () => resolve(s)); s.on('error', reject); });
      expect(await roundTrip(socket, 'relayed')).to.equal('relayed');
      socket.destroy();
      expect(iptablesRules('nat').filter((line) => line.includes(`-${octet}-${process.pid}`)), 'no chain of its own').to.deep.equal([]);
    } finally {
      await proxy.stop();
      echo.close();
      await other.stop();
    }
  });

  it('gives two clusters running at once their own ranges and DNS, each answering for its own Services', async function () {
    const second = await startCluster({ kubeflowCrds: false, controllers: false });
    try {
      const [a, b] = [api.network!, second.api.network!];
      expect(b.serviceCidr).to.not.equal(a.serviceCidr);
      expect(b.podCidr).to.not.equal(a.podCidr);
      expect([a.podCidr, b.podCidr]).to.not.include(a.serviceCidr);
      expect([a.podCidr, b.podCidr]).to.not.include(b.serviceCidr);
      second.api.create(NAMESPACES, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'team' } });
      const mine = api.create(SERVICES, service('twin', 'team', { selector: { app: 'twin' }, ports: [{ port: 80 }] }));
      const theirs = second.api.create(SERVICES, service('twin', 'team', { selector: { app: 'twin' }, ports: [{ port: 80 }] }));
      const ask = async (dnsIp: string) => {
        const resolver = new Resolver({ timeout: 2000, tries: 1 });
        resolver.setServers([dnsIp]);
        return resolver.resolve4('twin.team.svc.cluster.local');
      };
      expect(await ask(a.dnsIp)).to.deep.equal([clusterIpOf(mine)]);
      expect(await ask(b.dnsIp)).to.deep.equal([clusterIpOf(theirs)]);
      expect(inCidr(clusterIpOf(theirs)!, b.serviceCidr)).to.equal(true);
      const podIps = new Set([a.allocatePodIp(), a.allocatePodIp(), b.allocatePodIp()]);
      expect(podIps.size).to.equal(3);
    } finally {
      await second.stop();
    }
  });
});
