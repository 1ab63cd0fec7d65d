// A recording stand-in for prune's restic Jobs (src/prune/restic.ts ResticRepositories), for the prune engine's fast
// tests: each call is recorded and answered by `answer` (by default a prune that forgot everything it was given). The
// Jobs themselves run against real restic and s3rver in tests/prune/restic.process.test.ts. Starts nothing.
import type { ResticRepositories } from '../../src/prune/restic.ts';

export interface RepositoryCall { namespace: string; mode: string; snapshots: readonly string[] }

export function recordingRepositories(answer: (call: RepositoryCall) => Promise<unknown> | unknown = () => ({ state: 'pruned', ignored: 0, totalPrune: '' })): { calls: RepositoryCall[]; restic: ResticRepositories } {
  const calls: RepositoryCall[] = [];
  return {
    calls,
    restic: {
      repositoryKey: (ns: string) => `kf/restic/${ns}`,
      locationKey: (ns: string) => `restic/${ns}`,
      repositoriesFolder: 'restic/',
      run: async (namespace, mode, snapshots) => {
        const call = { namespace, mode, snapshots: [...snapshots] };
        calls.push(call);
        return answer(call) as never;
      },
    },
  };
}
