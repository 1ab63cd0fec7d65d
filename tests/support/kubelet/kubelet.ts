// The kubelet's pod workers: runs each Pod bound to a simulated node, restartPolicy Never, on this machine
// (container.ts), and reports the Pod's phase, conditions and container states through the status subresource.
// Init containers run one after another (the first failure fails the Pod and the rest never start), then the main
// containers together; emptyDir volumes are one folder per Pod, shared by its containers. A container whose
// configuration cannot be resolved yet (a missing Secret or claim) waits with CreateContainerConfigError and is tried
// again, and is running only once its process is. Deleting a Pod ends its containers.
// Upstream: kubernetes/kubernetes pkg/kubelet/kuberuntime/kuberuntime_manager.go (SyncPod, computePodActions: init
// containers in order, then the app containers), pkg/kubelet/kuberuntime/kuberuntime_container.go (startContainer:
// CreateContainerConfigError when generating the container's config fails; the terminated state's reason Completed
// or Error and its message), pkg/kubelet/status/generate.go (the Initialized, Ready and PodScheduled conditions,
// PodCompleted) and pkg/kubelet/kubelet_pods.go (getPhase: Pending until a container runs, Succeeded or Failed once
// all have ended with restartPolicy Never).
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { KubeObject } from '../../../src/kube/types.ts';
import type { ExecProcess, ExecRequest, InProcessApi } from '../cluster/contract.ts';
import type { ClusterNetwork } from '../net/cluster-network.ts';
import { ContainerConfigError, runContainer, type ContainerRun, type ContainerSpec, type PodSandbox } from './container.ts';
import { hostsFile, podHostname, resolvConf, type PodDnsFields } from './pod-network.ts';
import { readinessWorker, type ProbeWorker } from './prober.ts';
import type { SimulationLoop } from './loop.ts';
import { key, now, type PodSpec } from './objects.ts';
import { setPodStatus } from './pod-status.ts';
import { PODS, PVCS } from './refs.ts';
import { claimFolder as volumeFolder, isBound } from './storage.ts';

export interface KubeletStats {
  containersStarted: number;
  running: number;
  maxRunning: number;
}

/** What the node keeps between its pod workers and what the tests read: counts, each Pod's output, how to end it. */
export interface NodeState {
  readonly stats: KubeletStats;
  /** pod key → the combined output of its containers (the last MiB while running) */
  readonly logs: Map<string, string>;
  /** pod key → ends its running containers */
  readonly kills: Map<string, () => void>;
  /** `<pod key>/<container>` → runs a command in that container while it runs (pods/exec) */
  readonly execs: Map<string, (request: ExecRequest) => ExecProcess>;
}

export function nodeState(): NodeState {
  return { stats: { containersStarted: 0, running: 0, maxRunning: 0 }, logs: new Map(), kills: new Map(), execs: new Map() };
}

export interface PodWorkerOptions {
  dataDir: string;
  configRetryMs: number;
  readOnlyViews?: 'copy' | 'bind-mount';
  egress?: { proxyUrl: string; caFile: string };
  /** the cluster's loopback network: Pod IPs, the cluster DNS server (absent: a made-up IP, the node's DNS) */
  network?: ClusterNetwork | undefined;
}

export interface PodWorkers {
  /** runs a Pod bound to this node to its end, then reports it to `podFinished` */
  run(pod: KubeObject): Promise<void>;
}

interface Status { name: string; image: string; ready: boolean; restartCount: 0; started?: boolean; state: Record<string, unknown> }
const waiting = (c: ContainerSpec, reason: string, message?: string): Status =>
  ({ name: c.name, image: c.image, ready: false, restartCount: 0, state: { waiting: { reason, ...(message ? { message } : {}) } } });
// A container with a readiness probe starts unready (pkg/kubelet/prober/worker.go: readiness begins at Failure).
const running = (c: ContainerSpec): Status =>
  ({ name: c.name, image: c.image, ready: !c.readinessProbe, restartCount: 0, started: true, state: { running: { startedAt: now() } } });
