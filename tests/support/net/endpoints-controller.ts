// The endpoints and EndpointSlice controllers: for every Service with a selector, the Pods it selects, as addresses.
// Upstream (kubernetes/kubernetes):
// - pkg/controller/endpoint/endpoints_controller.go (syncService: the Endpoints object named after the Service, its
//   labels copied plus service.kubernetes.io/headless; a Pod counts once it has an IP, is not being deleted and has
//   not ended for good (pkg/api/v1/endpoints + pkg/controller/util/endpoint ShouldPodBeInEndpoints); a ready Pod's
//   address goes in `addresses`, any other's in `notReadyAddresses` unless publishNotReadyAddresses; each Service port
//   is resolved on each Pod with podutil.FindPort: a number as it is, a name by the Pod's container ports of that name
//   and protocol, and a Pod without it is left out of that port; the subsets are packed by port set, RepackSubsets);
// - pkg/controller/endpointslice/reconciler.go and staging/src/k8s.io/endpointslice (one slice per port set, at most
//   100 endpoints each, generateName "<service>-", labels kubernetes.io/service-name and
//   endpointslice.kubernetes.io/managed-by, owned by the Service; conditions ready/serving/terminating; a Service with
//   no endpoints keeps one placeholder slice without ports or endpoints);
// - pkg/api/v1/pod/util.go IsPodReady (the Pod condition Ready is True).
// The Endpoints object goes when its Service does; the slices go with it through the garbage collector (ownerReferences).
import type { KubeObject } from '../../../src/kube/types.ts';
import type { ClusterEvent, InProcessApi } from '../cluster/contract.ts';

/** a Service's selector: every key with its value (an empty selector selects nothing, see syncService) */
export function labelsMatch(selector: Record<string, string>, labels: Record<string, string>): boolean {
  const keys = Object.keys(selector);
  return keys.length > 0 && keys.every((k) => labels[k] === selector[k]);
}

const SERVICES = { group: '', resource: 'services' };
const PODS = { group: '', resource: 'pods' };
const ENDPOINTS = { group: '', resource: 'endpoints' };
const SLICES = { group: 'discovery.k8s.io', resource: 'endpointslices' };
const MANAGED_BY = 'endpointslice-controller.k8s.io';
const MAX_ENDPOINTS_PER_SLICE = 100;

interface ServicePort { name?: string; port: number; protocol?: string; targetPort?: number | string }
interface ServiceSpec { selector?: Record<string, string>; ports?: ServicePort[]; clusterIP?: string; type?: string; publishNotReadyAddresses?: boolean }
interface ContainerPort { name?: string; containerPort: number; protocol?: string }
interface PodFields {
  spec?: { nodeName?: string; restartPolicy?: string; hostname?: string; containers?: { ports?: ContainerPort[] }[] };
  status?: { phase?: string; podIP?: string; conditions?: { type: string; status: string }[] };
}

export interface EndpointPort { name: string; port: number; protocol: string }
export interface PodEndpoint { ip: string; ready: boolean; terminating: boolean; pod: KubeObject }

/** ShouldPodBeInEndpoints, without terminating Pods */
function shouldBeInEndpoints(pod: KubeObject): boolean {
  const { spec, status } = pod as PodFields;
  if (!status?.podIP) return false;
  if (pod.metadata.deletionTimestamp) return false;
  const phase = status.phase;
  switch (spec?.restartPolicy ?? 'Always') {
    case 'Never': return phase !== 'Failed' && phase !== 'Succeeded';
    case 'OnFailure': return phase !== 'Succeeded';
    default: return true;
  }
}

export function isPodReady(pod: KubeObject): boolean {
  return ((pod as PodFields).status?.conditions ?? []).some((c) => c.type === 'Ready' && c.status === 'True');
}

/** podutil.FindPort */
export function findPort(pod: KubeObject, port: ServicePort): number | undefined {
  const target = port.targetPort ?? port.port;
  if (typeof target === 'number') return target;
  if (/^\d+$/.test(target)) return Number(target);
  const protocol = port.protocol ?? 'TCP';
  for (const container of (pod as PodFields).spec?.containers ?? []) {
    for (const p of container.ports ?? []) if (p.name === target && (p.protocol ?? 'TCP') === protocol) return p.containerPort;
  }
  return undefined;
}

