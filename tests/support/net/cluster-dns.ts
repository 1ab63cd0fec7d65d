// The cluster DNS server: what CoreDNS with the `kubernetes` plugin answers in a MicroK8s or kubeadm cluster, on port
// 53 (UDP and TCP) of the cluster's DNS address (cluster-network.ts). Go's resolver, the one rclone and restic use,
// only asks port 53 of the nameservers in /etc/resolv.conf, which the kubelet points here (kubelet/pod-network.ts).
// Upstream: coredns/coredns plugin/kubernetes, which follows kubernetes/dns schema.md (parse.go: <service>.<namespace>.svc.<zone> and
// <a-b-c-d>.<namespace>.pod.<zone>; kubernetes.go, Records/findServices: a ClusterIP Service answers its cluster IP, a
// headless one the addresses of its ready endpoints, an ExternalName one a CNAME; a missing namespace, Service or a
// headless Service without ready endpoints is NXDOMAIN (IsNameError: errNoItems, errNsNotExposed); a name that exists
// without records of the asked type is NOERROR without answers; `ttl` defaults to 5 s), plugin/pkg/dnsutil and
// core/dnsserver/server.go (a name in no zone the server serves is REFUSED: nothing is forwarded, the sandbox has no
// other network). Answers are authoritative (AA) and say recursion is available (RA), as CoreDNS's do; Go's resolver
// takes a reply with neither for a lame referral (golang/go src/net/dnsclient_unix.go, checkHeader).
// The wire format (RFC 1035 sections 4.1-4.2: header, question, resource records, name compression, TCP's two-byte
// length prefix) is written by hand: no DNS package is installed in this checkout. Only what a stub resolver sends is
// read: one question, no compression in it; EDNS OPT records are ignored (RFC 6891 section 7: a server without EDNS
// answers without OPT), and a UDP answer longer than 512 bytes is cut and marked TC, so the client asks again by TCP.
import { createSocket, type Socket as UdpSocket } from 'node:dgram';
import { createServer, type Server, type Socket } from 'node:net';
import type { KubeObject } from '../../../src/kube/types.ts';
import type { InProcessApi } from '../cluster/contract.ts';
import { clusterNetwork, randomPairOctet, type ClusterNetwork } from './cluster-network.ts';

const SERVICES = { group: '', resource: 'services' };
const NAMESPACES = { group: '', resource: 'namespaces' };
const SLICES = { group: 'discovery.k8s.io', resource: 'endpointslices' };

const TYPE_A = 1;
const TYPE_CNAME = 5;
const CLASS_IN = 1;
const RCODE = { ok: 0, formErr: 1, servFail: 2, nxDomain: 3, notImp: 4, refused: 5 } as const;
const TTL = 5;

interface Question { name: string; type: number; klass: number; end: number }
type Answer = { type: typeof TYPE_A; ip: string } | { type: typeof TYPE_CNAME; target: string };
interface Lookup { rcode: number; answers: Answer[] }

function readQuestion(msg: Buffer): Question | undefined {
  if (msg.length < 12 || msg.readUInt16BE(4) !== 1) return undefined;
  const labels: string[] = [];
  let at = 12;
  for (;;) {
    const len = msg[at];
    if (len === undefined || len > 63) return undefined; // a compression pointer has no place in a stub's question
    at++;
    if (len === 0) break;
    if (at + len > msg.length) return undefined;
    labels.push(msg.toString('latin1', at, at + len));
    at += len;
  }
  if (at + 4 > msg.length) return undefined;
  return { name: labels.join('.').toLowerCase(), type: msg.readUInt16BE(at), klass: msg.readUInt16BE(at + 2), end: at + 4 };
}

function encodeName(name: string): Buffer {
  const parts = name.split('.').filter(Boolean).map((label) => {
    const bytes = Buffer.from(label, 'latin1');
    return Buffer.concat([Buffer.from([bytes.length]), bytes]);
  });
  return Buffer.concat([...parts, Buffer.from([0])]);
}

