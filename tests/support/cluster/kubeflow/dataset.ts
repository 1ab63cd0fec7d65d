// The realistic Kubeflow dataset (issue 3 item 7): per profile an owner and KFAM contributors, notebooks with the pod
// specs the Jupyter web app writes and their workspace PVCs, PodDefaults, Secrets (binary data too), ConfigMaps,
// and on some profiles an InferenceService, a Katib Experiment, a PyTorchJob, a Tensorboard, large objects, unicode
// and odd but valid names. Deterministic by seed. Applied through @kubernetes/client-node as users would: the
// Profile first, then — once the profile controller made the namespace — the rest, so controllers make their objects.
import * as k8s from '@kubernetes/client-node';
import pLimit from 'p-limit';
import type { KubeObject } from '../../../../src/kube/types.ts';
import { kfamBindingName } from './kfam.ts';
import { streamFor, type Random } from './random.ts';

type ContributorRole = 'edit' | 'view';

export interface DatasetProfile {
  profile: KubeObject;
  /** everything users make inside the profile namespace, in a sensible creation order */
  objects: KubeObject[];
}

export interface Dataset {
  seed: number;
  profiles: DatasetProfile[];
}

export interface DatasetSummary {
  profiles: number;
  /** dataset objects created (Profiles included) */
  created: number;
  /** dataset objects that already existed (a rerun) */
  existing: number;
  byKind: Record<string, number>;
  durationMs: number;
}

const firstNames = ['alice', 'bob', 'chidi', 'dana', 'émile', 'fatima', 'grace', 'hiro', 'ines', 'jonas', 'kavya', 'lars', 'mei', 'nuno', 'olga', 'priya'];
const lastNames = ['smith', "o'neil", 'garcía', 'nakamura', 'kowalski', 'okafor', 'müller', 'singh', 'dubois', 'andersen'];
const domains = ['example.com', 'Example.CO.uk', 'ml.example.org', 'research.example.net'];
const notebookImages = [
  'kubeflownotebookswg/jupyter-scipy:v1.10.0',
  'kubeflownotebookswg/jupyter-pytorch-cuda-full:v1.10.0',
  'kubeflownotebookswg/jupyter-tensorflow-full:v1.10.0',
  'kubeflownotebookswg/codeserver-python:v1.10.0',
  'kubeflownotebookswg/rstudio-tidyverse:v1.10.0',
];
const unicodeNotes = ['Ünïcödé notebook — données', '数据科学 实验', 'モデル学習 🚀', 'Проект по ML', 'تجربة التعلم الآلي', 'naïve café ☕ résumé'];

/** which profiles get the rarer objects: every 10th (profile 0 included) */
const hasServing = (index: number) => index % 10 === 0;
const hasLargeObject = (index: number) => index % 250 === 0;

function ascii(text: string): string {
  return text.normalize('NFKD').replace(/[^\x00-\x7f]/g, '');
}

function profileName(index: number, first: string): string {
  const base = ascii(first).replace(/[^a-z0-9]/g, '');
  switch (index % 50) {
    case 7: return `${index}-starts-with-a-digit`;
    case 13: return `team--${base}--${index}`;
    case 29: return `${base}-${index}-${'x'.repeat(63)}`.slice(0, 63).replace(/-+$/, '');
    default: return `${base}-${index}`;
  }
}

function owner(random: Random, first: string, index: number): string {
  const last = random.pick(lastNames);
  const plus = index % 3 === 0 ? `+ml${index}` : '';
  const local = index % 11 === 0 ? `${first[0]!.toUpperCase()}${first.slice(1)}.${last.toUpperCase()}` : `${first}.${last}`;
  return `${ascii(local).replace(/'/g, '')}${plus}@${random.pick(domains)}`.replace(/^\./, '');
}

function contributor(namespace: string, email: string, role: ContributorRole): KubeObject[] {
  const name = kfamBindingName(email, role);
  const annotations = { user: email, role };
  return [{
    apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'RoleBinding',
    metadata: { name, namespace, annotations },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: `kubeflow-${role}` },
    subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: email }],
  }, {
    apiVersion: 'security.istio.io/v1beta1', kind: 'AuthorizationPolicy',
    metadata: { name, namespace, annotations },
    spec: { rules: [{ when: [{ key: 'request.headers[kubeflow-userid]', values: [email] }] }] },
  }];
}

