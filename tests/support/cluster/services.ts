// Service ClusterIP and nodePort allocation, as the API server's Service registry does it:
// - kubernetes/kubernetes pkg/registry/core/service/storage/alloc.go (allocateCreate, initIPFamilyFields,
//   allocClusterIPs, initNodePorts, updateNodePorts) and storage.go (patchAllocatedValues on update);
// - pkg/registry/core/service/ipallocator (bitmap allocator over --service-cluster-ip-range; ErrAllocated,
//   ErrNotInRange; dynamic allocation prefers the upper part of the range, the lower "static band" is left for IPs
//   users ask for: calculateRangeOffset);
// - pkg/registry/core/service/portallocator (--service-node-port-range, 30000-32767 by default);
// - pkg/apis/core/validation/validation.go (ValidateService: clusterIPs of ExternalName, nodePort of a ClusterIP
//   Service; ValidateServiceUpdate / validateUpgradeDowngradeClusterIPs: "may not change once set").
// The cluster is single-stack IPv4 (MicroK8s' default) unless a second range of the other family makes it dual-stack;
// the families a Service gets, or is refused, follow initIPFamilyFields (ip-families.ts), each family's addresses come
// from its own range (service-ip-range.ts).
import type { KubeObject } from '../../../src/kube/types.ts';
import { forbiddenField, invalid, invalidValue, type FieldError } from './errors.ts';
import { goStrings, initFamiliesOnCreate } from './ip-families.ts';
import { familyOf, IpRange, type IpFamily } from './service-ip-range.ts';
import { serviceSpecProblems } from './service-validation.ts';

export interface ServiceNetwork {
  /** --service-cluster-ip-range, e.g. MicroK8s' 10.152.183.0/24 */
  serviceCidr: string;
  /**
   * the second CIDR of --service-cluster-ip-range, of the other family: the cluster is then dual-stack, the first
   * range's family its primary (e.g. fd00:10:152::/112 beside 10.152.0.0/16)
   */
  secondaryServiceCidr?: string;
  /** --service-node-port-range */
  nodePorts: { from: number; to: number };
}

/** MicroK8s' kube-apiserver arguments (snap microk8s: args/kube-apiserver) and kube-apiserver's default port range */
export const MICROK8S_NETWORK: ServiceNetwork = { serviceCidr: '10.152.183.0/24', nodePorts: { from: 30000, to: 32767 } };

/**
 * The embedded cluster's default: a /16 that holds MicroK8s' /24, so that generated datasets of thousands of profiles
 * (each with its KFP Services) fit, where a real MicroK8s would need its range widened. Tests about a crowded range
 * pass MICROK8S_NETWORK.
 */
export const DEFAULT_NETWORK: ServiceNetwork = { serviceCidr: '10.152.0.0/16', nodePorts: { from: 30000, to: 32767 } };

/** the IPv6 Service range of a dual-stack embedded cluster (a unique local /112, as kubeadm's dual-stack examples use) */
export const DUAL_STACK_IPV6_RANGE = 'fd00:10:152::/112';

interface Port { name?: string; port?: number; protocol?: string; nodePort?: number }
interface ServiceSpec {
  type?: string;
  clusterIP?: string;
  clusterIPs?: string[];
  ipFamilies?: string[];
  ipFamilyPolicy?: string;
  selector?: Record<string, string>;
  ports?: Port[];
}

function specOf(o: KubeObject): ServiceSpec {
  return (o.spec ??= {}) as ServiceSpec;
}

/** allocIPs' refusal of an asked-for address: the clusterIPs as Go's %#v prints a []string */
function allocationRefusal(clusterIPs: readonly string[], ip: string, problem: string): FieldError {
  return { field: 'spec.clusterIPs', type: 'FieldValueInvalid', text: `Invalid value: ${goStrings(clusterIPs)}: failed to allocate IP ${ip}: ${problem}` };
}

