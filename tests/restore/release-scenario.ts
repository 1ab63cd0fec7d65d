// Blue/green across Charmed Kubeflow releases: the demo's data (plus the objects a release step changes) on a cluster
// of release N, backed up, and restored into a fresh cluster of release N+1. The clusters serve either this
// repository's release profiles or the real CRD files of each release (the CI release suite).
import { S3Client } from '@aws-sdk/client-s3';
import { backupStore } from '../support/backup-store.ts';
import { startCluster, type ClusterOptions, type RunningCluster } from '../support/cluster/index.ts';
import type { Release } from '../support/cluster/kubeflow/releases.ts';
import { startS3Server, type S3ServerHandle } from '../support/s3/server.ts';
import { KubeClient } from '../../src/kube/client.ts';
import type { KubeObject } from '../../src/kube/types.ts';
import { ObjectStore } from '../../src/store/objects.ts';
import { runBackup } from '../../src/backup/engine.ts';
import { runRestore, type RestoreOutcome, type RestoreRequest } from '../../src/restore/engine.ts';

/** where the clusters' CRDs come from: the release profiles, or `<dir>/<release>` holding the real CRD files */
export type CrdSource = { kind: 'profiles' } | { kind: 'files'; dir: string };

export interface Scenario {
  from: Release;
  to: Release;
  a: RunningCluster;
  b: RunningCluster;
  kubeA: KubeClient;
  kubeB: KubeClient;
  backupId: string;
  /** the namespace the extra objects went into */
  namespace: string;
  restore(overrides?: Partial<RestoreRequest>): Promise<RestoreOutcome>;
  stop(): Promise<void>;
}

const BUCKET = 'releases';

function clusterOptions(source: CrdSource, release: Release): ClusterOptions {
  return source.kind === 'files' ? { crdDir: `${source.dir}/${release}` } : { kubeflowRelease: release };
}

/**
 * Release N with the demo's data and `extra(namespace)` in the first profile namespace; a backup of it; an empty
 * release N+1 to restore into.
 */
export async function startScenario(source: CrdSource, from: Release, to: Release, extra: (namespace: string) => KubeObject[], profiles = 4): Promise<Scenario> {
  let s3: S3ServerHandle | undefined;
  let a: RunningCluster | undefined;
  let b: RunningCluster | undefined;
  try {
    [a, b, s3] = await Promise.all([
      startCluster({ ...clusterOptions(source, from), profiles, seed: 7, kubeflowWebhooks: { ready: true } }),
      startCluster({ ...clusterOptions(source, to), seed: 7, kubeflowWebhooks: { ready: true } }),
      startS3Server({ buckets: [BUCKET] }),
    ]);
    const namespace = (a.cluster.list({ group: 'kubeflow.org', resource: 'profiles' })[0]?.metadata.name)!;
    for (const object of extra(namespace)) {
      const def = a.cluster.resourceByKind(object.apiVersion.split('/')[0]!, object.kind)!;
      a.cluster.create(def, object);
    }
    const kubeA = await KubeClient.load({ kubeconfig: a.kubeconfigPath, concurrency: 8 });
    const kubeB = await KubeClient.load({ kubeconfig: b.kubeconfigPath, concurrency: 8 });
    const client = new S3Client({
      endpoint: s3.endpoint, region: 'us-east-1', forcePathStyle: true,
      credentials: { accessKeyId: s3.accessKeyId, secretAccessKey: s3.secretAccessKey },
    });
    const store = new ObjectStore({ client, bucket: BUCKET, prefix: `kf-${from}` });
    const backup = await runBackup(kubeA, backupStore(store), {
      kind: 'backup-state', includeVolumes: false, includeControlPlane: false, toolVersion: 'test',
      profileNamespaceSelector: 'app.kubernetes.io/part-of=kubeflow-profile', protectedCrdGroups: ['kubeflow.org'],
    });
    const [ra, rb, rs] = [a, b, s3];
    return {
      from, to, a: ra, b: rb, kubeA, kubeB, backupId: backup.backupId, namespace,
      restore: (overrides = {}) => runRestore(kubeB, backupStore(store), { backupId: backup.backupId, waitTimeoutMs: 20_000, includeVolumes: false, ...overrides }),
      stop: async () => {
        kubeA.close();
        kubeB.close();
        await Promise.all([ra.stop(), rb.stop(), rs.stop()]);
      },
    };
  } catch (error) {
    await Promise.all([a?.stop(), b?.stop(), s3?.stop()]);
    throw error;
  }
}

