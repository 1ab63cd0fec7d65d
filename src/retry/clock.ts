// Time as a dependency, so the retry policy is deterministic in tests.

export interface Clock {
  now(): number;
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
}

export const systemClock: Clock = {
  now: () => Date.now(),
  sleep: (ms, signal) =>
    new Promise<void>((resolve, reject) => {
      if (signal?.aborted) return reject(signal.reason);
      const onAbort = () => {
        clearTimeout(timer);
        reject(signal?.reason);
      };
      const timer = setTimeout(() => {
        signal?.removeEventListener('abort', onAbort);
        resolve();
      }, ms);
      signal?.addEventListener('abort', onAbort, { once: true });
    }),
};

/** A clock that only moves when slept on: every sleep advances it at once and is recorded. */
export class ManualClock implements Clock {
  readonly sleeps: number[] = [];
  constructor(private current = 0) {}
  now(): number {
    return this.current;
  }
  async sleep(ms: number): Promise<void> {
    this.sleeps.push(ms);
    this.current += ms;
  }
  advance(ms: number): void {
    this.current += ms;
  }
}