/** The reply to `query`: its id, opcode, RD bit and question echoed, the answers under a pointer to the question's name. */
export function encodeReply(query: Buffer, question: Question | undefined, lookup: Lookup, maxBytes = 65535): Buffer {
  const header = Buffer.alloc(12);
  query.copy(header, 0, 0, 2);
  const opcodeAndRd = (query[2] ?? 0) & 0x79;
  const records: Buffer[] = [];
  if (question) {
    for (const answer of lookup.answers) {
      const rdata = answer.type === TYPE_A ? Buffer.from(answer.ip.split('.').map(Number)) : encodeName(answer.target);
      const rr = Buffer.alloc(12);
      rr.writeUInt16BE(0xc00c, 0); // the question's name, at offset 12
      rr.writeUInt16BE(answer.type, 2);
      rr.writeUInt16BE(CLASS_IN, 4);
      rr.writeUInt32BE(TTL, 6);
      rr.writeUInt16BE(rdata.length, 10);
      records.push(Buffer.concat([rr, rdata]));
    }
  }
  const questionBytes = question ? query.subarray(12, question.end) : Buffer.alloc(0);
  let size = 12 + questionBytes.length;
  let kept = 0;
  for (const r of records) {
    if (size + r.length > maxBytes) break;
    size += r.length;
    kept++;
  }
  const truncated = kept < records.length;
  header[2] = 0x80 | opcodeAndRd | 0x04 | (truncated ? 0x02 : 0); // QR, opcode, AA, TC, RD
  header[3] = 0x80 | lookup.rcode; // RA
  header.writeUInt16BE(question ? 1 : 0, 4);
  header.writeUInt16BE(kept, 6);
  return Buffer.concat([header, questionBytes, ...records.slice(0, kept)]);
}

interface ServiceSpec { type?: string; clusterIP?: string; externalName?: string; publishNotReadyAddresses?: boolean }

/** The kubernetes plugin's answer for one question, read from the API as its informers would see it. */
export function lookup(api: InProcessApi, zone: string, name: string, type: number): Lookup {
  const nx: Lookup = { rcode: RCODE.nxDomain, answers: [] };
  const empty: Lookup = { rcode: RCODE.ok, answers: [] };
  if (name !== zone && !name.endsWith(`.${zone}`)) return { rcode: RCODE.refused, answers: [] };
  const segments = name === zone ? [] : name.slice(0, -(zone.length + 1)).split('.');
  const namespaceExists = (ns: string) => api.get(NAMESPACES, ns) !== undefined;
  const kind = segments.at(-1);
  if (segments.length === 0 || (segments.length === 1 && (kind === 'svc' || kind === 'pod'))) return empty;
  if (kind === 'pod') {
    // <a-b-c-d>.<namespace>.pod.<zone> ("pods insecure", the mode MicroK8s' and kubeadm's Corefiles set)
    if (segments.length === 2) return namespaceExists(segments[0]!) ? empty : nx;
    if (segments.length !== 3 || !namespaceExists(segments[1]!)) return nx;
    const ip = segments[0]!.split('-');
    if (ip.length !== 4 || ip.some((p) => !/^\d{1,3}$/.test(p) || Number(p) > 255)) return nx;
    return type === TYPE_A ? { rcode: RCODE.ok, answers: [{ type: TYPE_A, ip: ip.join('.') }] } : empty;
  }
  if (kind !== 'svc') return nx;
  if (segments.length === 2) return namespaceExists(segments[0]!) ? empty : nx;
  if (segments.length !== 3) return nx; // <endpoint>.<service>.<namespace>.svc (headless hostnames) is not modelled
  const [serviceName, namespace] = segments as [string, string];
  if (!namespaceExists(namespace)) return nx;
  const service = api.get(SERVICES, serviceName, namespace);
  if (!service) return nx;
  const spec = (service.spec ?? {}) as ServiceSpec;
  if (spec.type === 'ExternalName') {
    return spec.externalName ? { rcode: RCODE.ok, answers: [{ type: TYPE_CNAME, target: spec.externalName }] } : nx;
  }
  if (spec.clusterIP && spec.clusterIP !== 'None') {
    return type === TYPE_A ? { rcode: RCODE.ok, answers: [{ type: TYPE_A, ip: spec.clusterIP }] } : empty;
  }
  const ips = headlessAddresses(api, service, !!spec.publishNotReadyAddresses);
  if (ips.length === 0) return nx;
  return type === TYPE_A ? { rcode: RCODE.ok, answers: ips.map((ip) => ({ type: TYPE_A, ip })) } : empty;
}

function headlessAddresses(api: InProcessApi, service: KubeObject, includeNotReady: boolean): string[] {
  const slices = api.list(SLICES, { namespace: service.metadata.namespace, labelSelector: `kubernetes.io/service-name=${service.metadata.name}` });
  const ips = new Set<string>();
  for (const slice of slices) {
    if ((slice as { addressType?: string }).addressType !== 'IPv4') continue;
    for (const endpoint of ((slice as { endpoints?: { addresses?: string[]; conditions?: { ready?: boolean } }[] }).endpoints ?? [])) {
      if (endpoint.conditions?.ready === false && !includeNotReady) continue;
      for (const ip of endpoint.addresses ?? []) ips.add(ip);
    }
  }
  return [...ips];
}