function notebook(random: Random, namespace: string, name: string, creator: string): KubeObject[] {
  const image = random.pick(notebookImages);
  const workspace = `${name}-workspace`;
  const cpu = random.pick(['0.5', '1', '2', '4']);
  const memory = random.pick(['1Gi', '2Gi', '4Gi', '8Gi']);
  const gpu = image.includes('cuda') && random.chance(0.5);
  return [{
    apiVersion: 'v1', kind: 'PersistentVolumeClaim',
    metadata: { name: workspace, namespace, labels: { 'app.kubernetes.io/part-of': 'jupyter-notebook' } },
    spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: random.pick(['5Gi', '10Gi', '20Gi']) } }, volumeMode: 'Filesystem' },
  }, {
    apiVersion: 'kubeflow.org/v1', kind: 'Notebook',
    metadata: {
      name, namespace,
      labels: { app: name },
      annotations: {
        'notebooks.kubeflow.org/server-type': image.includes('codeserver') ? 'group-one' : image.includes('rstudio') ? 'group-two' : 'jupyter',
        'notebooks.kubeflow.org/creator': creator,
        'notebooks.kubeflow.org/last-activity': '2025-01-01T00:00:00Z',
        'kubeflow-upgrader.test/description': random.pick(unicodeNotes),
      },
    },
    spec: {
      template: {
        metadata: { labels: { 'access-ml-pipeline': 'true' } },
        spec: {
          serviceAccountName: 'default-editor',
          containers: [{
            name, image, imagePullPolicy: 'IfNotPresent',
            resources: {
              requests: { cpu, memory },
              limits: { cpu: String(Number(cpu) * 1.2), memory, ...(gpu ? { 'nvidia.com/gpu': '1' } : {}) },
            },
            volumeMounts: [{ mountPath: '/home/jovyan', name: workspace }, { mountPath: '/dev/shm', name: 'dshm' }],
            env: [{ name: 'JUPYTER_ENABLE_LAB', value: 'yes' }],
          }],
          volumes: [
            { name: workspace, persistentVolumeClaim: { claimName: workspace } },
            { name: 'dshm', emptyDir: { medium: 'Memory' } },
          ],
          ...(gpu ? { tolerations: [{ key: 'nvidia.com/gpu', operator: 'Exists', effect: 'NoSchedule' }] } : {}),
        },
      },
    },
  }];
}

function largeConfigMap(random: Random, namespace: string, kib: number): KubeObject {
  const alphabet = 'abcdefghijklmnopqrstuvwxyz0123456789\n';
  const chunk = Array.from({ length: 4096 }, () => alphabet[random.int(alphabet.length)]).join('');
  return {
    apiVersion: 'v1', kind: 'ConfigMap',
    metadata: { name: 'training-vocabulary.v2', namespace, labels: { size: 'large' } },
    data: { 'vocab.txt': chunk.repeat(Math.floor((kib * 1024) / chunk.length)) },
  };
}

