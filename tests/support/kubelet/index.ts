// A simulated kubelet, Job controller, scheduler and hostPath provisioner in one Controller: it turns each Job into a
// Pod, places the Pod on a node (honouring node affinity), binds the claims it mounts, runs the container on this
// machine (container.ts) and reports Pod and Job status through the API as the real components would.
// Upstream, each part follows: kubernetes/kubernetes pkg/controller/job/job_controller.go (Pods for a Job, backoffLimit,
// activeDeadlineSeconds, FailedCreate events), pkg/scheduler (node affinity, Unschedulable), pkg/kubelet (container
// states, image pulls, termination messages) and the hostPath provisioner of pkg/volume/hostpath.
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { KubeObject } from '../../../src/kube/types.ts';
import type { ClusterEvent, Controller, InProcessApi } from '../cluster/contract.ts';
import { ContainerConfigError, isRunnableImage, runContainer, type ContainerRun, type ContainerSpec } from './container.ts';
import { EVENTS, JOBS, PODS, PVCS, sameRef } from './refs.ts';
import { bindClaim, bindingMode, isBound, pvcFolder } from './storage.ts';
import { stopOnExit } from '../cleanup.ts';

export { storageClass, SIMULATED_PROVISIONER } from './storage.ts';

/** An image reference as container runtimes normalize it: docker.io for bare names, library/ for official ones. */
export function normalizedImage(image: string): { registry: string; repository: string; tag: string; full: string } {
  const [first, ...rest] = image.split('/');
  const hasRegistry = rest.length > 0 && (first!.includes('.') || first!.includes(':') || first === 'localhost');
  const registry = hasRegistry ? first! : 'docker.io';
  let path = hasRegistry ? rest.join('/') : image;
  if (registry === 'docker.io' && !path.includes('/')) path = `library/${path}`;
  const at = path.indexOf('@');
  const colon = path.lastIndexOf(':');
  const [repository, tag] = at >= 0 ? [path.slice(0, at), path.slice(at + 1)] : colon >= 0 ? [path.slice(0, colon), path.slice(colon + 1)] : [path, 'latest'];
  return { registry, repository, tag, full: `${registry}/${repository}${at >= 0 ? '@' : ':'}${tag}` };
}

export interface SimulatedKubeletOptions {
  /** every PVC's data lives in `<dataDir>/<namespace>/<pvc>` */
  dataDir: string;
  /** node names Pods can be scheduled on; default two nodes */
  nodes?: string[];
  /** how long a container that cannot start yet (missing Secret) is retried before the Pod fails */
  configRetryMs?: number;
  /**
   * read-only claim mounts as a read-only bind mount (default: real EROFS and no copying; needs root and unshare, else
   * falls back to a copy) or as a private copy of the tree
   */
  readOnlyViews?: 'copy' | 'bind-mount';
  /**
   * the nodes' route to the internet (tests/support/net/internet.ts): its proxy and the CA file of its stand-in
   * servers, given to every container as HTTPS_PROXY and SSL_CERT_FILE; without it, only this machine is reachable
   */
  egress?: { proxyUrl: string; caFile: string };
  /**
   * registries the nodes can pull images from (default: any but hosts under .invalid, which never resolve); an
   * air-gapped cluster is `[]` or its own mirror
   */
  registries?: string[];
}

export interface KubeletStats {
  containersStarted: number;
  running: number;
  maxRunning: number;
}

export interface SimulatedKubelet extends Controller {
  volumePath(namespace: string, pvcName: string): string;
  readonly stats: KubeletStats;
  /** the combined output of a Pod's container, for debugging tests */
  logs(namespace: string, podName: string): string | undefined;
  /** resolves once no container is running or starting */
  idle(): Promise<void>;
}

