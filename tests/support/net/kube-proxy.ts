// kube-proxy for the embedded cluster's loopback network: each TCP port of each Service with a cluster IP in that
// network is served on <clusterIP>:<port>, and every connection is relayed to one ready endpoint of the port, read from
// the Service's EndpointSlices as kube-proxy's EndpointSlice informer reads them, the endpoints taken in turn.
// Upstream (kubernetes/kubernetes):
// - pkg/proxy/iptables/proxier.go (syncProxyRules: a Service port with ready endpoints gets its KUBE-SVC chain, one of
//   the endpoints per new connection; a port with none gets `-j REJECT` with the comment "has no endpoints", which the
//   client sees as ECONNREFUSED: here nothing listens on the address then; established connections stay up when the
//   rules change, as conntrack keeps them);
// - pkg/proxy/endpointslicecache.go and pkg/proxy/topology.go (CategorizeEndpoints: the ready endpoints serve cluster
//   traffic; the serving-terminating fallback is not modelled, no endpoint here is ever terminating);
// - the removed userspace proxier's pkg/proxy/userspace/roundrobin.go for the turn order (iptables picks at random).
// Not modelled: UDP and SCTP ports, sessionAffinity, nodePorts, externalIPs, load balancers. One difference an upstream
// client could see: a connection to a ready endpoint whose port is closed is accepted here and then reset, where
// through iptables the endpoint's own RST refuses it.
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
  /** the listen in progress, so that a quick change of endpoints does not open the address twice */
  opening?: Promise<void>;
}

export interface KubeProxy {
  /** resolves once the rules reflect every change seen so far (listeners opened and closed) */
  synced(): Promise<void>;
  stop(): Promise<void>;
}

export function startKubeProxy(api: InProcessApi, network: ClusterNetwork): KubeProxy {
  const rules = new Map<string, Rule>();
  const connections = new Set<Socket>();
  const dirty = new Set<string>();
  let scheduled = false;
  let stopped = false;
  let work: Promise<void> = Promise.resolve();

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
      if (rule.targets.length > 0 && !rule.server) await open(rule);
      else if (rule.targets.length === 0 && rule.server) await close(rule); // "has no endpoints": REJECT
    }
  }

  const flush = () => {
    scheduled = false;
    const keys = [...dirty];
    dirty.clear();
    work = work.then(async () => {
      for (const k of keys) await sync(k);
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
    async synced() {
      while (scheduled || dirty.size > 0) await new Promise((r) => setImmediate(r));
      await work;
    },
    async stop() {
      stopped = true;
      unsubscribe();
      await work;
      for (const rule of rules.values()) await close(rule);
      rules.clear();
      for (const s of connections) s.destroy();
    },
  };
}
