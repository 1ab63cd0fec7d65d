// One Service IP range of one family, as kube-apiserver's bitmap allocator keeps it (kubernetes/kubernetes
// pkg/registry/core/service/ipallocator/bitmap.go: the network address is never handed out, nor IPv4's broadcast
// address; AllocateNext prefers the upper part of the range and leaves the lower "static band" to IPs users ask for,
// calculateRangeOffset; Allocate refuses an address out of range, ErrNotInRange, or taken, ErrAllocated). Addresses
// are printed as Go's net.IP.String prints them (RFC 5952 for IPv6: lower case, the longest run of zero groups as ::).
export type IpFamily = 'IPv4' | 'IPv6';

function v4ToBig(ip: string): bigint | undefined {
  const parts = ip.split('.');
  if (parts.length !== 4 || parts.some((p) => !/^\d{1,3}$/.test(p) || Number(p) > 255)) return undefined;
  return parts.reduce((n, p) => n * 256n + BigInt(Number(p)), 0n);
}

function v6ToBig(ip: string): bigint | undefined {
  if (!/^[0-9a-fA-F:]+$/.test(ip) || ip.split('::').length > 2) return undefined;
  const [head, tail] = ip.includes('::') ? ip.split('::') as [string, string] : [ip, undefined];
  const groups = (s: string) => (s === '' ? [] : s.split(':'));
  const left = groups(head);
  const right = tail === undefined ? [] : groups(tail);
  const missing = 8 - left.length - right.length;
  if (tail === undefined ? missing !== 0 : missing < 1) return undefined;
  const all = [...left, ...Array<string>(tail === undefined ? 0 : missing).fill('0'), ...right];
  if (all.some((g) => !/^[0-9a-fA-F]{1,4}$/.test(g))) return undefined;
  return all.reduce((n, g) => (n << 16n) + BigInt(parseInt(g, 16)), 0n);
}

function bigToV6(n: bigint): string {
  const groups = Array.from({ length: 8 }, (_, i) => Number((n >> BigInt(16 * (7 - i))) & 0xffffn));
  let best = -1;
  let bestLength = 1;
  for (let i = 0; i < 8; i++) {
    let j = i;
    while (j < 8 && groups[j] === 0) j++;
    if (j - i > bestLength) [best, bestLength] = [i, j - i];
    i = j;
  }
  const hex = groups.map((g) => g.toString(16));
  if (best < 0) return hex.join(':');
  return `${hex.slice(0, best).join(':')}::${hex.slice(best + bestLength).join(':')}`;
}

/** the family of a well-formed address, or undefined for anything else */
export function familyOf(ip: string): IpFamily | undefined {
  if (v4ToBig(ip) !== undefined) return 'IPv4';
  if (v6ToBig(ip) !== undefined) return 'IPv6';
  return undefined;
}

export class IpRange {
  readonly family: IpFamily;
  private readonly base: bigint;
  readonly size: number;
  /** the first index dynamic allocation tries (calculateRangeOffset: min(max(16, size/16), 256)) */
  private readonly offset: number;
  private readonly taken = new Set<bigint>();

  constructor(readonly cidr: string) {
    const [address = '', bits] = cidr.split('/');
    const prefix = Number(bits);
    const v4 = v4ToBig(address);
    const width = v4 !== undefined ? 32 : 128;
    const start = v4 ?? v6ToBig(address);
    // a range of at most 2^16 addresses, as kube-apiserver refuses wider IPv6 ranges (--service-cluster-ip-range /108
    // or narrower before 1.29's ServiceCIDR) and the tests never need more
    if (start === undefined || !(prefix >= width - 24 && prefix <= width - 2)) throw new Error(`a service range must be an IPv4 or IPv6 CIDR of 4 to 2^24 addresses, got ${cidr}`);
    this.family = v4 !== undefined ? 'IPv4' : 'IPv6';
    const total = 2 ** (width - prefix);
    const first = start - (start % BigInt(total));
    this.base = first + 1n;
    // IPv4 loses its broadcast address too
    this.size = this.family === 'IPv4' ? total - 2 : total - 1;
    this.offset = Math.min(Math.max(16, Math.floor(this.size / 16)), 256);
  }

  private parse(ip: string): bigint | undefined {
    return this.family === 'IPv4' ? v4ToBig(ip) : v6ToBig(ip);
  }

  private print(n: bigint): string {
    return this.family === 'IPv4' ? [24n, 16n, 8n, 0n].map((s) => Number((n >> s) & 255n)).join('.') : bigToV6(n);
  }

  /** the first address of the range, which the API server gives its own `kubernetes` Service */
  get firstIp(): string {
    return this.print(this.base);
  }

  /** why `ip` cannot be given to a new Service (ipallocator's errors), or undefined */
  problem(ip: string): string | undefined {
    const n = this.parse(ip);
    if (n === undefined || n < this.base || n >= this.base + BigInt(this.size)) return `the provided IP (${ip}) is not in the valid range. The range of valid IPs is ${this.cidr}`;
    if (this.taken.has(n)) return 'provided IP is already allocated';
    return undefined;
  }

  has(ip: string): boolean {
    const n = this.parse(ip);
    return n !== undefined && this.taken.has(n);
  }

  add(ip: string): void {
    const n = this.parse(ip);
    if (n !== undefined) this.taken.add(n);
  }

  remove(ip: string): void {
    const n = this.parse(ip);
    if (n !== undefined) this.taken.delete(n);
  }

  /** AllocateNext: a random free address of the upper band, else of the lower (static) band */
  next(random: () => number): string {
    const pick = (from: number, to: number): bigint | undefined => {
      const span = to - from;
      if (span <= 0) return undefined;
      const start = Math.floor(random() * span);
      for (let i = 0; i < span; i++) {
        const n = this.base + BigInt(from + ((start + i) % span));
        if (!this.taken.has(n)) return n;
      }
      return undefined;
    };
    const n = pick(this.offset, this.size) ?? pick(0, this.offset);
    // a full range is an internal error in the real registry (alloc.go, allocIPs: "failed to allocate a serviceIP")
    if (n === undefined) throw new Error('failed to allocate a serviceIP: range is full');
    return this.print(n);
  }
}