const needsClusterIP = (s: ServiceSpec) => s.type !== 'ExternalName' && s.clusterIP !== 'None';
const needsNodePorts = (s: ServiceSpec) => s.type === 'NodePort' || s.type === 'LoadBalancer';

/** The cluster's allocations, kept beside the store: which IP and which nodePort each Service holds. */
export class ServiceAllocator {
  /** one range per configured family, the primary first */
  private readonly ranges: IpRange[];
  private readonly ports = new Set<number>();

  constructor(private readonly network: ServiceNetwork, private readonly random: () => number) {
    this.ranges = [new IpRange(network.serviceCidr)];
    if (network.secondaryServiceCidr) {
      const second = new IpRange(network.secondaryServiceCidr);
      if (second.family === this.ranges[0]!.family) throw new Error(`secondaryServiceCidr must be of the other family than ${network.serviceCidr}, got ${network.secondaryServiceCidr}`);
      this.ranges.push(second);
    }
  }

  get range(): string {
    return this.network.serviceCidr;
  }

  /** the families the cluster is configured for, the primary first */
  get families(): IpFamily[] {
    return this.ranges.map((r) => r.family);
  }

  /** the first address of the primary range, which the API server gives its own `kubernetes` Service */
  get firstIp(): string {
    return this.ranges[0]!.firstIp;
  }

  private rangeOf(family: string | undefined): IpRange | undefined {
    return this.ranges.find((r) => r.family === family);
  }

  /**
   * Defaults and allocates a new Service in place (`obj` is the object about to be stored), or throws the refusal the
   * real registry answers. Nothing is reserved here: the store's write does that (track), so a dry run or a refusal
   * later in the create leaves the allocations as they were.
   */
  prepareCreate(obj: KubeObject): void {
    const spec = specOf(obj);
    const name = obj.metadata.name ?? '';
    spec.type ??= 'ClusterIP';
    const errors: FieldError[] = [];
    // v1 → internal conversion keeps clusterIP and clusterIPs[0] the same (pkg/apis/core/v1/conversion.go)
    if (spec.clusterIP && !spec.clusterIPs?.length) spec.clusterIPs = [spec.clusterIP];
    else if (!spec.clusterIP && spec.clusterIPs?.length) spec.clusterIP = spec.clusterIPs[0];
    else if (spec.clusterIP && spec.clusterIPs?.length && spec.clusterIP !== spec.clusterIPs[0])
      errors.push({ field: 'spec.clusterIPs', type: 'FieldValueInvalid', text: `Invalid value: ${goStrings(spec.clusterIPs)}: first value must match \`clusterIP\`` });
    if (spec.type === 'ExternalName') {
      if (spec.clusterIPs?.length) errors.push(forbiddenField('spec.clusterIPs', 'may not be set for ExternalName services'));
    } else if (spec.clusterIP !== 'None') {
      for (const [i, ip] of (spec.clusterIPs ?? []).entries())
        if (familyOf(ip) === undefined) errors.push(invalidValue(`spec.clusterIPs[${i}]`, ip, 'must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)'));
    }
    if (!needsNodePorts(spec))
      for (const [i, p] of (spec.ports ?? []).entries())
        if (p.nodePort) errors.push(forbiddenField(`spec.ports[${i}].nodePort`, `may not be used when \`type\` is '${spec.type}'`));
    if (errors.length) throw invalid('Service', '', name, errors);
    if (spec.type !== 'ExternalName') this.allocate(name, spec);
    // the registry allocates (BeginCreate) before the strategy validates (staging/src/k8s.io/apiserver/pkg/registry/
    // generic/registry/store.go, Create)
    const specErrors = serviceSpecProblems(spec);
    if (specErrors.length) throw invalid('Service', '', name, specErrors);
  }

