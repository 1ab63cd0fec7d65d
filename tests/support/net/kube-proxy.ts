// kube-proxy for the embedded cluster's loopback network: each TCP port of each Service with a cluster IP in that
// network sends every new connection to one ready endpoint of the port, read from the Service's EndpointSlices as
// kube-proxy's EndpointSlice informer reads them. Two ways, chosen once per cluster (KubeProxy.mode says which runs):
// - 'iptables', as root where the kernel's netfilter and the iptables command are there: the kernel forwards, as
//   kube-proxy's iptables proxier has it (kubernetes/kubernetes pkg/proxy/iptables/proxier.go, syncProxyRules). Every
//   locally generated connection to the Service range jumps from nat OUTPUT to this cluster's own chain, where
//   `-d <clusterIP>/32 -p tcp --dport <port>` picks one endpoint (`-m statistic --mode random --probability 1/n`, as
//   the KUBE-SVC chains do) and DNATs to it; a port with no ready endpoint gets `-j REJECT` (comment "has no
//   endpoints") in this cluster's chain of the filter table, jumped to from filter OUTPUT for new connections, which
//   the client sees as ECONNREFUSED. Each sync writes the cluster's two chains whole with one `iptables-restore
//   --noflush`, as syncProxyRules does, so a change is atomic; established connections stay up when the rules change,
//   as conntrack keeps them. The chains are named per cluster and per process (KFU-SVC-<octet>-<pid>,
//   KFU-FW-<octet>-<pid>): stop() removes them and their jumps, so does this process's exit, and a cluster starting
//   removes every such chain whose process is gone (one killed before it could clean up).
// - 'userspace' otherwise (not root, no iptables): a relay in this process listens on <clusterIP>:<port> and copies
//   each connection to an endpoint taken in turn (the removed userspace proxier, pkg/proxy/userspace/proxier.go and
//   roundrobin.go); with no ready endpoint nothing listens, so the connection is refused. It copies every byte twice on
//   this process's event loop, which the benches feel (docs/performance.md, the repository gateway section).
// Both follow pkg/proxy/endpointslicecache.go and pkg/proxy/topology.go (CategorizeEndpoints: the ready endpoints serve
// cluster traffic; the serving-terminating fallback is not modelled, no endpoint here is ever terminating).
// Not modelled: UDP and SCTP ports, sessionAffinity, nodePorts, externalIPs, load balancers, masquerading (every
// address is this machine's). One difference an upstream client could see through the userspace relay only: a
// connection to a ready endpoint whose port is closed is accepted and then reset, where through iptables the
// endpoint's own RST refuses it.
import { execFile, execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { connect, createServer, type Server, type Socket } from 'node:net';
import type { KubeObject } from '../../../src/kube/types.ts';
import type { ClusterEvent, InProcessApi } from '../cluster/contract.ts';
import { inCidr, type ClusterNetwork } from './cluster-network.ts';

const SERVICES = { group: '', resource: 'services' };
const SLICES = { group: 'discovery.k8s.io', resource: 'endpointslices' };

interface ServicePort { name?: string; port: number; protocol?: string }
interface Slice { ports?: { name?: string; port?: number; protocol?: string }[]; endpoints?: { addresses?: string[]; conditions?: { ready?: boolean } }[] }

interface Rule {
  ip: string;
  port: number;
  targets: { ip: string; port: number }[];
  next: number;
  server?: Server;
}

export type ProxyMode = 'iptables' | 'userspace';

export interface KubeProxy {
  /** how this cluster's Service traffic is forwarded: by the kernel (iptables DNAT) or by a relay in this process */
  mode: ProxyMode;
  /** resolves once the rules reflect every change seen so far (chains written, or listeners opened and closed) */
  synced(): Promise<void>;
  stop(): Promise<void>;
}

export interface KubeProxyOptions {
  /** 'iptables' takes the kernel's way where it can (also env KFU_KUBE_PROXY_MODE=iptables); the default is the relay */
  mode?: ProxyMode;
}

/** The prefixes of every chain this module makes: KFU-SVC-<octet>-<pid> (nat), KFU-FW-<octet>-<pid> (filter). */
const CHAIN_PATTERN = /^-N (KFU-(?:SVC|FW)-(\d+)-(\d+))$/;
const JUMP_COMMENT = 'kubeflow-upgrader embedded cluster services';

function iptables(args: string[]): string {
  return execFileSync('iptables', ['-w', ...args], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
}

function iptablesRestore(input: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = execFile('iptables-restore', ['-w', '--noflush'], (error, _out, err) => (error ? reject(new Error(`iptables-restore: ${err.trim() || error.message}`)) : resolve()));
    child.stdin!.end(input);
  });
}

