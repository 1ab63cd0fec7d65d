// What a dispatch found out about the CRD guard: kept on the runtime (runtime.ts), learnt by guard.ts, shown by the status.

/** What this dispatch found out about the guard. */
export type GuardFact =
  | { state: 'active' | 'off' | 'absent' | 'drifted'; summary: string }
  | { state: 'unsupported' | 'failed'; summary: string }
  /** no Kubernetes API in this dispatch (only outside a real model): nothing to say */
  | { state: 'unknown' };