  private allocate(name: string, spec: ServiceSpec): void {
    const familyErrors = initFamiliesOnCreate(spec, this.families);
    if (familyErrors.length) throw invalid('Service', '', name, familyErrors);
    if (spec.clusterIP === 'None') {
      spec.clusterIPs = ['None'];
    } else {
      // allocClusterIPs: one address per family, the asked-for ones checked, the others the next free
      const asked = spec.clusterIPs ?? [];
      const ips = (spec.ipFamilies ?? []).map((family, i) => {
        const range = this.rangeOf(family)!;
        const ip = asked[i];
        if (!ip) return range.next(this.random);
        const problem = range.problem(ip);
        if (problem) throw invalid('Service', '', name, [allocationRefusal(spec.clusterIPs ?? [], ip, problem)]);
        return ip;
      });
      spec.clusterIP = ips[0];
      spec.clusterIPs = ips;
    }
    if (needsNodePorts(spec)) this.allocateNodePorts(name, spec.ports ?? [], new Set());
  }

  /**
   * An update: fills what the client left out from the stored Service (storage.go, patchAllocatedValues: clusterIP,
   * clusterIPs, and nodePorts by port name), refuses a changed clusterIP, and allocates nodePorts a port newly needs.
   */
  prepareUpdate(next: KubeObject, old: KubeObject): void {
    const spec = specOf(next);
    const before = specOf(old);
    const name = next.metadata.name ?? '';
    spec.type ??= 'ClusterIP';
    if (needsClusterIP(before) && needsClusterIP(spec)) {
      if (!spec.clusterIP) spec.clusterIP = before.clusterIP;
      if (!spec.clusterIPs?.length && before.clusterIPs?.length) spec.clusterIPs = [...before.clusterIPs];
    }
    if (spec.clusterIP && !spec.clusterIPs?.length) spec.clusterIPs = [spec.clusterIP];
    if (spec.type !== 'ExternalName' && before.type !== 'ExternalName') {
      spec.ipFamilyPolicy ??= before.ipFamilyPolicy;
      spec.ipFamilies ??= before.ipFamilies;
      const oldIps = before.clusterIPs ?? [];
      const newIps = spec.clusterIPs ?? [];
      const errors: FieldError[] = [];
      if (!(oldIps[0] === 'None' && newIps[0] === 'None')) {
        if (newIps.length === 0 && oldIps.length > 0) errors.push({ field: 'spec.clusterIPs[0]', type: 'FieldValueInvalid', text: `Invalid value: ${goStrings(newIps)}: primary clusterIP can not be unset` });
        for (const [i, ip] of oldIps.entries()) if (i < newIps.length && newIps[i] !== ip) errors.push({ field: `spec.clusterIPs[${i}]`, type: 'FieldValueInvalid', text: `Invalid value: ${goStrings(newIps)}: may not change once set` });
      }
      if (errors.length) throw invalid('Service', '', name, errors);
    }
    if (needsNodePorts(before) && needsNodePorts(spec)) {
      const used = new Set((spec.ports ?? []).map((p) => p.nodePort).filter((n): n is number => !!n));
      const byName = new Map((before.ports ?? []).map((p) => [p.name ?? '', p.nodePort]));
      for (const p of spec.ports ?? []) {
        const previous = byName.get(p.name ?? '');
        if (!p.nodePort && previous && !used.has(previous)) p.nodePort = previous;
      }
    }
    if (!needsNodePorts(spec))
      for (const [i, p] of (spec.ports ?? []).entries())
        if (p.nodePort) throw invalid('Service', '', name, [forbiddenField(`spec.ports[${i}].nodePort`, `may not be used when \`type\` is '${spec.type}'`)]);
    if (needsNodePorts(spec)) {
      const mine = new Set(needsNodePorts(before) ? (before.ports ?? []).map((p) => p.nodePort ?? 0) : []);
      this.allocateNodePorts(name, spec.ports ?? [], mine);
    }
    if (spec.type === 'ExternalName' && before.type !== 'ExternalName') {
      delete spec.clusterIP;
      delete spec.clusterIPs;
    } else if (spec.type !== 'ExternalName' && before.type === 'ExternalName' && spec.clusterIP !== 'None') {
      // CASE A of updateClusterIPs: from ExternalName to a type with a cluster IP allocates as a create does
      const primary = this.ranges[0]!;
      const ip = spec.clusterIP || primary.next(this.random);
      const problem = spec.clusterIP ? (this.rangeOf(familyOf(ip)) ?? primary).problem(ip) : undefined;
      if (problem) throw invalid('Service', '', name, [allocationRefusal([ip], ip, problem)]);
      spec.clusterIP = ip;
      spec.clusterIPs = [ip];
      spec.ipFamilyPolicy ??= 'SingleStack';
      spec.ipFamilies ??= [primary.family];
    }
    const specErrors = serviceSpecProblems(spec);
    if (specErrors.length) throw invalid('Service', '', name, specErrors);
  }