/** The Pods of a Service, each with the ports it serves: what both controllers publish. */
export function serviceEndpoints(api: InProcessApi, service: KubeObject): Map<string, { ports: EndpointPort[]; endpoints: PodEndpoint[] }> {
  const spec = (service.spec ?? {}) as ServiceSpec;
  const groups = new Map<string, { ports: EndpointPort[]; endpoints: PodEndpoint[] }>();
  const selector = spec.selector ?? {};
  const pods = api.list(PODS, { namespace: service.metadata.namespace }).filter((p) => labelsMatch(selector, p.metadata.labels ?? {}) && shouldBeInEndpoints(p));
  for (const pod of pods) {
    const ports: EndpointPort[] = [];
    for (const port of spec.ports ?? []) {
      const number = findPort(pod, port);
      if (number !== undefined) ports.push({ name: port.name ?? '', port: number, protocol: port.protocol ?? 'TCP' });
    }
    // a Service without ports still lists its Pods (endpoints_controller.go: "headless service with no ports")
    if ((spec.ports ?? []).length > 0 && ports.length === 0) continue;
    const groupKey = JSON.stringify(ports);
    const group = groups.get(groupKey) ?? { ports, endpoints: [] };
    group.endpoints.push({ ip: (pod as PodFields).status!.podIP!, ready: isPodReady(pod) || !!spec.publishNotReadyAddresses, terminating: false, pod });
    groups.set(groupKey, group);
  }
  for (const group of groups.values()) group.endpoints.sort((a, b) => a.ip.localeCompare(b.ip));
  return groups;
}

const targetRef = (pod: KubeObject) => ({ kind: 'Pod', namespace: pod.metadata.namespace, name: pod.metadata.name, uid: pod.metadata.uid });

function desiredLabels(service: KubeObject): Record<string, string> {
  const labels = { ...(service.metadata.labels ?? {}) };
  if ((service.spec as ServiceSpec | undefined)?.clusterIP === 'None') labels['service.kubernetes.io/headless'] = '';
  return labels;
}

function endpointsObject(service: KubeObject, groups: ReturnType<typeof serviceEndpoints>): KubeObject {
  const subsets = [...groups.values()].map(({ ports, endpoints }) => {
    const address = (e: PodEndpoint) => ({ ip: e.ip, ...((e.pod as PodFields).spec?.nodeName ? { nodeName: (e.pod as PodFields).spec!.nodeName } : {}), targetRef: targetRef(e.pod) });
    const ready = endpoints.filter((e) => e.ready).map(address);
    const notReady = endpoints.filter((e) => !e.ready).map(address);
    return {
      ...(ready.length ? { addresses: ready } : {}),
      ...(notReady.length ? { notReadyAddresses: notReady } : {}),
      ...(ports.length ? { ports: ports.map((p) => ({ ...(p.name ? { name: p.name } : {}), port: p.port, protocol: p.protocol })) } : {}),
    };
  });
  return {
    apiVersion: 'v1', kind: 'Endpoints',
    metadata: { name: service.metadata.name, namespace: service.metadata.namespace, labels: desiredLabels(service) },
    ...(subsets.length ? { subsets } : {}),
  };
}

function sliceBodies(service: KubeObject, groups: ReturnType<typeof serviceEndpoints>): { ports: unknown[]; endpoints: unknown[] }[] {
  const bodies: { ports: unknown[]; endpoints: unknown[] }[] = [];
  for (const { ports, endpoints } of groups.values()) {
    for (let i = 0; i < endpoints.length; i += MAX_ENDPOINTS_PER_SLICE) {
      bodies.push({
        ports: ports.map((p) => ({ name: p.name, port: p.port, protocol: p.protocol })),
        endpoints: endpoints.slice(i, i + MAX_ENDPOINTS_PER_SLICE).map((e) => ({
          addresses: [e.ip],
          conditions: { ready: e.ready, serving: e.ready, terminating: e.terminating },
          ...((e.pod as PodFields).spec?.nodeName ? { nodeName: (e.pod as PodFields).spec!.nodeName } : {}),
          targetRef: targetRef(e.pod),
        })),
      });
    }
  }
  // the placeholder slice of a Service without endpoints
  if (bodies.length === 0) bodies.push({ ports: [], endpoints: [] });
  void service;
  return bodies;
}

const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);

