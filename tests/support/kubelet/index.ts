// The simulated node side of a cluster, as one Controller the embedded API server starts: the Job controller
// (job-controller.ts) turns each Job into a Pod, the scheduler (scheduler.ts) places the Pod on a node and binds the
// claims it mounts, the hostPath provisioner (storage.ts) binds Immediate claims as they appear, and the kubelet
// (image-pull.ts, kubelet.ts, container.ts) pulls the Pod's images and runs its containers on this machine. Each
// module names the kubernetes/kubernetes file it follows; this one only routes the API's watch events to them, as
// their informers would (kubernetes/kubernetes staging/src/k8s.io/client-go/tools/cache/shared_informer.go), and
// relays `pods/<name>/log` and `pods/<name>/exec` to the kubelet (pkg/kubelet/server/server.go, containerLogs and
// getExec).
// On a cluster with a loopback network (api.network, tests/support/net/cluster-network.ts) the nodes also run
// kube-proxy (net/kube-proxy.ts), and the endpoints and EndpointSlice controllers (net/endpoints-controller.ts) start
// with them: upstream those are kube-controller-manager's, but here a cluster without nodes has no Pod that could be
// an endpoint, and the datasets of many thousand Services are spared objects nothing would read.
// With `snapshots`, the provisioner is a CSI driver that snapshots (snapshots/hostpath-driver.ts: csi-driver-host-path
// and its csi-snapshotter sidecar); the snapshot CRDs and the snapshot controller are the cluster's (startCluster's
// `volumeSnapshots`, snapshots/common-controller.ts).
import { mkdirSync } from 'node:fs';
import type { KubeObject } from '../../../src/kube/types.ts';
import type { ClusterEvent, Controller, InProcessApi } from '../cluster/contract.ts';
import { stopOnExit } from '../cleanup.ts';
import { warningRecorder } from './events.ts';
import { imagePuller } from './image-pull.ts';
import { isRunnableImage } from './container.ts';
import { jobController } from './job-controller.ts';
import { nodeState, podWorkers, type KubeletStats } from './kubelet.ts';
import { simulationLoop } from './loop.ts';
import { key, type PodSpec } from './objects.ts';
import { JOBS, PODS, PVCS, PVS, sameRef } from './refs.ts';
import { scheduler } from './scheduler.ts';
import { binder, claimFolder, isBound, pvcFolder, SIMULATED_PROVISIONER } from './storage.ts';
import { snapshotStore, startSnapshotter } from './snapshots/hostpath-driver.ts';
import { startEndpointsControllers } from '../net/endpoints-controller.ts';
import { startKubeProxy, type KubeProxy, type ProxyMode } from '../net/kube-proxy.ts';

export { storageClass, SIMULATED_PROVISIONER } from './storage.ts';
export { volumeSnapshotClass } from './snapshots/refs.ts';
export { normalizedImage } from './image-pull.ts';
export type { KubeletStats } from './kubelet.ts';

export interface SimulatedKubeletOptions {
  /** every volume's data lives in a folder under it: `<dataDir>/<namespace>/<pvc>` of the claim it was provisioned for (storage.ts) */
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
  /**
   * the provisioner is a CSI driver that can snapshot (snapshots/hostpath-driver.ts): CSI PVs, VolumeSnapshotContents
   * of its driver snapshotted, claims provisioned from a VolumeSnapshot. Default off: hostPath PVs, no snapshots. The
   * cluster needs the snapshot CRDs and controller (startCluster's `volumeSnapshots`).
   */
  snapshots?: boolean;
}

export interface SimulatedKubelet extends Controller {
  volumePath(namespace: string, pvcName: string): string;
  readonly stats: KubeletStats;
  /** the combined output of a Pod's container, for debugging tests */
  logs(namespace: string, podName: string): string | undefined;
  /** resolves once no container is running or starting */
  idle(): Promise<void>;
  /** how the started cluster's kube-proxy forwards Service traffic (net/kube-proxy.ts); undefined before start or without a network */
  proxyMode(): ProxyMode | undefined;
  /** the ids of the snapshots the driver holds (empty without `snapshots`) */
  snapshotHandles(): string[];
  /** the folder of one snapshot the driver holds */
  snapshotFolder(handle: string): string | undefined;
}

