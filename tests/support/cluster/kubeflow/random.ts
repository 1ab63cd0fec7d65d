// A small seeded generator (mulberry32): the dataset must be the same for the same seed on every machine.
export interface Random {
  next(): number;
  int(maxExclusive: number): number;
  pick<T>(items: readonly T[]): T;
  bytes(length: number): Buffer;
  chance(probability: number): boolean;
}

export function seededRandom(seed: number): Random {
  let state = seed >>> 0;
  const next = () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  return {
    next,
    int: (maxExclusive) => Math.floor(next() * maxExclusive),
    pick: (items) => items[Math.floor(next() * items.length)]!,
    bytes: (length) => {
      const buffer = Buffer.alloc(length);
      for (let i = 0; i < length; i++) buffer[i] = Math.floor(next() * 256);
      return buffer;
    },
    chance: (probability) => next() < probability,
  };
}

/** an independent stream per (seed, index), so one profile can be generated without the others */
export function streamFor(seed: number, index: number): Random {
  return seededRandom((Math.imul(seed >>> 0, 0x9e3779b1) ^ Math.imul(index + 1, 0x85ebca6b)) >>> 0);
}
