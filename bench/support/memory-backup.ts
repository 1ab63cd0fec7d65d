// For the benches that run in one process: an embedded cluster of P profiles and one backup of it in the in-memory
// backup store, made as the charm's backup-state makes it.
import { startCluster, type RunningCluster } from '../../tests/support/cluster/index.ts';
import { KubeClient } from '../../src/kube/client.ts';
import { runBackup } from '../../src/backup/engine.ts';
import { MemoryBackupStore } from '../../src/store/backup-store.ts';

export interface BackedUpCluster {
  cluster: RunningCluster;
  kube: KubeClient;
  store: MemoryBackupStore;
  backupId: string;
  /** closes the client and stops the cluster */
  stop(): Promise<void>;
}

export async function backedUpCluster(profiles: number): Promise<BackedUpCluster> {
  const cluster = await startCluster({ profiles, seed: 1 });
  const kube = await KubeClient.load({ kubeconfig: cluster.kubeconfigPath, concurrency: 16 });
  const stop = async () => {
    kube.close();
    await cluster.stop();
  };
  try {
    const store = new MemoryBackupStore();
    const { backupId } = await runBackup(kube, store, {
      kind: 'backup-state', includeVolumes: false, includeControlPlane: false, toolVersion: 'bench',
      profileNamespaceSelector: 'app.kubernetes.io/part-of=kubeflow-profile',
      protectedCrdGroups: ['kubeflow.org', 'tensorboard.kubeflow.org', 'serving.kserve.io'], modelNamespace: 'kubeflow',
    });
    return { cluster, kube, store, backupId, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}
