// Shared setup for the volume mover tests: an embedded cluster with the simulated kubelet, PVCs, file trees and hashes.
import { createHash, randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, lstatSync, readlinkSync, writeFileSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { expect } from 'chai';
import { KubeClient } from '../../src/kube/client.ts';
import { VolumeMoveError } from '../../src/volumes/mover.ts';
import type { KubeObject } from '../../src/kube/types.ts';
import { volumeKubeFromClient } from '../../src/volumes/kube-client-port.ts';
import type { VolumeKube } from '../../src/volumes/kube-port.ts';
import { startCluster, type RunningCluster } from '../support/cluster/index.ts';
import { simulatedKubelet, storageClass, SIMULATED_PROVISIONER, volumeSnapshotClass, type SimulatedKubelet, type SimulatedKubeletOptions } from '../support/kubelet/index.ts';

export interface VolumeCluster {
  cluster: RunningCluster;
  kubelet: SimulatedKubelet;
  client: KubeClient;
  kube: VolumeKube;
  dataDir: string;
  stop(): Promise<void>;
}

export async function startVolumeCluster(options: {
  bindingMode?: 'Immediate' | 'WaitForFirstConsumer'; namespaces?: string[]; readOnlyViews?: 'copy' | 'bind-mount'; registries?: string[];
  /** CSI snapshots (the cluster's controller, the kubelet's driver) and a default VolumeSnapshotClass of the driver */
  snapshots?: boolean;
} = {}): Promise<VolumeCluster> {
  const cluster = await startCluster({ kubeflowCrds: false, controllers: false, ...(options.snapshots ? { volumeSnapshots: true } : {}) });
  const dataDir = mkdtempSync(join(tmpdir(), 'kubelet-data-'));
  const kubelet = simulatedKubelet({
    dataDir, configRetryMs: 2000, readOnlyViews: options.readOnlyViews, ...(options.registries ? { registries: options.registries } : {}),
    ...(options.snapshots ? { snapshots: true } : {}),
  });
  const stopKubelet = kubelet.start(cluster.api);
  cluster.api.create({ group: 'storage.k8s.io', resource: 'storageclasses' },
    storageClass('standard', { volumeBindingMode: options.bindingMode ?? 'Immediate', isDefault: true }));
  if (options.snapshots) {
    cluster.api.create({ group: 'snapshot.storage.k8s.io', resource: 'volumesnapshotclasses' }, volumeSnapshotClass('csi-hostpath-snapclass', SIMULATED_PROVISIONER, { isDefault: true }));
  }
  for (const name of options.namespaces ?? ['alice']) {
    cluster.api.create({ group: '', resource: 'namespaces' }, { apiVersion: 'v1', kind: 'Namespace', metadata: { name } });
  }
  const client = await KubeClient.load({ kubeconfig: cluster.kubeconfigPath });
  return {
    cluster, kubelet, client, kube: volumeKubeFromClient(client), dataDir,
    async stop() {
      stopKubelet();
      await kubelet.idle();
      client.close();
      await cluster.stop();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** An embedded Kubeflow cluster (its generated dataset, controllers) with the simulated kubelet running its Jobs. */
export interface KubeletCluster {
  cluster: RunningCluster;
  kubelet: SimulatedKubelet;
  dataDir: string;
  stop(): Promise<void>;
}

export async function startKubeletCluster(options: { profiles: number; seed: number; egress?: SimulatedKubeletOptions['egress'] }): Promise<KubeletCluster> {
  const cluster = await startCluster({ profiles: options.profiles, seed: options.seed });
  const dataDir = mkdtempSync(join(tmpdir(), 'kubelet-data-'));
  const kubelet = simulatedKubelet({ dataDir, configRetryMs: 3000, ...(options.egress ? { egress: options.egress } : {}) });
  const stopKubelet = kubelet.start(cluster.api);
  return {
    cluster, kubelet, dataDir,
    async stop() {
      stopKubelet();
      await kubelet.idle();
      await cluster.stop();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

export function pvc(namespace: string, name: string, accessModes: string[] = ['ReadWriteOnce']): KubeObject {
  return {
    apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata: { name, namespace },
    spec: { accessModes, resources: { requests: { storage: '1Gi' } } },
  };
}

export const PVC_REF = { group: '', resource: 'persistentvolumeclaims' };

export async function createBoundPvc(vc: VolumeCluster, namespace: string, name: string, accessModes?: string[]): Promise<string> {
  vc.cluster.api.create(PVC_REF, pvc(namespace, name, accessModes));
  await vc.kube.waitFor({ group: '', version: 'v1', resource: 'persistentvolumeclaims', kind: 'PersistentVolumeClaim' }, namespace, name,
    (o) => (o?.status as { phase?: string } | undefined)?.phase === 'Bound', { timeoutMs: 10_000 });
  return vc.kubelet.volumePath(namespace, name);
}

/** A workspace like a notebook leaves: nested folders, binary and empty files, unicode names, a symlink, one big file. */
export function writeWorkspace(root: string, options: { files: number; bigFileBytes: number }): void {
  const names = ['ünïcødé.bin', '日本語のファイル.txt', 'emoji 🚀 file.dat', 'spaces in name.csv', 'Ωmega.npy'];
  for (let i = 0; i < options.files; i++) {
    const dir = join(root, `project-${i % 7}`, `run-${i % 3}`, i % 2 ? 'data' : 'logs');
    mkdirSync(dir, { recursive: true });
    const size = i % 25 === 0 ? 0 : (i * 7919) % 20_000;
    writeFileSync(join(dir, i < names.length ? names[i]! : `file-${i}.bin`), randomBytes(size));
  }
  mkdirSync(join(root, 'ünïcødé dir', 'deeper'), { recursive: true });
  writeFileSync(join(root, 'ünïcødé dir', 'deeper', 'notes.md'), '# résumé\n');
  writeFileSync(join(root, '.hidden'), randomBytes(100));
  symlinkSync('project-0/run-0/logs', join(root, 'latest-logs'));
  if (options.bigFileBytes > 0) writeFileSync(join(root, 'model.ckpt'), randomBytes(options.bigFileBytes));
}

/** path → sha256 of content (or link target) of every file in a tree. */
export function hashTree(root: string): Map<string, string> {
  const out = new Map<string, string>();
  const walk = (dir: string) => {
    for (const entry of readdirSync(dir)) {
      const full = join(dir, entry);
      const stat = lstatSync(full);
      if (stat.isDirectory()) walk(full);
      else if (stat.isSymbolicLink()) out.set(relative(root, full), `link:${readlinkSync(full)}`);
      else out.set(relative(root, full), createHash('sha256').update(readFileSync(full)).digest('hex'));
    }
  };
  walk(root);
  return out;
}

export function s3For(server: { endpoint: string; accessKeyId: string; secretAccessKey: string }, bucket: string) {
  return { endpoint: server.endpoint, bucket, path: 'kubeflow', region: 'us-east-1', accessKey: server.accessKeyId, secretKey: server.secretAccessKey };
}

/** The VolumeMoveError a volume run failed with; fails the test when it did not fail that way. */
export async function volumeFailure(work: Promise<unknown>): Promise<VolumeMoveError> {
  try {
    await work;
  } catch (error) {
    expect(error).to.be.instanceOf(VolumeMoveError);
    return error as VolumeMoveError;
  }
  throw new Error('expected the volume run to fail');
}