interface JobSpec {
  backoffLimit?: number;
  activeDeadlineSeconds?: number;
  ttlSecondsAfterFinished?: number;
  template?: { metadata?: { labels?: Record<string, string>; annotations?: Record<string, string> }; spec?: Record<string, unknown> };
}
interface PodSpec {
  nodeName?: string;
  nodeSelector?: Record<string, string>;
  affinity?: { nodeAffinity?: { requiredDuringSchedulingIgnoredDuringExecution?: { nodeSelectorTerms?: { matchFields?: { key: string; values?: string[] }[]; matchExpressions?: { key: string; values?: string[] }[] }[] } } };
  initContainers?: ContainerSpec[];
  containers?: ContainerSpec[];
  volumes?: { persistentVolumeClaim?: { claimName: string } }[];
}

const key = (namespace: string | undefined, name: string | undefined) => `${namespace ?? ''}/${name ?? ''}`;
const now = () => new Date().toISOString();
const fresh = (object: KubeObject): KubeObject => ({ ...object, metadata: { ...object.metadata, resourceVersion: undefined } });

function requiredNode(spec: PodSpec): string | undefined {
  const terms = spec.affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution?.nodeSelectorTerms ?? [];
  for (const term of terms) {
    const field = term.matchFields?.find((f) => f.key === 'metadata.name')?.values?.[0];
    if (field) return field;
    const host = term.matchExpressions?.find((e) => e.key === 'kubernetes.io/hostname')?.values?.[0];
    if (host) return host;
  }
  return spec.nodeSelector?.['kubernetes.io/hostname'];
}

function isFinishedJob(job: KubeObject): boolean {
  const conditions = ((job.status as { conditions?: { type: string; status: string }[] } | undefined)?.conditions ?? []);
  return conditions.some((c) => (c.type === 'Complete' || c.type === 'Failed') && c.status === 'True');
}

