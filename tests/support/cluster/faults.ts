// Fault injection per request, by rate or by script, deterministic by seed: what a busy or failing API server
// does to a client (429 with Retry-After, 500, 503, a reset connection, latency).
export type FaultKind = 'throttle' | 'error' | 'unavailable' | 'reset' | 'latency';
export const FAULT_KINDS: FaultKind[] = ['throttle', 'error', 'unavailable', 'reset', 'latency'];

export interface FaultFilter {
  /** only requests with this method (GET, POST, ...) */
  method?: string;
  /** only requests whose path contains this text */
  pathIncludes?: string;
}

export interface FaultDecision {
  kind: FaultKind;
  latencyMs: number;
  retryAfterSeconds: number;
}

/** mulberry32: small, fast and reproducible from one integer. */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export class Faults {
  private rates = new Map<FaultKind, number>();
  private scripted: FaultKind[] = [];
  private filter: FaultFilter = {};
  private random: () => number;
  latencyMs = 200;
  retryAfterSeconds = 1;
  readonly injected: Record<FaultKind, number> = { throttle: 0, error: 0, unavailable: 0, reset: 0, latency: 0 };

  constructor(seed = 1) {
    this.random = seededRandom(seed);
  }

  /** Each matching request fails this way with probability `rate` (0..1). */
  setRate(kind: FaultKind, rate: number): this {
    if (!(rate >= 0 && rate <= 1)) throw new Error(`fault rate for ${kind} must be between 0 and 1, got ${rate}`);
    if (rate === 0) this.rates.delete(kind);
    else this.rates.set(kind, rate);
    return this;
  }

  /** The next matching requests fail in exactly this order, one fault each, before rates apply again. */
  script(...kinds: FaultKind[]): this {
    this.scripted.push(...kinds);
    return this;
  }

  only(filter: FaultFilter): this {
    this.filter = filter;
    return this;
  }

  reseed(seed: number): this {
    this.random = seededRandom(seed);
    return this;
  }

  clear(): this {
    this.rates.clear();
    this.scripted = [];
    this.filter = {};
    return this;
  }

  decide(method: string, path: string): FaultDecision | undefined {
    if (this.filter.method && this.filter.method.toUpperCase() !== method.toUpperCase()) return undefined;
    if (this.filter.pathIncludes && !path.includes(this.filter.pathIncludes)) return undefined;
    let kind = this.scripted.shift();
    if (!kind)
      for (const [k, rate] of this.rates)
        if (this.random() < rate) {
          kind = k;
          break;
        }
    if (!kind) return undefined;
    this.injected[kind]++;
    return { kind, latencyMs: this.latencyMs, retryAfterSeconds: this.retryAfterSeconds };
  }
}
