// The simulated container runtime measures each container's peak memory (container.ts MemoryPeak), as the cgroup a real
// runtime puts a container's processes in counts it (upstream: opencontainers/runc libcontainer/cgroups/fs2/memory.go): the
// processes the container's first process starts count too. The oracle is what the programs touched.
import { expect } from 'chai';
import type { KubeObject } from '../../../src/kube/types.ts';
import { startCluster, type RunningCluster } from '../cluster/index.ts';
import { onContainerFinished, runContainer, type ContainerUsage } from './container.ts';

const MIB = 1024 * 1024;

function pod(name: string): KubeObject {
  return { apiVersion: 'v1', kind: 'Pod', metadata: { name, namespace: 'team', uid: name }, spec: { containers: [] } };
}

describe('simulated kubelet: a container\'s peak memory', function () {
  let cluster: RunningCluster;
  before(async function () {
    cluster = await startCluster({ kubeflowCrds: false, controllers: false });
  });
  after(async function () {
    await cluster?.stop();
  });

  const run = (name: string, script: string) => runContainer({
    api: cluster.api, pod: pod(name), container: { name: 'main', image: 'python:3.12', command: ['sh', '-c', script] },
    claimFolder: () => undefined, emptyDirFolder: () => { throw new Error('no emptyDir here'); },
  });

  it('counts the memory a child process of the container touched, and reports it to listeners', async function () {
    this.timeout(60_000);
    const seen: ContainerUsage[] = [];
    const stop = onContainerFinished((usage) => seen.push(usage));
    try {
      // 160 MiB written (so resident), held for a second so that at least one sample sees the whole tree alive
      const big = await run('big', 'python3 -c "import time; b = bytes(1) * (160 << 20); time.sleep(1)"; true');
      const small = await run('small', 'true');
      expect(big.exitCode).to.equal(0);
      expect(big.peakRssBytes).to.be.at.least(160 * MIB);
      expect(small.peakRssBytes ?? 0).to.be.below(32 * MIB);
      expect(seen.map((u) => [u.pod, u.peakRssBytes])).to.deep.equal([['big', big.peakRssBytes], ['small', small.peakRssBytes]]);
    } finally {
      stop();
    }
  });
});