export function simulatedKubelet(options: SimulatedKubeletOptions): SimulatedKubelet {
  const nodes = options.nodes ?? ['node-a', 'node-b'];
  const configRetryMs = options.configRetryMs ?? 10_000;
  const stats: KubeletStats = { containersStarted: 0, running: 0, maxRunning: 0 };
  const logs = new Map<string, string>();
  const kills = new Map<string, () => void>(); // pod key → kill
  const deadlines = new Map<string, NodeJS.Timeout>(); // job key → timer
  const timers = new Set<NodeJS.Timeout>();
  const inFlight = new Set<Promise<void>>();
  let nextNode = 0;
  let stopped = false;
  mkdirSync(options.dataDir, { recursive: true });

  const track = (work: Promise<void>) => {
    const p = work.catch((error: unknown) => {
      if (!stopped) console.error(`simulated kubelet: ${(error as Error).message}`);
    }).finally(() => inFlight.delete(p));
    inFlight.add(p);
  };
  const later = (ms: number, fn: () => void) => {
    const t = setTimeout(() => { timers.delete(t); if (!stopped) fn(); }, ms);
    t.unref();
    timers.add(t);
    return t;
  };

  function start(api: InProcessApi): () => void {
    const claimFolder = (namespace: string, claim: string): string | undefined => {
      const pvc = api.get(PVCS, claim, namespace);
      return pvc && isBound(pvc) ? pvcFolder(options.dataDir, namespace, claim) : undefined;
    };

    function updateJobStatus(namespace: string, name: string, change: (status: Record<string, unknown>) => void): KubeObject | undefined {
      for (let attempt = 0; attempt < 5; attempt++) {
        const job = api.get(JOBS, name, namespace);
        if (!job) return undefined;
        const status = { ...((job.status ?? {}) as Record<string, unknown>) };
        change(status);
        try {
          return api.updateStatus(JOBS, { ...job, status });
        } catch (error) {
          if ((error as { status?: number }).status !== 409) throw error;
        }
      }
      return undefined;
    }

    /**
     * As the Job controller does when the API server refuses its Pod (a ResourceQuota, an admission policy): a Warning
     * event FailedCreate "Error creating: <the refusal>" on the Job (kubernetes pkg/controller/controller_utils.go,
     * RealPodControl), and another try after a backoff for as long as the Job wants a Pod. Repeats of one message are
     * folded into the same Event with a higher count, as the event recorder does.
     */
    function createPodFor(job: KubeObject, attempt = 0): void {
      try {
        createPod(job);
        // status.active counts the Pods that exist (job_controller.go, syncJob): one only once its create succeeded
        updateJobStatus(job.metadata.namespace ?? '', job.metadata.name ?? '', (s) => { s.active = 1; });
      } catch (error) {
        if (stopped) return;
        recordJobEvent(job, 'FailedCreate', `Error creating: ${(error as Error).message}`);
        later(Math.min(500 * 2 ** attempt, 5000), () => {
          const current = api.get(JOBS, job.metadata.name ?? '', job.metadata.namespace);
          if (current && current.metadata.uid === job.metadata.uid && !isFinishedJob(current)) createPodFor(current, attempt + 1);
        });
      }
    }

    function recordJobEvent(job: KubeObject, reason: string, message: string): void {
      recordEvent(job, reason, message, 'job-controller');
    }

    /** A Warning event about `object`; one with the same reason and message is counted again instead of repeated. */
    function recordEvent(object: KubeObject, reason: string, message: string, component: string): void {
      const namespace = object.metadata.namespace ?? '';
      const at = now();
      const same = api.list(EVENTS, { namespace }).find((e) => {
        const ev = e as { involvedObject?: { uid?: string }; reason?: string; message?: string };
        return ev.involvedObject?.uid === object.metadata.uid && ev.reason === reason && ev.message === message;
      });
      if (same) {
        api.mergePatch(EVENTS, same.metadata.name ?? '', namespace, { count: ((same as { count?: number }).count ?? 1) + 1, lastTimestamp: at });
        return;
      }
      api.create(EVENTS, {
        apiVersion: 'v1', kind: 'Event',
        metadata: { name: `${object.metadata.name}.${randomBytes(8).toString('hex')}`, namespace },
        involvedObject: { apiVersion: object.apiVersion, kind: object.kind, name: object.metadata.name, namespace, uid: object.metadata.uid },
        reason, message, type: 'Warning', source: { component },
        firstTimestamp: at, lastTimestamp: at, count: 1,
      } as KubeObject);
    }

    function createPod(job: KubeObject): void {
      const spec = (job.spec ?? {}) as JobSpec;
      const name = job.metadata.name ?? '';
      const uid = job.metadata.uid ?? '';
      api.create(PODS, {
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: {
          name: `${name}-${randomBytes(3).toString('hex').slice(0, 5)}`,
          namespace: job.metadata.namespace,
          labels: {
            ...(spec.template?.metadata?.labels ?? {}),
            'job-name': name, 'batch.kubernetes.io/job-name': name,
            'controller-uid': uid, 'batch.kubernetes.io/controller-uid': uid,
          },
          annotations: spec.template?.metadata?.annotations ?? {},
          ownerReferences: [{ apiVersion: 'batch/v1', kind: 'Job', name, uid, controller: true, blockOwnerDeletion: true }],
        },
        spec: spec.template?.spec ?? {},
      });
    }

    function startJob(job: KubeObject): void {
      if (job.status && ((job.status as { startTime?: string }).startTime || isFinishedJob(job))) return;
      const namespace = job.metadata.namespace ?? '';
      const name = job.metadata.name ?? '';
      // a refused Pod leaves the Job with startTime and 0 active, and a FailedCreate event (createPodFor)
      updateJobStatus(namespace, name, (s) => { s.startTime = now(); s.active = 0; s.ready = 0; });
      const deadline = (job.spec as JobSpec).activeDeadlineSeconds;
      if (deadline) deadlines.set(key(namespace, name), later(deadline * 1000, () => expireJob(namespace, name)));
      createPodFor(job);
    }

    function finishJob(namespace: string, name: string, outcome: 'Complete' | 'Failed', reason: string, message: string): void {
      const k = key(namespace, name);
      clearTimeout(deadlines.get(k));
      deadlines.delete(k);
      const job = updateJobStatus(namespace, name, (s) => {
        const at = now();
        s.active = 0;
        s.ready = 0;
        if (outcome === 'Complete') s.completionTime = at;
        const interim = outcome === 'Complete' ? 'SuccessCriteriaMet' : 'FailureTarget';
        s.conditions = [
          { type: interim, status: 'True', reason, message, lastProbeTime: at, lastTransitionTime: at },
          { type: outcome, status: 'True', reason, message, lastProbeTime: at, lastTransitionTime: at },
        ];
      });
      const ttl = (job?.spec as JobSpec | undefined)?.ttlSecondsAfterFinished;
      if (ttl !== undefined) later(ttl * 1000, () => { try { api.delete(JOBS, name, namespace, { propagationPolicy: 'Background' }); } catch { /* gone */ } });
    }

    function expireJob(namespace: string, name: string): void {
      for (const pod of api.list(PODS, { namespace, labelSelector: `job-name=${name}` })) {
        kills.get(key(namespace, pod.metadata.name))?.();
      }
      const job = api.get(JOBS, name, namespace);
      if (job && !isFinishedJob(job)) finishJob(namespace, name, 'Failed', 'DeadlineExceeded', 'Job was active longer than specified deadline');
    }

    function podFinished(pod: KubeObject, succeeded: boolean): void {
      const owner = pod.metadata.ownerReferences?.find((o) => o.kind === 'Job' && o.controller);
      if (!owner) return;
      const namespace = pod.metadata.namespace ?? '';
      const job = api.get(JOBS, owner.name, namespace);
      if (!job || job.metadata.uid !== owner.uid || isFinishedJob(job)) return;
      const updated = updateJobStatus(namespace, owner.name, (s) => {
        if (succeeded) s.succeeded = ((s.succeeded as number | undefined) ?? 0) + 1;
        else s.failed = ((s.failed as number | undefined) ?? 0) + 1;
      });
      if (!updated) return;
      if (succeeded) return finishJob(namespace, owner.name, 'Complete', 'CompletionsReached', 'Reached expected number of succeeded pods');
      const failed = (updated.status as { failed?: number }).failed ?? 0;
      if (failed > ((job.spec as JobSpec).backoffLimit ?? 6)) {
        return finishJob(namespace, owner.name, 'Failed', 'BackoffLimitExceeded', 'Job has reached the specified backoff limit');
      }
      createPodFor(updated);
    }

    function setPodStatus(pod: KubeObject, status: Record<string, unknown>): void {
      const current = api.get(PODS, pod.metadata.name ?? '', pod.metadata.namespace);
      if (!current) return;
      api.updateStatus(PODS, fresh({ ...current, status: { ...((current.status ?? {}) as object), ...status } }));
    }

    interface Status { name: string; image: string; ready: boolean; restartCount: 0; started?: boolean; state: Record<string, unknown> }
    const waiting = (c: ContainerSpec, reason: string, message?: string): Status =>
      ({ name: c.name, image: c.image, ready: false, restartCount: 0, state: { waiting: { reason, ...(message ? { message } : {}) } } });
    const running = (c: ContainerSpec): Status =>
      ({ name: c.name, image: c.image, ready: true, restartCount: 0, started: true, state: { running: { startedAt: now() } } });
    const terminated = (c: ContainerSpec, run: ContainerRun): Status => ({
      name: c.name, image: c.image, ready: false, restartCount: 0, started: false,
      state: { terminated: { exitCode: run.exitCode, reason: run.exitCode === 0 ? 'Completed' : 'Error', message: run.message, startedAt: run.startedAt, finishedAt: run.finishedAt } },
    });

    /** Runs one container, retrying while its configuration (a Secret, a claim) is not there yet; undefined when stopped. */
    async function runOne(pod: KubeObject, container: ContainerSpec, emptyDirFolder: (volume: string) => string, kills: (() => void)[],
      report: (status: Status) => void): Promise<ContainerRun | undefined> {
      const namespace = pod.metadata.namespace ?? '';
      const giveUpAt = Date.now() + configRetryMs;
      for (;;) {
        if (stopped || !api.get(PODS, pod.metadata.name ?? '', namespace)) return undefined;
        try {
          stats.containersStarted++;
          stats.running++;
          stats.maxRunning = Math.max(stats.maxRunning, stats.running);
          return await runContainer({
            api, pod, container, readOnlyViews: options.readOnlyViews, egress: options.egress,
            onOutput: (chunk) => {
              const podKey = key(namespace, pod.metadata.name);
              logs.set(podKey, ((logs.get(podKey) ?? '') + chunk).slice(-1024 * 1024));
            },
            claimFolder: (claim) => claimFolder(namespace, claim),
            emptyDirFolder,
            // running only once the process is: a container whose configuration cannot be resolved never was
            onStarted: (kill) => {
              kills.push(kill);
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
          await new Promise((r) => later(250, () => r(undefined)));
        } finally {
          stats.running--;
        }
      }
    }

    /**
     * As a kubelet with restartPolicy Never: the init containers one after another (the first failure fails the Pod and
     * the rest never start), then the main containers together. emptyDir volumes are one folder per Pod, shared by all.
     */
    async function runPod(pod: KubeObject, node: string): Promise<void> {
      const spec = pod.spec as PodSpec;
      const inits = spec.initContainers ?? [];
      const mains = spec.containers ?? [];
      if (mains.length === 0) return;
      const namespace = pod.metadata.namespace ?? '';
      const podKey = key(namespace, pod.metadata.name);
      const base = { hostIP: '10.0.0.1', podIP: `10.1.0.${1 + (stats.containersStarted % 250)}`, startTime: now() };
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
      const publish = (phase: string, extra: Record<string, unknown> = {}) => setPodStatus(pod, {
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
          });
          if (!run || stopped) return;
          logText += run.logs;
          initStatuses[i] = terminated(container, run);
          if (run.exitCode !== 0) {
            succeeded = false;
            break;
          }
        }
        if (succeeded) {
          const runs = await Promise.all(mains.map((container, i) => runOne(pod, container, emptyDirFolder, podKills, (status) => {
            mainStatuses[i] = status;
            // Running once a container runs; until then (CreateContainerConfigError, say) the Pod is still Pending
            const anyRunning = mainStatuses.some((c) => c.state.running !== undefined);
            publish(anyRunning ? 'Running' : 'Pending', { conditions: [{ type: 'PodScheduled', status: 'True' }, { type: 'Ready', status: anyRunning ? 'True' : 'False' }] });
          })));
          if (stopped || runs.some((run) => !run)) return;
          for (const [i, run] of runs.entries()) {
            logText += run!.logs;
            mainStatuses[i] = terminated(mains[i]!, run!);
            if (run!.exitCode !== 0) succeeded = false;
          }
        }
      } finally {
        kills.delete(podKey);
        rmSync(podDir, { recursive: true, force: true });
      }
      logs.set(podKey, logText);
      publish(succeeded ? 'Succeeded' : 'Failed', { conditions: [{ type: 'PodScheduled', status: 'True' }, { type: 'Ready', status: 'False', reason: 'PodCompleted' }] });
      podFinished(pod, succeeded);
      void node;
    }

    function schedulePod(pod: KubeObject): void {
      if (((pod.status as { phase?: string } | undefined)?.phase ?? 'Pending') !== 'Pending') return;
      const spec = (pod.spec ?? {}) as PodSpec;
      const runnable = (spec.containers ?? []).length > 0 && [...(spec.initContainers ?? []), ...(spec.containers ?? [])].every((c) => isRunnableImage(c.image));
      let node = spec.nodeName ?? requiredNode(spec);
      if (node && !nodes.includes(node)) {
        setPodStatus(pod, { phase: 'Pending', conditions: [{ type: 'PodScheduled', status: 'False', reason: 'Unschedulable', message: `0/${nodes.length} nodes are available: node(s) didn't match Pod's node affinity/selector.` }] });
        return;
      }
      node ??= nodes[nextNode++ % nodes.length] ?? 'node-a';
      // The claims a Pod mounts are bound when it is scheduled: this is what WaitForFirstConsumer waits for.
      const namespace = pod.metadata.namespace ?? '';
      for (const volume of spec.volumes ?? []) {
        const claim = volume.persistentVolumeClaim?.claimName;
        const pvc = claim ? api.get(PVCS, claim, namespace) : undefined;
        if (pvc && !isBound(pvc)) bindClaim(api, options.dataDir, pvc, node);
      }
      const pullError = imagePullError(pod, spec);
      if (pullError) return failPulling(pod, node, pullError.image, pullError.message);
      // Other simulated controllers own the Pods of images we cannot run; those are only given their volumes.
      if (!runnable) return;
      let scheduled = pod;
      if (!spec.nodeName) {
        try {
          scheduled = api.mergePatch(PODS, pod.metadata.name ?? '', namespace, { spec: { nodeName: node } });
        } catch {
          scheduled = { ...pod, spec: { ...spec, nodeName: node } };
        }
      }
      track(runPod(scheduled, node));
    }

    /**
     * An image the nodes cannot pull: from a registry they cannot reach, or (for a Job's Pod, which no other simulated
     * controller runs) one no runtime here provides. The first container whose image fails is reported.
     */
    function imagePullError(pod: KubeObject, spec: PodSpec): { image: string; message: string } | undefined {
      const ownedByJob = pod.metadata.ownerReferences?.some((o) => o.kind === 'Job') ?? false;
      for (const c of [...(spec.initContainers ?? []), ...(spec.containers ?? [])]) {
        const ref = normalizedImage(c.image);
        if (!registryReachable(ref.registry)) {
          // containerd asks Docker Hub at registry-1.docker.io for docker.io images
          const host = ref.registry === 'docker.io' ? 'registry-1.docker.io' : ref.registry;
          return { image: c.image, message: `failed to pull and unpack image "${ref.full}": failed to resolve reference "${ref.full}": failed to do request: Head "https://${host}/v2/${ref.repository}/manifests/${ref.tag}": dial tcp: lookup ${host}: no such host` };
        }
        if (ownedByJob && !isRunnableImage(c.image)) {
          return { image: c.image, message: `failed to pull and unpack image "${ref.full}": failed to resolve reference "${ref.full}": ${ref.full}: not found` };
        }
      }
      return undefined;
    }

    function registryReachable(registry: string): boolean {
      if (options.registries) return options.registries.includes(registry);
      return !/(^|\.)invalid(:\d+)?$/.test(registry);
    }

    /**
     * As the kubelet's image manager (kubernetes pkg/kubelet/images/image_manager.go): a failed pull leaves the container
     * waiting with ErrImagePull and the registry's answer; while the pull backs off it waits with ImagePullBackOff
     * ("Back-off pulling image …"), and the two alternate for as long as the Pod exists. The Pod stays Pending on its
     * node. (The real back-off grows from 10 s to 5 min; here it is short so tests see both states.)
     */
    function failPulling(pod: KubeObject, node: string, image: string, message: string): void {
      const namespace = pod.metadata.namespace ?? '';
      const name = pod.metadata.name ?? '';
      const spec = (pod.spec ?? {}) as PodSpec;
      try {
        api.mergePatch(PODS, name, namespace, { spec: { nodeName: node } });
      } catch {
        return; // deleted meanwhile
      }
      const report = (reason: 'ErrImagePull' | 'ImagePullBackOff') => {
        const current = api.get(PODS, name, namespace);
        if (!current || current.metadata.deletionTimestamp) return;
        // each failed pull is also a Warning event "Failed" on the Pod, as the image manager's logIt records it
        if (reason === 'ErrImagePull') recordEvent(current, 'Failed', `Failed to pull image "${image}": ${message}`, 'kubelet');
        const waitingOn = (c: ContainerSpec) => (c.image === image
          ? { name: c.name, image: c.image, ready: false, restartCount: 0, state: { waiting: { reason, message: reason === 'ErrImagePull' ? message : `Back-off pulling image "${image}"` } } }
          : { name: c.name, image: c.image, ready: false, restartCount: 0, state: { waiting: { reason: 'PodInitializing' } } });
        setPodStatus(current, {
          phase: 'Pending', hostIP: '10.0.0.1', startTime: now(),
          conditions: [{ type: 'PodScheduled', status: 'True' }, { type: 'Initialized', status: 'False' }, { type: 'Ready', status: 'False', reason: 'ContainersNotReady' }],
          ...(spec.initContainers?.length ? { initContainerStatuses: spec.initContainers.map(waitingOn) } : {}),
          containerStatuses: (spec.containers ?? []).map(waitingOn),
        });
        later(reason === 'ErrImagePull' ? 1000 : 2000, () => report(reason === 'ErrImagePull' ? 'ImagePullBackOff' : 'ErrImagePull'));
      };
      report('ErrImagePull');
    }

    function onEvent(event: ClusterEvent): void {
      if (stopped) return;
      const { type, ref, object } = event;
      if (sameRef(ref, JOBS)) {
        if (type === 'ADDED') track(Promise.resolve().then(() => startJob(object)));
        if (type === 'DELETED') {
          const k = key(object.metadata.namespace, object.metadata.name);
          clearTimeout(deadlines.get(k));
          deadlines.delete(k);
          for (const [podKey, kill] of kills) if (podKey.startsWith(`${object.metadata.namespace}/${object.metadata.name}-`)) kill();
        }
      } else if (sameRef(ref, PODS)) {
        if (type === 'ADDED') track(Promise.resolve().then(() => schedulePod(object)));
        if (type === 'DELETED') kills.get(key(object.metadata.namespace, object.metadata.name))?.();
      } else if (sameRef(ref, PVCS) && type === 'ADDED') {
        track(Promise.resolve().then(() => {
          const pvc = api.get(PVCS, object.metadata.name ?? '', object.metadata.namespace);
          if (pvc && !isBound(pvc) && bindingMode(api, pvc) === 'Immediate') bindClaim(api, options.dataDir, pvc, undefined);
        }));
      }
    }

    const unsubscribe = api.subscribe(onEvent);
    // The API server relays `pods/<name>/log` to this kubelet, which holds every container's output as it is written.
    const unserveLogs = api.serveLogs?.((namespace, pod) => logs.get(key(namespace, pod)));
    // Objects that existed before the kubelet started are picked up as a restarted kubelet would.
    for (const pvc of api.list(PVCS)) onEvent({ type: 'ADDED', ref: PVCS, object: pvc });
    for (const job of api.list(JOBS)) onEvent({ type: 'ADDED', ref: JOBS, object: job });
    for (const pod of api.list(PODS)) onEvent({ type: 'ADDED', ref: PODS, object: pod });

    // Registered, so that containers (real child processes) end even when the suite that started us cannot say so.
    const stop = stopOnExit('the simulated kubelet', async () => {
      stopped = true;
      unsubscribe();
      unserveLogs?.();
      for (const kill of kills.values()) kill();
      for (const t of timers) clearTimeout(t);
      for (const t of deadlines.values()) clearTimeout(t);
      while (inFlight.size > 0) await Promise.allSettled([...inFlight]);
    });
    return () => { void stop(); };
  }

  return {
    name: 'simulated-kubelet',
    start,
    stats,
    volumePath: (namespace, pvcName) => pvcFolder(options.dataDir, namespace, pvcName),
    logs: (namespace, podName) => logs.get(key(namespace, podName)),
    async idle() {
      while (inFlight.size > 0) await Promise.allSettled([...inFlight]);
    },
  };
}
