// Where a restore is, as a few counters for the whole process: read by the benches' opt-in timeline
// (bench/support/client.ts, KFU_BENCH_TIMELINE) to show, per 100 ms, whether the writes wait for namespaces, for
// PodDefaults or for their own steps. Plain integer updates at a namespace's start and end: nothing on the hot path.
export const restoreActivity = {
  /** 'preflight' until the Profiles are written, then 'profiles', then 'writes' once the first namespace starts */
  phase: 'idle' as 'idle' | 'preflight' | 'profiles' | 'writes' | 'done',
  /** namespaces the profile controller has made (of Profiles this run created) */
  namespacesReady: 0,
  /** namespaces whose steps run now in the pipeline (not parked) */
  namespacesInPipeline: 0,
  /** namespaces parked until their late PodDefaults exist */
  namespacesParked: 0,
  namespacesDone: 0,
  /** when the restore started and how long its preflight took (ms, performance.now()): the part with the cluster idle */
  startedAt: 0,
  preflightMs: 0,
};

/** at the start of each restore: a process that runs several (the tests) counts each from zero */
export function startRestoreActivity(): void {
  Object.assign(restoreActivity, { phase: 'preflight', namespacesReady: 0, namespacesInPipeline: 0, namespacesParked: 0, namespacesDone: 0, startedAt: performance.now(), preflightMs: 0 });
}

/** at the end of the preflight */
export function preflightDone(): void {
  restoreActivity.phase = 'profiles';
  restoreActivity.preflightMs = performance.now() - restoreActivity.startedAt;
}