export interface ClusterDns {
  readonly network: ClusterNetwork;
  /** starts answering from this API (until then every query is SERVFAIL) */
  attach(api: InProcessApi): void;
  /** how many questions were answered, for tests */
  readonly queries: number;
  stop(): Promise<void>;
}

function answer(api: InProcessApi | undefined, zone: string, query: Buffer, maxBytes: number): Buffer | undefined {
  if (query.length < 12 || (query[2]! & 0x80) !== 0) return undefined; // not a query
  const question = readQuestion(query);
  if (!question) return encodeReply(query, undefined, { rcode: RCODE.formErr, answers: [] });
  if (((query[2]! >> 3) & 0x0f) !== 0) return encodeReply(query, question, { rcode: RCODE.notImp, answers: [] });
  if (!api) return encodeReply(query, question, { rcode: RCODE.servFail, answers: [] });
  if (question.klass !== CLASS_IN) return encodeReply(query, question, { rcode: RCODE.refused, answers: [] });
  return encodeReply(query, question, lookup(api, zone, question.name, question.type), maxBytes);
}

async function listenOn(ip: string): Promise<{ udp: UdpSocket; tcp: Server }> {
  const udp = createSocket('udp4');
  await new Promise<void>((resolve, reject) => {
    udp.once('error', reject);
    udp.bind(53, ip, () => { udp.off('error', reject); resolve(); });
  });
  const tcp = createServer();
  try {
    await new Promise<void>((resolve, reject) => {
      tcp.once('error', reject);
      tcp.listen(53, ip, () => { tcp.off('error', reject); resolve(); });
    });
  } catch (error) {
    udp.close();
    throw error;
  }
  return { udp, tcp };
}

/**
 * Draws a network (cluster-network.ts) whose DNS address is free and starts its DNS server there. Throws when this
 * process may not bind port 53 (it needs root, or CAP_NET_BIND_SERVICE).
 */
export async function claimClusterDns(clusterDomain = 'cluster.local'): Promise<ClusterDns> {
  for (let attempt = 0; ; attempt++) {
    const network = clusterNetwork(randomPairOctet(), clusterDomain);
    let sockets: { udp: UdpSocket; tcp: Server };
    try {
      sockets = await listenOn(network.dnsIp);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === 'EADDRINUSE' && attempt < 200) continue;
      throw new Error(`the cluster DNS server cannot listen on ${network.dnsIp}:53 (${code ?? (error as Error).message}); it needs root or CAP_NET_BIND_SERVICE`);
    }
    return serve(network, sockets);
  }
}

function serve(network: ClusterNetwork, { udp, tcp }: { udp: UdpSocket; tcp: Server }): ClusterDns {
  let api: InProcessApi | undefined;
  let queries = 0;
  const zone = network.clusterDomain;
  udp.on('message', (msg, peer) => {
    queries++;
    let reply: Buffer | undefined;
    try {
      reply = answer(api, zone, msg, 512);
    } catch {
      reply = encodeReply(msg, readQuestion(msg), { rcode: RCODE.servFail, answers: [] });
    }
    if (reply) udp.send(reply, peer.port, peer.address);
  });
  const connections = new Set<Socket>();
  tcp.on('connection', (socket) => {
    connections.add(socket);
    socket.on('close', () => connections.delete(socket));
    socket.on('error', () => socket.destroy());
    let pending = Buffer.alloc(0);
    socket.on('data', (chunk: Buffer) => {
      pending = Buffer.concat([pending, chunk]);
      while (pending.length >= 2 && pending.length >= 2 + pending.readUInt16BE(0)) {
        const msg = pending.subarray(2, 2 + pending.readUInt16BE(0));
        pending = pending.subarray(2 + msg.length);
        queries++;
        let reply: Buffer | undefined;
        try {
          reply = answer(api, zone, msg, 65535);
        } catch {
          reply = encodeReply(msg, readQuestion(msg), { rcode: RCODE.servFail, answers: [] });
        }
        if (!reply) continue;
        const length = Buffer.alloc(2);
        length.writeUInt16BE(reply.length);
        socket.write(Buffer.concat([length, reply]));
      }
    });
  });
  return {
    network,
    attach(next) { api = next; },
    get queries() { return queries; },
    stop: () => new Promise<void>((resolve) => {
      for (const s of connections) s.destroy();
      udp.close(() => tcp.close(() => resolve()));
    }),
  };
}
