// V8 heap settings for every process that runs an engine: the charm's actions (charm/dispatch passes them to bin/node;
// hooks, which run no engine, start faster without them), the CLI (bin/kubeflow-upgrader.js) and the bench's
// measured clients. A backup or restore allocates a page of objects after another and keeps little, so V8's default
// young generation and old-space growth let the peak RSS grow with the cluster while the live heap stays small. A small
// semi-space and old space grown by half of what is live keep the peak near the live set for a little more CPU
// (docs/performance.md has the figures). Neither is a limit: a larger live set still gets the heap it needs.
export const ENGINE_NODE_FLAGS = ['--max-semi-space-size=4', '--heap-growing-percent=50'] as const;

/**
 * glibc's malloc gives each thread that allocates (Node's thread pool: gzip, crypto, file reads) an arena of its own,
 * and what is freed there stays in the process; two arenas lower the peak RSS of a backup and a restore
 * (docs/performance.md). Ignored where the C library is not glibc.
 */
export const ENGINE_ENV = { MALLOC_ARENA_MAX: '2' } as const;
