// The embedded cluster's API semantics without its HTTPS front end: the same Cluster (validation, resourceVersions,
// finalizers, admission, CRD registration), the namespaces a new cluster has, Kubeflow's CRDs and the background
// controllers (garbage collector, namespace controller), for tests of the simulated controllers that need no client.
// startCluster (index.ts) puts the HTTPS server and the kubeconfig in front of the same pieces.
import { Cluster, CRD_REF, NS_REF } from './cluster.ts';
import { startBackgroundControllers } from './background.ts';
import { kubeflowCrds } from './kubeflow/crds.ts';

// the namespaces kubeadm's cluster starts with (kubernetes/kubernetes pkg/controlplane/controller/systemnamespaces),
// and the Juju model's
const STARTING_NAMESPACES = ['default', 'kube-system', 'kube-public', 'kube-node-lease', 'kubeflow'];

export interface InProcessCluster {
  api: Cluster;
  stop(): void;
}

export function inProcessCluster(): InProcessCluster {
  const api = new Cluster();
  for (const name of STARTING_NAMESPACES) api.create(NS_REF, { apiVersion: 'v1', kind: 'Namespace', metadata: { name } });
  for (const crd of kubeflowCrds()) api.create(CRD_REF, crd);
  const stop = startBackgroundControllers(api);
  return { api, stop };
}