function servingAndTraining(random: Random, namespace: string): KubeObject[] {
  return [{
    apiVersion: 'serving.kserve.io/v1beta1', kind: 'InferenceService',
    metadata: { name: 'sklearn-iris', namespace, annotations: { 'sidecar.istio.io/inject': 'false' } },
    spec: { predictor: { model: { modelFormat: { name: 'sklearn' }, storageUri: 'gs://kfserving-examples/models/sklearn/1.0/model' } } },
  }, {
    apiVersion: 'kubeflow.org/v1beta1', kind: 'Experiment',
    metadata: { name: 'random-search', namespace },
    spec: {
      objective: { type: 'maximize', goal: 0.99, objectiveMetricName: 'Validation-accuracy', additionalMetricNames: ['Train-accuracy'] },
      algorithm: { algorithmName: 'random' },
      parallelTrialCount: 2, maxTrialCount: 6, maxFailedTrialCount: 3,
      parameters: [
        { name: 'lr', parameterType: 'double', feasibleSpace: { min: '0.01', max: '0.03' } },
        { name: 'num-layers', parameterType: 'int', feasibleSpace: { min: '2', max: '5' } },
      ],
      trialTemplate: {
        primaryContainerName: 'training-container',
        trialParameters: [{ name: 'learningRate', reference: 'lr' }, { name: 'numberLayers', reference: 'num-layers' }],
        trialSpec: {
          apiVersion: 'batch/v1', kind: 'Job',
          spec: { template: { spec: { restartPolicy: 'Never', containers: [{ name: 'training-container', image: 'docker.io/kubeflowkatib/mxnet-mnist:v0.18.0', command: ['python3', '/opt/mxnet-mnist/mnist.py', '--lr=${trialParameters.learningRate}', '--num-layers=${trialParameters.numberLayers}'] }] } } },
        },
      },
    },
  }, {
    apiVersion: 'kubeflow.org/v1', kind: 'PyTorchJob',
    metadata: { name: 'pytorch-simple', namespace },
    spec: {
      pytorchReplicaSpecs: {
        Master: { replicas: 1, restartPolicy: 'OnFailure', template: { spec: { containers: [{ name: 'pytorch', image: 'docker.io/kubeflowkatib/pytorch-mnist:v1beta1-45c5727', command: ['python3', '/opt/pytorch-mnist/mnist.py', '--epochs=1'] }] } } },
        Worker: { replicas: 1 + random.int(3), restartPolicy: 'OnFailure', template: { spec: { containers: [{ name: 'pytorch', image: 'docker.io/kubeflowkatib/pytorch-mnist:v1beta1-45c5727', command: ['python3', '/opt/pytorch-mnist/mnist.py', '--epochs=1'] }] } } },
      },
    },
  }, {
    apiVersion: 'tensorboard.kubeflow.org/v1alpha1', kind: 'Tensorboard',
    metadata: { name: 'training-logs', namespace },
    spec: { logspath: 'pvc://training-logs/runs' },
  }];
}

export function generateProfile(seed: number, index: number): DatasetProfile {
  const random = streamFor(seed, index);
  const first = random.pick(firstNames);
  const name = profileName(index, first);
  const email = owner(random, first, index);
  const profile: KubeObject = {
    apiVersion: 'kubeflow.org/v1', kind: 'Profile',
    metadata: { name, labels: { 'kubeflow-upgrader.test/dataset': 'true' } },
    spec: {
      owner: { kind: 'User', name: email },
      ...(index % 3 === 1 ? { resourceQuotaSpec: { hard: { cpu: '16', memory: '64Gi', 'requests.nvidia.com/gpu': '2', persistentvolumeclaims: '20' } } } : {}),
    },
  };
  const objects: KubeObject[] = [];
  const ns = name;
  objects.push({
    apiVersion: 'v1', kind: 'Secret', type: 'Opaque',
    metadata: { name: 's3-credentials', namespace: ns, annotations: { 'serving.kserve.io/s3-endpoint': 'minio.kubeflow:9000' } },
    data: { AWS_ACCESS_KEY_ID: Buffer.from(`key-${index}`).toString('base64'), AWS_SECRET_ACCESS_KEY: random.bytes(30).toString('base64') },
  }, {
    apiVersion: 'v1', kind: 'Secret', type: 'Opaque',
    metadata: { name: index % 4 === 0 ? 'model.weights.v1' : 'ssh-key', namespace: ns },
    data: { 'id.bin': random.bytes(64 + random.int(2048)).toString('base64') },
  }, {
    apiVersion: 'v1', kind: 'ConfigMap',
    metadata: { name: 'pipeline-config', namespace: ns, annotations: { 'kubeflow-upgrader.test/note': random.pick(unicodeNotes) } },
    data: { 'config.yaml': `experiment: ${random.pick(unicodeNotes)}\nepochs: ${1 + random.int(50)}\n` },
    ...(index % 2 === 0 ? { binaryData: { 'tokenizer.bin': random.bytes(256).toString('base64') } } : {}),
  }, {
    apiVersion: 'kubeflow.org/v1alpha1', kind: 'PodDefault',
    metadata: { name: 'add-s3-credentials', namespace: ns },
    spec: {
      desc: 'Mount the S3 credentials',
      selector: { matchLabels: { 'add-s3-credentials': 'true' } },
      envFrom: [{ secretRef: { name: 's3-credentials' } }],
    },
  });
  if (index % 5 === 2) {
    objects.push({ apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'pipeline-runner', namespace: ns, annotations: { 'kubeflow-upgrader.test/purpose': 'runs pipelines' } } });
  }
  const contributors = 1 + random.int(2);
  for (let c = 0; c < contributors; c++) {
    const role: ContributorRole = c % 2 === 0 ? 'edit' : 'view';
    objects.push(...contributor(ns, owner(random, random.pick(firstNames), index * 7 + c + 1), role));
  }
  const notebooks = index % 3 === 0 ? 1 : index % 3;
  for (let n = 0; n < notebooks; n++) objects.push(...notebook(random, ns, n === 0 ? 'workbench' : `nb-${n}.${index}`.replace('.', '-'), email));
  if (hasServing(index)) objects.push(...servingAndTraining(random, ns));
  if (hasLargeObject(index)) objects.push(largeConfigMap(random, ns, 900 - (index / 250) % 8 * 100));
  return { profile, objects };
}