/** Removes a chain of this module and every OUTPUT rule that jumps to it (synchronously: it also runs at exit). */
function removeChain(table: 'nat' | 'filter', chain: string): void {
  try {
    for (const line of iptables(['-t', table, '-S', 'OUTPUT']).split('\n')) {
      if (line.startsWith('-A OUTPUT ') && line.endsWith(` -j ${chain}`)) {
        // the rule as -S prints it, quotes kept: iptables-restore parses it the same way
        execFileSync('iptables-restore', ['-w', '--noflush'], { input: `*${table}\n${line.replace(/^-A /, '-D ')}\nCOMMIT\n`, stdio: ['pipe', 'ignore', 'ignore'] });
      }
    }
    iptables(['-t', table, '-F', chain]);
    iptables(['-t', table, '-X', chain]);
  } catch {
    // gone already
  }
}

/**
 * Removes the chains no live cluster owns: those of a process that is gone (killed before its stop or exit could run),
 * and any of `octet`, which this process's cluster has just claimed (cluster-network.ts: no live cluster shares it).
 */
function collectGarbage(octet: string): void {
  for (const table of ['nat', 'filter'] as const) {
    for (const line of iptables(['-t', table, '-S']).split('\n')) {
      const match = CHAIN_PATTERN.exec(line.trim());
      if (match && (match[2] === octet || !existsSync(`/proc/${match[3]}`))) removeChain(table, match[1]!);
    }
  }
}

/** what every cluster of this process must remove at exit, when its stop() did not run */
const atExit = new Set<() => void>();
let exitHook = false;

/** The kernel's way: this cluster's chains, made and jumped to; undefined where iptables is not there or refuses. */
function kernelChains(network: ClusterNetwork): { nat: string; filter: string; remove(): void } | undefined {
  if (process.getuid?.() !== 0) return undefined;
  const octet = network.serviceCidr.split('.')[1]!;
  const chains = { nat: `KFU-SVC-${octet}-${process.pid}`, filter: `KFU-FW-${octet}-${process.pid}` };
  try {
    collectGarbage(octet);
    execFileSync('iptables-restore', ['-w', '--noflush'], {
      stdio: ['pipe', 'ignore', 'pipe'],
      input: [
        '*nat', `:${chains.nat} - [0:0]`, `-I OUTPUT 1 -d ${network.serviceCidr} -m comment --comment "${JUMP_COMMENT}" -j ${chains.nat}`, 'COMMIT',
        // kube-proxy's filter jump takes new connections only (proxier.go: -m conntrack --ctstate NEW -j KUBE-SERVICES)
        '*filter', `:${chains.filter} - [0:0]`, `-I OUTPUT 1 -d ${network.serviceCidr} -m conntrack --ctstate NEW -m comment --comment "${JUMP_COMMENT}" -j ${chains.filter}`, 'COMMIT', '',
      ].join('\n'),
    });
  } catch {
    removeChain('nat', chains.nat);
    removeChain('filter', chains.filter);
    return undefined;
  }
  const remove = () => {
    atExit.delete(remove);
    removeChain('nat', chains.nat);
    removeChain('filter', chains.filter);
  };
  atExit.add(remove);
  if (!exitHook) {
    exitHook = true;
    process.on('exit', () => { for (const fn of [...atExit]) fn(); });
  }
  return { ...chains, remove };
}

/** iptables' `--probability` of one of n endpoints, as proxier.go's probability(n); the i-th rule of n gets n-i */
const probability = (n: number) => (1 / n).toFixed(10);

