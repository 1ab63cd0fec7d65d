// V8 heap settings for every process that runs an engine: the charm's actions (charm/dispatch passes them to bin/node;
// hooks, which run no engine, start faster without them), the CLI (bin/kubeflow-upgrader.js) and the bench's
// measured clients. A backup or restore allocates a page of objects
// after another and keeps little: with V8's defaults the young generation alone grew to ~100 MiB and old space to
// about 4× what was live, so the peak RSS of a backup went from 171 MiB at P=1000 to 351 MiB at P=5000 with a live
// heap of 50–70 MiB. A 4 MiB semi-space and old space grown by half of what is live keep the peak under 200 MiB at
// P=5000 for ~10% more CPU (docs/performance.md). Neither is a limit: a larger live set still gets the heap it needs.
export const ENGINE_NODE_FLAGS = ['--max-semi-space-size=4', '--heap-growing-percent=50'] as const;

/**
 * glibc's malloc gives each thread that allocates (Node's thread pool: gzip, crypto, file reads) an arena of its own,
 * and what is freed there stays in the process: measured at P=5000, two arenas took 5–9 MiB off a backup's peak RSS
 * and ~12 MiB off a restore's. Ignored where the C library is not glibc.
 */
export const ENGINE_ENV = { MALLOC_ARENA_MAX: '2' } as const;