export function generateDataset(options: { profiles: number; seed: number }): Dataset {
  return { seed: options.seed, profiles: Array.from({ length: options.profiles }, (_, index) => generateProfile(options.seed, index)) };
}

function isAlreadyExists(error: unknown): boolean {
  return (error as { code?: number }).code === 409;
}

async function waitForNamespace(core: k8s.CoreV1Api, name: string, owner: string, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (let delay = 5; ; delay = Math.min(100, delay * 2)) {
    try {
      const namespace = await core.readNamespace({ name });
      if (namespace.metadata?.annotations?.owner === owner && namespace.status?.phase === 'Active') return;
    } catch (error) {
      if ((error as { code?: number }).code !== 404) throw error;
    }
    if (Date.now() > deadline) throw new Error(`The profile controller did not make namespace ${name} owned by ${owner} within ${timeoutMs / 1000}s.`);
    await new Promise((resolve) => setTimeout(resolve, delay));
  }
}

/** applies the dataset as users would; safe to rerun (existing objects are counted, not changed) */
export async function applyDataset(
  kubeconfigPath: string,
  options: { profiles: number; seed: number; concurrency?: number; namespaceTimeoutMs?: number },
): Promise<DatasetSummary> {
  const started = Date.now();
  const config = new k8s.KubeConfig();
  config.loadFromFile(kubeconfigPath);
  const objects = k8s.KubernetesObjectApi.makeApiClient(config);
  const core = config.makeApiClient(k8s.CoreV1Api);
  const limit = pLimit(options.concurrency ?? 16);
  const summary: DatasetSummary = { profiles: options.profiles, created: 0, existing: 0, byKind: {}, durationMs: 0 };
  const create = async (object: KubeObject) => {
    try {
      await objects.create(object as k8s.KubernetesObject);
      summary.created++;
      summary.byKind[object.kind] = (summary.byKind[object.kind] ?? 0) + 1;
    } catch (error) {
      if (!isAlreadyExists(error)) throw new Error(`Creating ${object.kind} ${object.metadata.namespace ?? ''}/${object.metadata.name} failed: ${(error as Error).message}`);
      summary.existing++;
    }
  };
  await Promise.all(Array.from({ length: options.profiles }, (_, index) => limit(async () => {
    const { profile, objects: inside } = generateProfile(options.seed, index);
    await create(profile);
    const owner = (profile.spec as { owner: { name: string } }).owner.name;
    await waitForNamespace(core, profile.metadata.name!, owner, options.namespaceTimeoutMs ?? 30_000);
    for (const object of inside) await create(object);
  })));
  summary.durationMs = Date.now() - started;
  return summary;
}