export function startKubeProxy(api: InProcessApi, network: ClusterNetwork, options: KubeProxyOptions = {}): KubeProxy {
  const rules = new Map<string, Rule>();
  const connections = new Set<Socket>();
  const dirty = new Set<string>();
  let scheduled = false;
  let stopped = false;
  let work: Promise<void> = Promise.resolve();
  // The relay unless asked for the kernel (the benches, and this module's own tests): under the test suite's parallel
  // workers every write waits for the machine's one xtables lock, and a rule then came later than the tests' waits
  // for a Service to answer allowed (CI, 2026-12-07).
  const wantedMode = options.mode ?? (process.env.KFU_KUBE_PROXY_MODE === 'iptables' ? 'iptables' : 'userspace');
  const kernel = wantedMode === 'userspace' ? undefined : kernelChains(network);
  const mode: ProxyMode = kernel ? 'iptables' : 'userspace';

  function wanted(namespace: string, name: string): Map<string, Omit<Rule, 'next'>> {
    const out = new Map<string, Omit<Rule, 'next'>>();
    const service = api.get(SERVICES, name, namespace);
    const spec = (service?.spec ?? {}) as { clusterIP?: string; ports?: ServicePort[]; type?: string };
    if (!service || !spec.clusterIP || spec.clusterIP === 'None' || spec.type === 'ExternalName' || !inCidr(spec.clusterIP, network.serviceCidr)) return out;
    const slices = api.list(SLICES, { namespace, labelSelector: `kubernetes.io/service-name=${name}` }) as unknown as Slice[];
    for (const port of spec.ports ?? []) {
      if ((port.protocol ?? 'TCP') !== 'TCP') continue;
      const targets: { ip: string; port: number }[] = [];
      for (const slice of slices) {
        const sp = (slice.ports ?? []).find((p) => (p.name ?? '') === (port.name ?? '') && (p.protocol ?? 'TCP') === 'TCP');
        if (!sp?.port) continue;
        for (const endpoint of slice.endpoints ?? []) {
          if (endpoint.conditions?.ready === false) continue;
          for (const ip of endpoint.addresses ?? []) targets.push({ ip, port: sp.port });
        }
      }
      out.set(`${namespace}/${name}/${port.name ?? ''}`, { ip: spec.clusterIP, port: port.port, targets });
    }
    return out;
  }

  // --- the kernel's way: the cluster's two chains, written whole on each sync (proxier.go syncProxyRules)

  function chainsText(chains: { nat: string; filter: string }): string {
    const nat = ['*nat', `:${chains.nat} - [0:0]`];
    const filter = ['*filter', `:${chains.filter} - [0:0]`];
    for (const [key, rule] of [...rules].sort(([a], [b]) => a.localeCompare(b))) {
      const [namespace, name, port] = key.split('/');
      const svcPort = `${namespace}/${name}${port ? `:${port}` : ''}`;
      const match = `-d ${rule.ip}/32 -p tcp -m tcp --dport ${rule.port}`;
      if (rule.targets.length === 0) {
        filter.push(`-A ${chains.filter} -m comment --comment "${svcPort} has no endpoints" ${match} -j REJECT`);
        continue;
      }
      rule.targets.forEach((target, i) => {
        const pick = i < rule.targets.length - 1 ? ` -m statistic --mode random --probability ${probability(rule.targets.length - i)}` : '';
        nat.push(`-A ${chains.nat} -m comment --comment "${svcPort}" ${match}${pick} -j DNAT --to-destination ${target.ip}:${target.port}`);
      });
    }
    return [...nat, 'COMMIT', ...filter, 'COMMIT', ''].join('\n');
  }

  // --- the userspace relay

  function relay(rule: Rule, client: Socket): void {
    connections.add(client);
    client.on('close', () => connections.delete(client));
    const target = rule.targets[rule.next++ % Math.max(1, rule.targets.length)];
    if (!target) {
      client.destroy();
      return;
    }
    client.pause();
    const upstream = connect({ host: target.ip, port: target.port });
    connections.add(upstream);
    upstream.on('close', () => connections.delete(upstream));
    upstream.on('connect', () => {
      upstream.pipe(client);
      client.pipe(upstream);
      client.resume();
    });
    upstream.on('error', () => client.resetAndDestroy());
    client.on('error', () => upstream.destroy());
  }

  async function open(rule: Rule): Promise<void> {
    const server = createServer({ pauseOnConnect: false }, (client) => relay(rule, client));
    await new Promise<void>((resolve) => {
      server.once('error', (error) => {
        console.error(`kube-proxy: cannot serve ${rule.ip}:${rule.port}: ${error.message}`);
        resolve();
      });
      server.listen(rule.port, rule.ip, () => {
        rule.server = server;
        resolve();
      });
    });
  }

  const close = (rule: Rule) => new Promise<void>((resolve) => {
    const server = rule.server;
    rule.server = undefined;
    if (!server) return resolve();
    server.close(() => resolve());
  });

  async function sync(serviceKey: string): Promise<void> {
    const [namespace, name] = serviceKey.split('/') as [string, string];
    const next = stopped ? new Map<string, Omit<Rule, 'next'>>() : wanted(namespace, name);
    for (const [k, rule] of [...rules]) {
      if (!k.startsWith(`${serviceKey}/`)) continue;
      const w = next.get(k);
      if (!w || w.ip !== rule.ip || w.port !== rule.port) {
        rules.delete(k);
        await close(rule);
      }
    }
    for (const [k, w] of next) {
      let rule = rules.get(k);
      if (!rule) {
        rule = { ...w, next: 0 };
        rules.set(k, rule);
      }
      rule.targets = w.targets;
      if (kernel) continue;
      if (rule.targets.length > 0 && !rule.server) await open(rule);
      else if (rule.targets.length === 0 && rule.server) await close(rule); // "has no endpoints": REJECT
    }
  }

  // The kernel's rules are written whole, so a write costs in proportion to the cluster's Services; writes are paced
  // so that at most a tenth of the time goes to them, changes meanwhile gathered into the next one (kube-proxy paces
  // its syncs too: --iptables-min-sync-period, pkg/util/async/bounded_frequency_runner.go). As kube-proxy's runner, the
  // pacing allows a burst of two writes (burstSyncs = 2, pkg/proxy/iptables/proxier.go NewProxier), and only a write
  // that changes the rules counts: a Service's creation and its first ready endpoint are both written at once, rather
  // than the endpoint waiting out the pause the Service's write began (a Pod started just after the endpoint turned
  // ready would be refused, and the simulated kubelet starts one within milliseconds).
  const BURST = 2;
  let written = '';
  /** ms per write credit: nine times the last write's time, so that writes take at most a tenth of the time */
  let interval = 0;
  let credit = BURST;
  let creditAt = performance.now();
  const refill = () => {
    const now = performance.now();
    credit = interval > 0 ? Math.min(BURST, credit + (now - creditAt) / interval) : BURST;
    creditAt = now;
  };
  const flush = () => {
    scheduled = false;
    const keys = [...dirty];
    dirty.clear();
    work = work.then(async () => {
      for (const k of keys) await sync(k);
      if (!kernel || stopped || chainsText(kernel) === written) return;
      refill();
      if (credit < 1) {
        await new Promise((r) => setTimeout(r, (1 - credit) * interval));
        if (stopped) return;
        // what changed meanwhile goes into this write
        const more = [...dirty];
        dirty.clear();
        for (const k of more) await sync(k);
        refill();
      }
      const text = chainsText(kernel);
      if (text === written) return;
      credit -= 1;
      const started = performance.now();
      await iptablesRestore(text);
      written = text;
      interval = 9 * (performance.now() - started);
    }).catch((error: unknown) => console.error(`kube-proxy: ${(error as Error).message}`));
  };
  const enqueue = (k: string) => {
    dirty.add(k);
    if (!scheduled) {
      scheduled = true;
      setImmediate(flush);
    }
  };

  const onEvent = ({ ref, object }: ClusterEvent) => {
    if (stopped) return;
    const namespace = object.metadata.namespace ?? '';
    if (ref.group === '' && ref.resource === 'services') enqueue(`${namespace}/${object.metadata.name}`);
    else if (ref.group === SLICES.group && ref.resource === SLICES.resource) {
      const service = (object as KubeObject).metadata.labels?.['kubernetes.io/service-name'];
      if (service) enqueue(`${namespace}/${service}`);
    }
  };
  const unsubscribe = api.subscribe(onEvent);
  for (const service of api.list(SERVICES)) enqueue(`${service.metadata.namespace}/${service.metadata.name}`);

  return {
    mode,
    async synced() {
      // the cluster delivers its events after the write returns (a setImmediate, as a watch does): let those arrive
      await new Promise((r) => setImmediate(r));
      for (let seen: Promise<void> | undefined; scheduled || dirty.size > 0 || seen !== work;) {
        if (scheduled || dirty.size > 0) await new Promise((r) => setImmediate(r));
        else await (seen = work);
      }
    },
    async stop() {
      stopped = true;
      unsubscribe();
      await work;
      kernel?.remove();
      for (const rule of rules.values()) await close(rule);
      rules.clear();
      for (const s of connections) s.destroy();
    },
  };
}
