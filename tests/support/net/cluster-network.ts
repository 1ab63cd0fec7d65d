// The addresses of one embedded cluster's network, all on this machine's loopback interface (Linux answers on every
// address of 127.0.0.0/8): a Service range (--service-cluster-ip-range), a Pod range (the nodes' podCIDR, handed out
// by the kubelet's network plugin) and the cluster DNS address inside the Service range, as kubeadm puts kube-dns on
// the tenth address of it (kubernetes/kubernetes cmd/kubeadm/app/constants/constants.go, GetDNSIP).
// Each cluster takes a random pair of /16s, 127.<2k>.0.0/16 for Services and 127.<2k+1>.0.0/16 for Pods, never
// 127.0.0.0/16 (127.0.0.1, 127.0.1.1 and the like belong to the machine). The pair is claimed by binding the DNS port
// on its DNS address (dns.ts): a second cluster, in this process or a parallel test process, that drew the same pair
// finds the port taken and draws again, so two clusters never share an address.
// The Pod range's allocator follows the host-local IPAM plugin that MicroK8s' and kubeadm's CNI setups use
// (containernetworking/plugins plugins/ipam/host-local/backend/allocator/allocator.go: the next free address after the
// last one given, skipping the network's first address and its broadcast, released when the Pod's sandbox goes).
import { randomInt } from 'node:crypto';

export interface ClusterNetwork {
  /** the Service range, e.g. 127.42.0.0/16 */
  serviceCidr: string;
  /** the Pod range, e.g. 127.43.0.0/16 */
  podCidr: string;
  /** the cluster DNS server's address (port 53, UDP and TCP) */
  dnsIp: string;
  /** the cluster domain (kubelet --cluster-domain) */
  clusterDomain: string;
  /** a Pod IP for a new Pod sandbox */
  allocatePodIp(): string;
  /** gives a Pod's IP back once its sandbox is gone */
  releasePodIp(ip: string): void;
}

export function ipToNumber(ip: string): number | undefined {
  const parts = ip.split('.');
  if (parts.length !== 4 || parts.some((p) => !/^\d{1,3}$/.test(p) || Number(p) > 255)) return undefined;
  return parts.reduce((n, p) => n * 256 + Number(p), 0);
}

export function numberToIp(n: number): string {
  return [24, 16, 8, 0].map((s) => (n >>> s) & 255).join('.');
}

/** whether `ip` lies in `cidr` */
export function inCidr(ip: string, cidr: string): boolean {
  const [base, bits] = cidr.split('/');
  const n = ipToNumber(ip);
  const b = ipToNumber(base ?? '');
  if (n === undefined || b === undefined) return false;
  const size = 2 ** (32 - Number(bits));
  return Math.floor(n / size) === Math.floor(b / size);
}

/** A random even second octet 2..252: the candidate pair 127.k.0.0/16 (Services) and 127.k+1.0.0/16 (Pods). */
export function randomPairOctet(): number {
  return 2 * randomInt(1, 127);
}

export function clusterNetwork(octet: number, clusterDomain = 'cluster.local'): ClusterNetwork {
  const podBase = ipToNumber(`127.${octet + 1}.0.0`)!;
  const size = 2 ** 16;
  const used = new Set<number>();
  let last = 1; // host-local starts at the range's first usable address, .0.2 here (.0.1 is the gateway's)
  return {
    serviceCidr: `127.${octet}.0.0/16`,
    podCidr: `127.${octet + 1}.0.0/16`,
    dnsIp: `127.${octet}.0.10`,
    clusterDomain,
    allocatePodIp() {
      for (let i = 1; i <= size; i++) {
        const offset = (last + i) % size;
        if (offset < 2 || offset === size - 1 || used.has(offset)) continue;
        used.add(offset);
        last = offset;
        return numberToIp(podBase + offset);
      }
      throw new Error(`no free address in the Pod range 127.${octet + 1}.0.0/16`);
    },
    releasePodIp(ip) {
      const n = ipToNumber(ip);
      if (n !== undefined) used.delete(n - podBase);
    },
  };
}
