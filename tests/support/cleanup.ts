// Simulates nothing upstream; it follows github.com/mochajs/mocha's loading (lib/nodejs/esm-utils.cjs).
// What tests/support starts (servers, child processes, controller timers) registers how to stop it here.
//
// A suite's before-all hook often starts several things at once (`[a, b] = await Promise.all([...])`). When one of
// them fails, the others are running but were never assigned, so the suite's after-all hook cannot name them, and a
// live server or child keeps mocha's event loop (and the machine) busy forever. The root after-all hook
// (tests/support/root-hooks.ts) stops whatever is still registered, whatever the suites managed to do.
type Stop = () => Promise<void> | void;

// One register per process, whichever copy of this module a file reached. Mocha requires a file first and imports it
// only when that fails (mocha lib/nodejs/esm-utils.cjs requireOrImport): the root hooks come in through require, and a
// file whose imports hold a top-level await (the cluster's schema loading) through import, so the process holds two
// copies of tests/support. With a register per copy, the root hook found nothing to stop and a failed hook's servers
// kept the run alive.
const REGISTER = Symbol.for('kubeflow-upgrader.tests.cleanup-register');
const running: Map<symbol, { what: string; stop: Stop }> =
  ((globalThis as Record<symbol, unknown>)[REGISTER] as Map<symbol, { what: string; stop: Stop }> | undefined)
  ?? ((globalThis as Record<symbol, unknown>)[REGISTER] = new Map<symbol, { what: string; stop: Stop }>()) as Map<symbol, { what: string; stop: Stop }>;

/**
 * Registers `stop` for `what` and returns a stop function to use instead of it: it stops once, however often it is
 * called, and takes the entry off the register.
 */
export function stopOnExit(what: string, stop: Stop): () => Promise<void> {
  const id = Symbol(what);
  running.set(id, { what, stop });
  let stopping: Promise<void> | undefined;
  return () => {
    running.delete(id);
    // Called at once (not in a later microtask): callers that stop and then read state expect the stop to have begun.
    stopping ??= (async () => { await stop(); })();
    return stopping;
  };
}

/** What is registered and not yet stopped, by name (for messages and tests). */
export function stillRunning(): string[] {
  return [...running.values()].map((entry) => entry.what);
}

/** Stops everything still registered, newest first; returns what it stopped. A failing stop does not stop the rest. */
export async function stopEverything(): Promise<string[]> {
  const entries = [...running.entries()].reverse();
  running.clear();
  const stopped: string[] = [];
  for (const [, entry] of entries) {
    try {
      await entry.stop();
      stopped.push(entry.what);
    } catch (error) {
      process.stderr.write(`cleanup: stopping ${entry.what} failed: ${error instanceof Error ? error.message : String(error)}\n`);
    }
  }
  return stopped;
}