const terminated = (c: ContainerSpec, run: ContainerRun): Status => ({
  name: c.name, image: c.image, ready: false, restartCount: 0, started: false,
  state: { terminated: { exitCode: run.exitCode, reason: run.exitCode === 0 ? 'Completed' : 'Error', message: run.message, startedAt: run.startedAt, finishedAt: run.finishedAt } },
});

export function podWorkers(api: InProcessApi, loop: SimulationLoop, node: NodeState, options: PodWorkerOptions,
  podFinished: (pod: KubeObject, succeeded: boolean) => void): PodWorkers {
  const { stats, logs, kills, execs } = node;

  const claimFolder = (namespace: string, claim: string): string | undefined => {
    const pvc = api.get(PVCS, claim, namespace);
    return pvc && isBound(pvc) ? volumeFolder(api, options.dataDir, pvc) : undefined;
  };

  /** Runs one container, retrying while its configuration (a Secret, a claim) is not there yet; undefined when stopped. */
  async function runOne(pod: KubeObject, container: ContainerSpec, emptyDirFolder: (volume: string) => string, podKills: (() => void)[],
    report: (status: Status) => void, sandbox?: PodSandbox): Promise<ContainerRun | undefined> {
    const namespace = pod.metadata.namespace ?? '';
    const giveUpAt = Date.now() + options.configRetryMs;
    const execKey = `${key(namespace, pod.metadata.name)}/${container.name}`;
    let ownExec: ((request: ExecRequest) => ExecProcess) | undefined;
    for (;;) {
      if (loop.stopped || !api.get(PODS, pod.metadata.name ?? '', namespace)) return undefined;
      try {
        stats.containersStarted++;
        stats.running++;
        stats.maxRunning = Math.max(stats.maxRunning, stats.running);
        return await runContainer({
          api, pod, container, readOnlyViews: options.readOnlyViews, egress: options.egress, sandbox,
          onOutput: (chunk) => {
            const podKey = key(namespace, pod.metadata.name);
            logs.set(podKey, ((logs.get(podKey) ?? '') + chunk).slice(-1024 * 1024));
          },
          claimFolder: (claim) => claimFolder(namespace, claim),
          emptyDirFolder,
          // running only once the process is: a container whose configuration cannot be resolved never was
          // exec reaches the container from the moment it runs, so before the status that says so
          onStarted: (kill, exec) => {
            podKills.push(kill);
            execs.set(execKey, exec);
            ownExec = exec;
            report(running(container));
          },
        });
      } catch (error) {
        if (!(error instanceof ContainerConfigError)) {
          // A kubelet fault must still end the Pod, or its Job would wait for its deadline.
          return { exitCode: 128, message: `simulated kubelet could not run the container: ${(error as Error).message}`, logs: '', startedAt: now(), finishedAt: now() };
        }
        if (Date.now() > giveUpAt) return { exitCode: 1, message: error.message, logs: '', startedAt: now(), finishedAt: now() };
        report(waiting(container, 'CreateContainerConfigError', error.message));
        // a plain timer, not loop.later: a stop clears the loop's timers without running them, and this wait must end
        // for the kubelet's stop to (the loop's next turn sees the stop and returns)
        await new Promise((r) => setTimeout(r, 250).unref());
      } finally {
        stats.running--;
        if (ownExec && execs.get(execKey) === ownExec) execs.delete(execKey);
      }
    }
  }

  async function run(pod: KubeObject): Promise<void> {
    const spec = pod.spec as PodSpec;
    const inits = spec.initContainers ?? [];
    const mains = spec.containers ?? [];
    if (mains.length === 0) return;
    const namespace = pod.metadata.namespace ?? '';
    const podKey = key(namespace, pod.metadata.name);
    // The sandbox's IP comes from the cluster's Pod range (net/cluster-network.ts) and is given back when the Pod ends.
    const network = options.network;
    const podIP = network ? network.allocatePodIp() : `10.1.0.${1 + (stats.containersStarted % 250)}`;
    const hostIP = '10.0.0.1';
    const base = { hostIP, hostIPs: [{ ip: hostIP }], podIP, podIPs: [{ ip: podIP }], startTime: now() };
    const dnsFields = spec as PodDnsFields;
    const sandbox: PodSandbox | undefined = network && {
      podIP, hostIP,
      hostname: podHostname(pod.metadata.name ?? '', dnsFields),
      resolvConf: resolvConf(namespace, dnsFields, network.dnsIp, network.clusterDomain),
      hosts: hostsFile(pod.metadata.name ?? '', namespace, dnsFields, podIP, network.clusterDomain),
      noProxy: ['svc', network.clusterDomain, network.serviceCidr, network.podCidr],
    };
    const probes: ProbeWorker[] = [];
    const podDir = mkdtempSync(join(tmpdir(), 'kubelet-pod-'));
    const emptyDirFolder = (volume: string) => {
      const folder = join(podDir, volume.replace(/[^a-z0-9-]/g, '_'));
      mkdirSync(folder, { recursive: true });
      return folder;
    };
    const podKills: (() => void)[] = [];
    kills.set(podKey, () => { for (const kill of podKills) kill(); });
    const initStatuses: Status[] = inits.map((c) => waiting(c, 'PodInitializing'));
    const mainStatuses: Status[] = mains.map((c) => waiting(c, 'PodInitializing'));
    const publish = (phase: string, extra: Record<string, unknown> = {}) => setPodStatus(api, pod, {
      ...base, phase, ...extra,
      ...(inits.length ? { initContainerStatuses: initStatuses } : {}),
      containerStatuses: mainStatuses,
    });
    let logText = '';
    let succeeded = true;
    try {
      for (const [i, container] of inits.entries()) {
        const run = await runOne(pod, container, emptyDirFolder, podKills, (status) => {
          initStatuses[i] = status;
          publish('Pending', { conditions: [{ type: 'PodScheduled', status: 'True' }, { type: 'Initialized', status: 'False' }] });
        }, sandbox);
        if (!run || loop.stopped) return;
        logText += run.logs;
        initStatuses[i] = terminated(container, run);
        if (run.exitCode !== 0) {
          succeeded = false;
          break;
        }
      }
      if (succeeded) {
        // Running once a container runs; until then (CreateContainerConfigError, say) the Pod is still Pending. Ready
        // once every container is (pkg/kubelet/status/generate.go, GeneratePodReadyCondition and
        // GenerateContainersReadyCondition).
        const publishMain = () => {
          const anyRunning = mainStatuses.some((c) => c.state.running !== undefined);
          const allReady = mainStatuses.every((c) => c.ready);
          const readiness = allReady ? { status: 'True' } : { status: 'False', reason: 'ContainersNotReady' };
          publish(anyRunning ? 'Running' : 'Pending', { conditions: [
            { type: 'PodScheduled', status: 'True' }, { type: 'Initialized', status: 'True' },
            { type: 'ContainersReady', ...readiness }, { type: 'Ready', ...readiness },
          ] });
        };
        const runs = await Promise.all(mains.map((container, i) => runOne(pod, container, emptyDirFolder, podKills, (status) => {
          mainStatuses[i] = status;
          publishMain();
          if (container.readinessProbe && status.state.running) {
            probes.push(readinessWorker(container.readinessProbe, podIP, container, Date.now(), (ms, fn) => loop.later(ms, fn), (ready) => {
              const current = mainStatuses[i];
              if (!current?.state.running || loop.stopped) return;
              mainStatuses[i] = { ...current, ready };
              publishMain();
            }));
          }
        }, sandbox)));
        for (const probe of probes) probe.stop();
        if (loop.stopped || runs.some((run) => !run)) return;
        for (const [i, run] of runs.entries()) {
          logText += run!.logs;
          mainStatuses[i] = terminated(mains[i]!, run!);
          if (run!.exitCode !== 0) succeeded = false;
        }
      }
    } finally {
      for (const probe of probes) probe.stop();
      if (network) network.releasePodIp(podIP);
      kills.delete(podKey);
      rmSync(podDir, { recursive: true, force: true });
    }
    logs.set(podKey, logText);
    publish(succeeded ? 'Succeeded' : 'Failed', { conditions: [{ type: 'PodScheduled', status: 'True' }, { type: 'Ready', status: 'False', reason: 'PodCompleted' }] });
    podFinished(pod, succeeded);
  }

  return { run };
}
