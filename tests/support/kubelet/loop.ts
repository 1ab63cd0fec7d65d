// The one event loop the simulated node components share: their timers, their work in flight, and the stop that ends
// them. Plumbing, nothing simulated: upstream each component runs its own goroutines under its own binary
// (kubernetes/kubernetes cmd/kube-controller-manager/app/controllermanager.go, cmd/kube-scheduler/app/server.go,
// cmd/kubelet/app/server.go); here one loop is enough, and one stop ends every container the kubelet started.
export interface SimulationLoop {
  readonly stopped: boolean;
  /** runs `fn` after `ms` unless the loop has stopped by then; the timer never holds the process open */
  later(ms: number, fn: () => void): NodeJS.Timeout;
  /** follows `work` so that `idle()` and `stop()` can wait for it; its failure is logged, not thrown */
  track(work: Promise<void>): void;
  /** resolves once nothing tracked is in flight */
  idle(): Promise<void>;
  /** stops the timers and refuses new work; then waits for what is in flight */
  stop(): Promise<void>;
}

export function simulationLoop(name: string): SimulationLoop {
  const timers = new Set<NodeJS.Timeout>();
  const inFlight = new Set<Promise<void>>();
  let stopped = false;
  const idle = async () => {
    while (inFlight.size > 0) await Promise.allSettled([...inFlight]);
  };
  return {
    get stopped() { return stopped; },
    later(ms, fn) {
      const t = setTimeout(() => { timers.delete(t); if (!stopped) fn(); }, ms);
      t.unref();
      timers.add(t);
      return t;
    },
    track(work) {
      const p = work.catch((error: unknown) => {
        if (!stopped) console.error(`${name}: ${(error as Error).message}`);
      }).finally(() => inFlight.delete(p));
      inFlight.add(p);
    },
    idle,
    async stop() {
      stopped = true;
      for (const t of timers) clearTimeout(t);
      await idle();
    },
  };
}
