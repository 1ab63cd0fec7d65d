// Image pulls on the simulated nodes: an image from a registry the nodes cannot reach (or, for a Job's Pod, one no
// runtime here provides) never runs; its container waits with ErrImagePull and the registry's answer, then with
// ImagePullBackOff ("Back-off pulling image ..."), the two alternating for as long as the Pod exists, each failed pull
// also a Warning event "Failed" on the Pod. The Pod stays Pending on its node.
// Upstream: kubernetes/kubernetes pkg/kubelet/images/image_manager.go (EnsureImageExists: ErrImagePull, then
// ImagePullBackOff while the back-off lasts, and the "Failed to pull image" event), pkg/kubelet/images/types.go (the
// two reasons); distribution/reference normalize.go (docker.io and library/ for bare names); containerd's resolver
// (registry-1.docker.io for docker.io, the wording of "failed to pull and unpack image"). The real back-off grows from
// 10 s to 5 min; here it is short so that tests see both states.
import type { KubeObject } from '../../../src/kube/types.ts';
import type { InProcessApi } from '../cluster/contract.ts';
import { isRunnableImage, type ContainerSpec } from './container.ts';
import type { RecordWarning } from './events.ts';
import type { SimulationLoop } from './loop.ts';
import { now, type PodSpec } from './objects.ts';
import { setPodStatus } from './pod-status.ts';
import { PODS } from './refs.ts';

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

export interface ImagePuller {
  /** the first container image of the Pod the nodes cannot pull, with the runtime's message; undefined when all can be */
  pullError(pod: KubeObject): { image: string; message: string } | undefined;
  /** puts the Pod on its node with the failed image's container waiting, alternating ErrImagePull and ImagePullBackOff */
  failPulling(pod: KubeObject, node: string, image: string, message: string): void;
}

/** `registries`: the registries the nodes can pull from; undefined: any but hosts under .invalid, which never resolve. */
export function imagePuller(api: InProcessApi, loop: SimulationLoop, recordWarning: RecordWarning, registries: string[] | undefined): ImagePuller {
  const registryReachable = (registry: string): boolean =>
    registries ? registries.includes(registry) : !/(^|\.)invalid(:\d+)?$/.test(registry);

  function pullError(pod: KubeObject): { image: string; message: string } | undefined {
    const spec = (pod.spec ?? {}) as PodSpec;
    const ownedByJob = pod.metadata.ownerReferences?.some((o) => o.kind === 'Job') ?? false;
    for (const c of [...(spec.initContainers ?? []), ...(spec.containers ?? [])]) {
      const ref = normalizedImage(c.image);
      if (!registryReachable(ref.registry)) {
        // containerd asks Docker Hub at registry-1.docker.io for docker.io images
        const host = ref.registry === 'docker.io' ? 'registry-1.docker.io' : ref.registry;
        return { image: c.image, message: `failed to pull and unpack image "${ref.full}": failed to resolve reference "${ref.full}": failed to do request: Head "https://${host}/v2/${ref.repository}/manifests/${ref.tag}": dial tcp: lookup ${host}: no such host` };
      }
      // a Job's Pod is run by no other simulated controller, so an image no runtime here provides is one nobody has
      if (ownedByJob && !isRunnableImage(c.image)) {
        return { image: c.image, message: `failed to pull and unpack image "${ref.full}": failed to resolve reference "${ref.full}": ${ref.full}: not found` };
      }
    }
    return undefined;
  }

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
      if (reason === 'ErrImagePull') recordWarning(current, 'Failed', `Failed to pull image "${image}": ${message}`, 'kubelet');
      const waitingOn = (c: ContainerSpec) => (c.image === image
        ? { name: c.name, image: c.image, ready: false, restartCount: 0, state: { waiting: { reason, message: reason === 'ErrImagePull' ? message : `Back-off pulling image "${image}"` } } }
        : { name: c.name, image: c.image, ready: false, restartCount: 0, state: { waiting: { reason: 'PodInitializing' } } });
      setPodStatus(api, current, {
        phase: 'Pending', hostIP: '10.0.0.1', startTime: now(),
        conditions: [{ type: 'PodScheduled', status: 'True' }, { type: 'Initialized', status: 'False' }, { type: 'Ready', status: 'False', reason: 'ContainersNotReady' }],
        ...(spec.initContainers?.length ? { initContainerStatuses: spec.initContainers.map(waitingOn) } : {}),
        containerStatuses: (spec.containers ?? []).map(waitingOn),
      });
      loop.later(reason === 'ErrImagePull' ? 1000 : 2000, () => report(reason === 'ErrImagePull' ? 'ImagePullBackOff' : 'ErrImagePull'));
    };
    report('ErrImagePull');
  }

  return { pullError, failPulling };
}
