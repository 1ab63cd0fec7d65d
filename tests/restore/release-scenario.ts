// Blue/green across Charmed Kubeflow releases: the demo's data (plus the objects the releases in between change) on a
// cluster of release N, backed up, and restored into a fresh cluster of a later release (N+1, or a skip). The clusters serve either this
// repository's release profiles or the real CRD files of each release (the CI release suite).
import { S3Client } from '@aws-sdk/client-s3';
import { backupStore } from '../support/backup-store.ts';
import { startCluster, type ClusterOptions, type RunningCluster } from '../support/cluster/index.ts';
import type { Release } from '../support/cluster/kubeflow/releases.ts';
import { changesBetween, type ReleaseChange } from '../support/cluster/kubeflow/release-changes.ts';
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
 * later release to restore into.
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

export { RELEASE_CHANGES, changesBetween, type ReleaseChange } from '../support/cluster/kubeflow/release-changes.ts';

const has = (changes: readonly ReleaseChange[], path: string) => changes.some((c) => 'dropped' in c.change && c.change.dropped.path === path);

/** the objects that meet each change of the step `from` → `to`, made on `from` */
export function stepObjects(from: Release, to: Release): (namespace: string) => KubeObject[] {
  const changes = changesBetween(from, to);
  return (namespace) => {
    const objects: KubeObject[] = [];
    for (const c of changes) {
      if (!('unserved' in c.change)) continue;
      if (c.change.unserved.crd === 'seldondeployments.machinelearning.seldon.io') {
        objects.push({
          apiVersion: 'machinelearning.seldon.io/v1', kind: 'SeldonDeployment', metadata: { name: 'iris', namespace },
          spec: { predictors: [{ name: 'default', replicas: 1, graph: { name: 'classifier', implementation: 'SKLEARN_SERVER', modelUri: 'gs://seldon-models/sklearn/iris' } }] },
        });
      } else if (c.change.unserved.crd === 'mxjobs.kubeflow.org') {
        objects.push({
          apiVersion: 'kubeflow.org/v1', kind: 'MXJob', metadata: { name: 'mnist', namespace },
          spec: { jobMode: 'MXTrain', mxReplicaSpecs: { Worker: { replicas: 1, template: { spec: { containers: [{ name: 'mxnet', image: 'kubeflow/mxnet-gpu:latest' }] } } } } },
        });
      } else {
        throw new Error(`no object for the unserved kind ${c.change.unserved.crd}`);
      }
    }
    if (changes.some((c) => 'dropped' in c.change)) {
      objects.push(inferenceService(namespace, {
        ...(has(changes, 'spec.explainer.alibi') ? { explainer: { alibi: { type: 'AnchorTabular', storageUri: 'gs://kfserving-examples/models/sklearn/1.0/explainer' } } } : {}),
        predictorVolumes: has(changes, 'spec.predictor.volumes[0].ephemeral.volumeClaimTemplate.spec.resources.claims'),
        workerSize: has(changes, 'spec.predictor.workerSpec.size'),
      }));
    }
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

/** what the step's objects lose on the target, as the restore names it (namespace filled in), sorted */
export function expectedDrops(from: Release, to: Release, namespace: string, dryRun: boolean): string[] {
  const verb = dryRun ? 'would be dropped' : 'dropped';
  return changesBetween(from, to)
    .flatMap((c) => ('dropped' in c.change ? [`InferenceService ${namespace}/${c.change.dropped.object}: ${c.change.dropped.path} ${verb} by the target's schema`] : []))
    .sort();
}

/** the kinds the target serves in no version, as the restore lists them, sorted */
export function expectedUnserved(from: Release, to: Release): string[] {
  return changesBetween(from, to)
    .flatMap((c) => ('unserved' in c.change ? [`${c.change.unserved.crd}/${c.change.unserved.version} (1 object)`] : []))
    .sort();
}
