// The embedded Kubeflow cluster of startCluster (index.ts) without its HTTPS server, cluster network or kubeconfig:
// the same Cluster (seeded as startCluster seeds it), namespaces, `kubernetes` Service, Kubeflow CRDs and
// ClusterRoles, RBAC's bootstrap roles and aggregation, background controllers, the simulated Kubeflow controllers and
// the PodDefault webhook, and on request the generated dataset, with the product's kube port served in process
// (in-process-kube.ts). For the engines' fast tests: ordering, conflict policies, dry runs, late PodDefaults, reruns
// and the movers' scheduling in seconds. What needs HTTP, TLS, processes or faults stays with startCluster.
import { startBackgroundControllers } from './background.ts';
import { Cluster, CRD_REF, NS_REF } from './cluster.ts';
import { seededRandom } from './faults.ts';
import { InProcessKube, type InProcessKubeOptions } from './in-process-kube.ts';
import { kubeflowCrds } from './kubeflow/crds.ts';
import { kubeflowClusterRoles } from './kubeflow/cluster-roles.ts';
import { kubeflowControllers, type KubeflowControllerOptions } from './kubeflow/controllers.ts';
import { installPodDefaultWebhook } from './kubeflow/poddefault-webhook.ts';
import { applyDatasetInProcess } from './kubeflow/apply-in-process.ts';
import { installRbac } from './rbac/install.ts';
import type { KubeObject } from '../../../src/kube/types.ts';
import type { Controller } from './contract.ts';

const DEFAULT_NAMESPACES = ['default', 'kube-system', 'kube-public', 'kube-node-lease', 'kubeflow'];

export interface InProcessKubeflowOptions {
  /** the generated dataset with this many profiles (default 0) */
  profiles?: number;
  seed?: number;
  /** run the simulated Kubeflow controllers and the PodDefault webhook (default true) */
  controllers?: boolean;
  kubeflow?: KubeflowControllerOptions;
  /**
   * controllers (by name, e.g. 'kfp-profile-controller') left stopped until the test starts them: a controller that
   * answers late, as metacontroller's sync does, at the moment the test picks rather than after a delay
   */
  hold?: readonly string[];
  /** extra CRDs (a test's own kinds) */
  crds?: KubeObject[];
  kube?: InProcessKubeOptions;
}

export interface InProcessKubeflow {
  cluster: Cluster;
  /** the product's kube port over `cluster` */
  kube: InProcessKube;
  /** a fresh port over the same cluster (a second client: its own discovery cache and write record) */
  client(options?: InProcessKubeOptions): InProcessKube;
  /** starts a held controller (once) */
  start(name: string): void;
  /**
   * Resolves with the probe's first truthy answer, asked now and after every change in the cluster: the sign a
   * test waits for, never a sleep. (Mocha's timeout is what ends a wait for a sign that never comes.)
   */
  until<T>(probe: () => T | undefined | false | null): Promise<T>;
  stop(): void;
}

export async function inProcessKubeflow(options: InProcessKubeflowOptions = {}): Promise<InProcessKubeflow> {
  const seed = options.seed ?? 1;
  const cluster = new Cluster({ random: seededRandom(seed ^ 0x5eed), allocationSeed: seed });
  for (const name of DEFAULT_NAMESPACES) cluster.create(NS_REF, { apiVersion: 'v1', kind: 'Namespace', metadata: { name } });
  cluster.create({ group: '', resource: 'services' }, {
    apiVersion: 'v1', kind: 'Service',
    metadata: { name: 'kubernetes', namespace: 'default', labels: { component: 'apiserver', provider: 'kubernetes' } },
    spec: { clusterIP: cluster.services.firstIp, ports: [{ name: 'https', port: 443, protocol: 'TCP', targetPort: 16443 }] },
  });
  for (const crd of [...kubeflowCrds(), ...(options.crds ?? [])]) cluster.create(CRD_REF, crd);
  for (const role of kubeflowClusterRoles()) cluster.create({ group: 'rbac.authorization.k8s.io', resource: 'clusterroles' }, role);
  const rbac = installRbac(cluster);
  const stops: Array<() => void> = [startBackgroundControllers(cluster), rbac.stop];
  const held = new Map<string, Controller>();
  if (options.controllers !== false) {
    for (const controller of kubeflowControllers(options.kubeflow)) {
      if (options.hold?.includes(controller.name)) held.set(controller.name, controller);
      else stops.push(controller.start(cluster));
    }
    stops.push(installPodDefaultWebhook(cluster));
  }
  for (const name of options.hold ?? []) if (!held.has(name)) throw new Error(`no controller named ${name} to hold`);
  const start = (name: string) => {
    const controller = held.get(name);
    if (!controller) return;
    held.delete(name);
    stops.push(controller.start(cluster));
  };
  const until = <T>(probe: () => T | undefined | false | null): Promise<T> => new Promise<T>((resolve, reject) => {
    let unsubscribe = () => {};
    const ask = () => {
      try {
        const value = probe();
        if (value) {
          unsubscribe();
          resolve(value);
          return true;
        }
      } catch (error) {
        unsubscribe();
        reject(error);
        return true;
      }
      return false;
    };
    if (!ask()) unsubscribe = cluster.subscribe(() => { ask(); });
  });
  const stop = () => { for (const s of stops.splice(0)) s(); };
  try {
    if ((options.profiles ?? 0) > 0) await applyDatasetInProcess(cluster, { profiles: options.profiles!, seed });
  } catch (error) {
    stop();
    throw error;
  }
  return { cluster, kube: new InProcessKube(cluster, options.kube), client: (o) => new InProcessKube(cluster, o ?? options.kube), start, until, stop };
}