  /** keeps the allocations in step with what the store holds (called on every write and removal of a Service) */
  track(before: KubeObject | undefined, after: KubeObject | undefined): void {
    for (const ip of this.ipsOf(before)) this.rangeOf(familyOf(ip))?.remove(ip);
    for (const port of this.portsOf(before)) this.ports.delete(port);
    for (const ip of this.ipsOf(after)) this.rangeOf(familyOf(ip))?.add(ip);
    for (const port of this.portsOf(after)) this.ports.add(port);
  }

  private ipsOf(o: KubeObject | undefined): string[] {
    if (!o) return [];
    const spec = (o.spec ?? {}) as ServiceSpec;
    if (!needsClusterIP(spec)) return [];
    return spec.clusterIPs ?? [];
  }

  private portsOf(o: KubeObject | undefined): number[] {
    if (!o) return [];
    return (((o.spec ?? {}) as ServiceSpec).ports ?? []).map((p) => p.nodePort ?? 0).filter((n) => n > 0);
  }

  /**
   * initNodePorts / updateNodePorts: a port that asks for a nodePort gets it when it is free and in range; ports of
   * the same number share one; the others get a random free one. `mine` are the ports the Service already holds.
   */
  private allocateNodePorts(name: string, ports: Port[], mine: ReadonlySet<number>): void {
    const { from, to } = this.network.nodePorts;
    const taken = new Set<number>();
    const byServicePort = new Map<number, number>();
    for (const [i, p] of ports.entries()) {
      if (!p.nodePort) continue;
      if (mine.has(p.nodePort) || taken.has(p.nodePort)) {
        taken.add(p.nodePort);
        continue;
      }
      const problem = p.nodePort < from || p.nodePort > to
        ? `provided port is not in the valid range. The range of valid ports is ${from}-${to}`
        : this.ports.has(p.nodePort) ? 'provided port is already allocated' : undefined;
      if (problem) throw invalid('Service', '', name, [invalidValue(`spec.ports[${i}].nodePort`, p.nodePort, problem)]);
      taken.add(p.nodePort);
      byServicePort.set(p.port ?? 0, p.nodePort);
    }
    for (const p of ports) {
      if (p.nodePort) continue;
      const shared = byServicePort.get(p.port ?? 0);
      if (shared) {
        p.nodePort = shared;
        continue;
      }
      const span = to - from + 1;
      const start = Math.floor(this.random() * span);
      let chosen: number | undefined;
      for (let i = 0; i < span && chosen === undefined; i++) {
        const candidate = from + ((start + i) % span);
        if (!this.ports.has(candidate) && !taken.has(candidate)) chosen = candidate;
      }
      if (chosen === undefined) throw new Error('failed to allocate a nodePort: range is full');
      p.nodePort = chosen;
      taken.add(chosen);
      byServicePort.set(p.port ?? 0, chosen);
    }
  }
}