/** the objects a release step removes or prunes, by the release they are made on */
export function stepObjects(from: Release): (namespace: string) => KubeObject[] {
  return (namespace) => {
    const objects: KubeObject[] = [];
    if (from === '1.8') {
      objects.push({
        apiVersion: 'machinelearning.seldon.io/v1', kind: 'SeldonDeployment', metadata: { name: 'iris', namespace },
        spec: { predictors: [{ name: 'default', replicas: 1, graph: { name: 'classifier', implementation: 'SKLEARN_SERVER', modelUri: 'gs://seldon-models/sklearn/iris' } }] },
      });
      objects.push(inferenceService(namespace, { explainer: { alibi: { type: 'AnchorTabular', storageUri: 'gs://kfserving-examples/models/sklearn/1.0/explainer' } } }));
    }
    if (from === '1.9') {
      objects.push({
        apiVersion: 'kubeflow.org/v1', kind: 'MXJob', metadata: { name: 'mnist', namespace },
        spec: { jobMode: 'MXTrain', mxReplicaSpecs: { Worker: { replicas: 1, template: { spec: { containers: [{ name: 'mxnet', image: 'kubeflow/mxnet-gpu:latest' }] } } } } },
      });
      objects.push(inferenceService(namespace, { predictorVolumes: true }));
    }
    if (from === '1.10') objects.push(inferenceService(namespace, { workerSize: true }));
    return objects;
  };
}

function inferenceService(namespace: string, parts: { explainer?: Record<string, unknown>; predictorVolumes?: boolean; workerSize?: boolean }): KubeObject {
  const predictor: Record<string, unknown> = { model: { modelFormat: { name: 'sklearn' }, storageUri: 'gs://kfserving-examples/models/sklearn/1.0/model' } };
  if (parts.predictorVolumes) {
    predictor.volumes = [{
      name: 'scratch',
      ephemeral: { volumeClaimTemplate: { spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' }, claims: [{ name: 'gpu' }] } } } },
    }];
  }
  if (parts.workerSize) predictor.workerSpec = { size: 2, containers: [{ name: 'worker', image: 'kserve/huggingfaceserver:latest' }] };
  return {
    apiVersion: 'serving.kserve.io/v1beta1', kind: 'InferenceService', metadata: { name: 'sk', namespace },
    spec: { predictor, ...(parts.explainer ? { explainer: parts.explainer } : {}) },
  };
}

/** what the step's objects lose on the target, as the restore names it (namespace filled in) */
export function expectedDrops(from: Release, namespace: string, dryRun: boolean): string[] {
  const verb = dryRun ? 'would be dropped' : 'dropped';
  const field = {
    '1.8': 'spec.explainer.alibi',
    '1.9': 'spec.predictor.volumes[0].ephemeral.volumeClaimTemplate.spec.resources.claims',
    '1.10': 'spec.predictor.workerSpec.size',
    '1.11': undefined,
  }[from];
  return field ? [`InferenceService ${namespace}/sk: ${field} ${verb} by the target's schema`] : [];
}

/** the kinds the target serves in no version, as the restore lists them */
export function expectedUnserved(from: Release): string[] {
  if (from === '1.8') return ['seldondeployments.machinelearning.seldon.io/v1 (1 object)'];
  if (from === '1.9') return ['mxjobs.kubeflow.org/v1 (1 object)'];
  return [];
}