export function simulatedKubelet(options: SimulatedKubeletOptions): SimulatedKubelet {
  const nodes = options.nodes ?? ['node-a', 'node-b'];
  const configRetryMs = options.configRetryMs ?? 10_000;
  const loop = simulationLoop('simulated kubelet');
  const node = nodeState();
  mkdirSync(options.dataDir, { recursive: true });
  const snapshots = options.snapshots ? snapshotStore(options.dataDir, SIMULATED_PROVISIONER) : undefined;

  let proxyMode: ProxyMode | undefined;
  const killPod = (namespace: string, podName: string) => node.kills.get(key(namespace, podName))?.();

  let started: InProcessApi | undefined;
  function start(api: InProcessApi): () => void {
    started = api;
    const recordWarning = warningRecorder(api);
    const placement = scheduler(api, nodes, options.dataDir, snapshots);
    const volumes = binder(api, options.dataDir, undefined, snapshots);
    const stopSnapshotter = snapshots ? startSnapshotter(api, options.dataDir, snapshots) : undefined;
    const pulls = imagePuller(api, loop, recordWarning, options.registries);
    const jobs = jobController({
      api, loop, recordWarning, killPod,
      killPodsNamed: (namespace, prefix) => {
        for (const [podKey, kill] of node.kills) if (podKey.startsWith(`${namespace}/${prefix}`)) kill();
      },
    });
    const network = api.network;
    const stopEndpoints = network ? startEndpointsControllers(api) : undefined;
    const proxy: KubeProxy | undefined = network ? startKubeProxy(api, network) : undefined;
    proxyMode = proxy?.mode;
    const workers = podWorkers(api, loop, node, { dataDir: options.dataDir, configRetryMs, readOnlyViews: options.readOnlyViews, egress: options.egress, network },
      (pod, succeeded) => jobs.podFinished(pod, succeeded));

    function podAdded(pod: KubeObject): void {
      const onNode = placement.place(pod);
      if (!onNode) return;
      const pullError = pulls.pullError(pod);
      if (pullError) return pulls.failPulling(pod, onNode, pullError.image, pullError.message);
      // Other simulated controllers own the Pods of images no runtime here runs; those are only given their volumes.
      const spec = (pod.spec ?? {}) as PodSpec;
      const runnable = (spec.containers ?? []).length > 0 && [...(spec.initContainers ?? []), ...(spec.containers ?? [])].every((c) => isRunnableImage(c.image));
      if (!runnable) return;
      loop.track(workers.run(placement.bind(pod, onNode)));
    }

    function onEvent(event: ClusterEvent): void {
      if (loop.stopped) return;
      const { type, ref, object } = event;
      if (sameRef(ref, JOBS)) {
        if (type === 'ADDED') loop.track(Promise.resolve().then(() => jobs.jobAdded(object)));
        if (type === 'DELETED') jobs.jobDeleted(object);
      } else if (sameRef(ref, PODS)) {
        if (type === 'ADDED') loop.track(Promise.resolve().then(() => podAdded(object)));
        if (type === 'DELETED') killPod(object.metadata.namespace ?? '', object.metadata.name ?? '');
      } else if (sameRef(ref, PVCS)) {
        // the PV controller syncs a claim on every change (pv-controller.ts), and the hostPath provisioner behind it
        // provisions a claim of an Immediate class as soon as it appears (storage.ts); a deleted claim's volumes are
        // synced, which releases them
        const namespace = object.metadata.namespace ?? '';
        const name = object.metadata.name ?? '';
        loop.track(Promise.resolve().then(() => {
          if (type === 'DELETED') for (const volume of volumes.volumesNaming(namespace, name)) volumes.syncVolume(volume);
          else volumes.syncClaim(namespace, name);
        }));
      } else if (sameRef(ref, PVS)) {
        const claimRef = (object.spec as { claimRef?: { namespace?: string; name?: string } } | undefined)?.claimRef;
        loop.track(Promise.resolve().then(() => {
          if (type !== 'DELETED') volumes.syncVolume(object.metadata.name ?? '');
          if (claimRef?.name) volumes.syncClaim(claimRef.namespace ?? '', claimRef.name);
          // upstream, a Pending claim finds a volume that became Available on the controller's periodic resync
          // (pv_controller_base.go, resync); here that resync happens when a volume is Available
          if (type !== 'DELETED' && !claimRef) {
            for (const pvc of api.list(PVCS)) if (!isBound(pvc) && !(pvc.spec as { volumeName?: string } | undefined)?.volumeName) volumes.syncClaim(pvc.metadata.namespace ?? '', pvc.metadata.name ?? '');
          }
        }));
      }
    }

    const unsubscribe = api.subscribe(onEvent);
    const unserveLogs = api.serveLogs?.((namespace, pod) => node.logs.get(key(namespace, pod)));
    // pods/exec: the container must be running on this node (pkg/kubelet/kubelet_pods.go GetExec, findContainer)
    const unserveExec = api.serveExec?.((namespace, pod, container) => node.execs.get(`${key(namespace, pod)}/${container}`));
    // Objects that existed before the kubelet started are picked up as a restarted kubelet would.
    for (const pvc of api.list(PVCS)) onEvent({ type: 'ADDED', ref: PVCS, object: pvc });
    try {
      for (const pv of api.list(PVS)) onEvent({ type: 'ADDED', ref: PVS, object: pv });
    } catch {
      // a server that does not serve PersistentVolumes
    }
    for (const job of api.list(JOBS)) onEvent({ type: 'ADDED', ref: JOBS, object: job });
    for (const pod of api.list(PODS)) onEvent({ type: 'ADDED', ref: PODS, object: pod });

    // Registered, so that containers (real child processes) end even when the suite that started us cannot say so.
    const stop = stopOnExit('the simulated kubelet', async () => {
      const stopped = loop.stop();
      unsubscribe();
      stopSnapshotter?.();
      stopEndpoints?.();
      await proxy?.stop();
      unserveLogs?.();
      unserveExec?.();
      for (const kill of node.kills.values()) kill();
      await stopped;
    });
    return () => { void stop(); };
  }

  return {
    name: 'simulated-kubelet',
    start,
    stats: node.stats,
    volumePath: (namespace, pvcName) => {
      const pvc = started?.get(PVCS, pvcName, namespace);
      return started && pvc ? claimFolder(started, options.dataDir, pvc) : pvcFolder(options.dataDir, namespace, pvcName);
    },
    logs: (namespace, podName) => node.logs.get(key(namespace, podName)),
    idle: () => loop.idle(),
    proxyMode: () => proxyMode,
    snapshotHandles: () => snapshots?.handles() ?? [],
    snapshotFolder: (handle) => snapshots?.folder(handle),
  };
}