function syncService(api: InProcessApi, namespace: string, name: string): void {
  const service = api.get(SERVICES, name, namespace);
  const spec = (service?.spec ?? {}) as ServiceSpec;
  // an empty selector is no selector: the stored Service cannot tell {} from none (protobuf), so nothing is managed
  if (!service || Object.keys(spec.selector ?? {}).length === 0 || spec.type === 'ExternalName') {
    // the Service is gone or no longer selects: its Endpoints go (its slices follow by owner, or are removed here)
    if (api.get(ENDPOINTS, name, namespace)) api.delete(ENDPOINTS, name, namespace);
    if (service) for (const s of ownSlices(api, namespace, name)) api.delete(SLICES, s.metadata.name ?? '', namespace);
    return;
  }
  const groups = serviceEndpoints(api, service);
  const wanted = endpointsObject(service, groups);
  const current = api.get(ENDPOINTS, name, namespace);
  if (!current) api.create(ENDPOINTS, wanted);
  else if (!same(current.subsets, wanted.subsets) || !same(current.metadata.labels ?? {}, wanted.metadata.labels)) {
    api.update(ENDPOINTS, { ...wanted, metadata: { ...current.metadata, labels: wanted.metadata.labels } });
  }

  const labels = { ...desiredLabels(service), 'kubernetes.io/service-name': name, 'endpointslice.kubernetes.io/managed-by': MANAGED_BY };
  const owner = { apiVersion: 'v1', kind: 'Service', name, uid: service.metadata.uid ?? '', controller: true, blockOwnerDeletion: true };
  const existing = ownSlices(api, namespace, name);
  const bodies = sliceBodies(service, groups);
  for (const [i, body] of bodies.entries()) {
    const slice = existing[i];
    if (!slice) {
      api.create(SLICES, { apiVersion: 'discovery.k8s.io/v1', kind: 'EndpointSlice', metadata: { generateName: `${name}-`, namespace, labels, ownerReferences: [owner] }, addressType: 'IPv4', ...body });
    } else if (!same(slice['ports'] ?? [], body.ports) || !same(slice['endpoints'] ?? [], body.endpoints) || !same(slice.metadata.labels, labels)) {
      api.update(SLICES, { ...slice, metadata: { ...slice.metadata, labels }, ...body });
    }
  }
  for (const slice of existing.slice(bodies.length)) api.delete(SLICES, slice.metadata.name ?? '', namespace);
}

function ownSlices(api: InProcessApi, namespace: string, service: string): KubeObject[] {
  return api.list(SLICES, { namespace, labelSelector: `kubernetes.io/service-name=${service},endpointslice.kubernetes.io/managed-by=${MANAGED_BY}` })
    .sort((a, b) => (a.metadata.name ?? '').localeCompare(b.metadata.name ?? ''));
}

/** Starts both controllers on `api`; returns their stop. */
export function startEndpointsControllers(api: InProcessApi): () => void {
  const dirty = new Set<string>();
  let scheduled = false;
  let stopped = false;
  const retries = new Set<NodeJS.Timeout>();

  const flush = () => {
    scheduled = false;
    if (stopped) return;
    const keys = [...dirty];
    dirty.clear();
    for (const k of keys) {
      const [namespace, name] = k.split('/') as [string, string];
      try {
        syncService(api, namespace, name);
      } catch (error) {
        const status = (error as { status?: number }).status;
        // a conflict with another writer, or a namespace being deleted: tried again, as the work queue requeues it
        if (status === 409 || status === 404 || status === 500 || status === 429) {
          const t = setTimeout(() => { retries.delete(t); enqueue(k); }, 100);
          t.unref();
          retries.add(t);
        } else if (status !== 403) {
          console.error(`endpoints controller: ${namespace}/${name}: ${(error as Error).message}`);
        }
      }
    }
  };
  const enqueue = (k: string) => {
    dirty.add(k);
    if (!scheduled && !stopped) {
      scheduled = true;
      setImmediate(flush);
    }
  };

  const onEvent = ({ ref, object, type }: ClusterEvent) => {
    const namespace = object.metadata.namespace ?? '';
    if (ref.group === '' && ref.resource === 'services') {
      enqueue(`${namespace}/${object.metadata.name}`);
    } else if (ref.group === '' && ref.resource === 'pods') {
      // every Service of the namespace that selects the Pod (or did: a Pod's labels can change) is synced again
      for (const service of api.list(SERVICES, { namespace })) {
        const selector = (service.spec as ServiceSpec | undefined)?.selector;
        if (selector && (type !== 'MODIFIED' || labelsMatch(selector, object.metadata.labels ?? {}) || hasEndpointFor(api, service, object))) {
          enqueue(`${namespace}/${service.metadata.name}`);
        }
      }
    } else if (ref.group === '' && ref.resource === 'endpoints' && type === 'DELETED') {
      // someone removed an Endpoints object the controller owns: it is written again
      if (api.get(SERVICES, object.metadata.name ?? '', namespace)) enqueue(`${namespace}/${object.metadata.name}`);
    }
  };
  const unsubscribe = api.subscribe(onEvent);
  for (const service of api.list(SERVICES)) enqueue(`${service.metadata.namespace}/${service.metadata.name}`);
  return () => {
    stopped = true;
    unsubscribe();
    for (const t of retries) clearTimeout(t);
  };
}

function hasEndpointFor(api: InProcessApi, service: KubeObject, pod: KubeObject): boolean {
  const current = api.get(ENDPOINTS, service.metadata.name ?? '', service.metadata.namespace);
  const subsets = (current?.['subsets'] ?? []) as { addresses?: { targetRef?: { uid?: string } }[]; notReadyAddresses?: { targetRef?: { uid?: string } }[] }[];
  return subsets.some((s) => [...(s.addresses ?? []), ...(s.notReadyAddresses ?? [])].some((a) => a.targetRef?.uid === pod.metadata.uid));
}
