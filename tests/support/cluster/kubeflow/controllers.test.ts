import { expect } from 'chai';
import type { KubeObject } from '../../../../src/kube/types.ts';
import { kubeflowControllers } from './controllers.ts';
import { kubeflowCrds } from './crds.ts';
import { notOwnedMessage, profileFinalizer, profileNamespaceLabels } from './profile-controller.ts';
import { refs } from './refs.ts';
import { createMemoryApi, type MemoryApi } from './testing-api.ts';

async function eventually<T>(probe: () => T | undefined | false, what: string, timeoutMs = 5000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = probe();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

function profile(name: string, owner: string, hard?: Record<string, string>): KubeObject {
  return {
    apiVersion: 'kubeflow.org/v1', kind: 'Profile', metadata: { name },
    spec: { owner: { kind: 'User', name: owner }, ...(hard ? { resourceQuotaSpec: { hard } } : {}) },
  };
}

const names = (objects: KubeObject[]) => objects.map((o) => o.metadata.name).sort();

describe('simulated Kubeflow controllers', () => {
  let api: MemoryApi;
  let stops: Array<() => void>;

  beforeEach(() => {
    api = createMemoryApi();
    stops = kubeflowControllers().map((controller) => controller.start(api));
  });
  afterEach(() => stops.forEach((stop) => stop()));

  it('writes CRDs with names, scope, one storage version and permissive schemas', () => {
    const crds = kubeflowCrds();
    const byName = new Map(crds.map((crd) => [crd.metadata.name, crd.spec as Record<string, any>]));
    expect(byName.get('profiles.kubeflow.org')?.scope).to.equal('Cluster');
    expect(byName.get('notebooks.kubeflow.org')?.versions.map((v: any) => v.name)).to.deep.equal(['v1', 'v1beta1', 'v1alpha1']);
    expect(byName.get('inferenceservices.serving.kserve.io')?.names.shortNames).to.deep.equal(['isvc']);
    for (const crd of crds) {
      const spec = crd.spec as Record<string, any>;
      expect(spec.versions.filter((v: any) => v.storage), crd.metadata.name).to.have.length(1);
      expect(spec.versions[0].schema.openAPIV3Schema['x-kubernetes-preserve-unknown-fields']).to.equal(true);
      expect(crd.metadata.name).to.equal(`${spec.names.plural}.${spec.group}`);
    }
    expect(byName.has('authorizationpolicies.security.istio.io')).to.equal(true);
    expect(byName.has('workflows.argoproj.io')).to.equal(true);
  });

  it('gives a Profile its namespace, service accounts, bindings, policy, quota and finalizer, all owned by it', async () => {
    const created = api.create(refs.profiles, profile('alice', 'alice@example.com', { cpu: '8' }));
    const namespace = await eventually(() => api.get(refs.namespaces, 'alice'), 'namespace alice');
    expect(namespace.metadata.annotations?.owner).to.equal('alice@example.com');
    expect(namespace.metadata.labels).to.include(profileNamespaceLabels);
    await eventually(() => api.get(refs.resourceQuotas, 'kf-resource-quota', 'alice'), 'quota');
    const owned = [
      namespace,
      ...api.list(refs.serviceAccounts, { namespace: 'alice' }).filter((o) => o.metadata.name !== 'default'),
      ...api.list(refs.roleBindings, { namespace: 'alice' }),
      api.get(refs.authorizationPolicies, 'ns-owner-access-istio', 'alice')!,
      api.get(refs.resourceQuotas, 'kf-resource-quota', 'alice')!,
    ];
    expect(names(api.list(refs.roleBindings, { namespace: 'alice' }))).to.deep.equal(['default-editor', 'default-viewer', 'namespaceAdmin']);
    for (const object of owned) {
      expect(object.metadata.ownerReferences, `${object.kind}/${object.metadata.name}`).to.deep.include({
        apiVersion: 'kubeflow.org/v1', kind: 'Profile', name: 'alice', uid: created.metadata.uid, controller: true, blockOwnerDeletion: true,
      });
    }
    const admin = api.get(refs.roleBindings, 'namespaceAdmin', 'alice')!;
    expect(admin.metadata.annotations).to.deep.equal({ user: 'alice@example.com', role: 'admin' });
    expect((admin.roleRef as { name: string }).name).to.equal('kubeflow-admin');
    expect(api.get(refs.profiles, 'alice')!.metadata.finalizers).to.deep.equal([profileFinalizer]);
  });

  it('refuses a namespace that exists with another owner and says so in the Profile status', async () => {
    api.create(refs.namespaces, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'bob', annotations: { owner: 'mallory@example.com' } } });
    api.create(refs.profiles, profile('bob', 'bob@example.com'));
    const conditions = await eventually(() => (api.get(refs.profiles, 'bob')!.status as any)?.conditions, 'a Failed condition');
    expect(conditions).to.deep.equal([{ type: 'Failed', status: 'True', message: notOwnedMessage('bob@example.com') }]);
    expect(api.get(refs.roleBindings, 'namespaceAdmin', 'bob')).to.equal(undefined);
    expect(api.get(refs.namespaces, 'bob')!.metadata.annotations?.owner).to.equal('mallory@example.com');
  });

  it('adds the KFP objects, default service account and root CA config maps to a profile namespace', async () => {
    api.create(refs.profiles, profile('carol', 'carol@example.com'));
    await eventually(() => api.get(refs.secrets, 'mlpipeline-minio-artifact', 'carol'), 'kfp secret');
    await eventually(() => api.get(refs.configMaps, 'istio-ca-root-cert', 'carol'), 'istio CA');
    const namespace = api.get(refs.namespaces, 'carol')!;
    for (const [ref, name] of [[refs.configMaps, 'kfp-launcher'], [refs.deployments, 'ml-pipeline-ui-artifact'], [refs.podDefaults, 'access-ml-pipeline'], [refs.authorizationPolicies, 'ns-owner-access-istio-charmed']] as const) {
      const object = await eventually(() => api.get(ref, name, 'carol'), name);
      expect(object.metadata.ownerReferences?.[0]).to.include({ kind: 'Namespace', uid: namespace.metadata.uid, controller: true });
    }
    expect(api.get(refs.serviceAccounts, 'default', 'carol')!.metadata.ownerReferences).to.equal(undefined);
    expect(api.get(refs.configMaps, 'kube-root-ca.crt', 'carol')).to.not.equal(undefined);
  });

  it('turns a Notebook into a StatefulSet, Service, VirtualService and pod, and reports it ready', async () => {
    api.create(refs.namespaces, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'dave' } });
    const notebook = api.create(refs.notebooks, {
      apiVersion: 'kubeflow.org/v1', kind: 'Notebook', metadata: { name: 'nb', namespace: 'dave' },
      spec: { template: { spec: { containers: [{ name: 'nb', image: 'kubeflownotebookswg/jupyter-scipy:v1.10.0' }] } } },
    });
    const pod = await eventually(() => api.get(refs.pods, 'nb-0', 'dave'), 'notebook pod');
    const statefulSet = api.get(refs.statefulSets, 'nb', 'dave')!;
    expect(statefulSet.metadata.ownerReferences?.[0]).to.include({ kind: 'Notebook', uid: notebook.metadata.uid, controller: true });
    expect(pod.metadata.ownerReferences?.[0]).to.include({ kind: 'StatefulSet', uid: statefulSet.metadata.uid, controller: true });
    expect(api.get(refs.services, 'nb', 'dave')).to.not.equal(undefined);
    expect(api.get(refs.virtualServices, 'notebook-dave-nb', 'dave')).to.not.equal(undefined);
    await eventually(() => (api.get(refs.notebooks, 'nb', 'dave')!.status as any)?.readyReplicas === 1, 'notebook status');
  });

  it('serves an InferenceService and runs a Katib Experiment through owned children', async () => {
    api.create(refs.namespaces, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'erin' } });
    api.create(refs.inferenceServices, {
      apiVersion: 'serving.kserve.io/v1beta1', kind: 'InferenceService', metadata: { name: 'sklearn-iris', namespace: 'erin' },
      spec: { predictor: { model: { modelFormat: { name: 'sklearn' }, storageUri: 'gs://kfserving-examples/models/sklearn/1.0/model' } } },
    });
    api.create(refs.experiments, {
      apiVersion: 'kubeflow.org/v1beta1', kind: 'Experiment', metadata: { name: 'random', namespace: 'erin' },
      spec: { parallelTrialCount: 2, maxTrialCount: 6, algorithm: { algorithmName: 'random' }, parameters: [{ name: 'lr', feasibleSpace: { min: '0.01', max: '0.1' } }] },
    });
    await eventually(() => api.get(refs.virtualServices, 'sklearn-iris', 'erin'), 'isvc virtual service');
    expect(api.get(refs.deployments, 'sklearn-iris-predictor', 'erin')!.metadata.ownerReferences?.[0]?.kind).to.equal('InferenceService');
    const trials = await eventually(() => { const t = api.list(refs.trials, { namespace: 'erin' }); return t.length === 2 && t; }, 'two trials');
    for (const trial of trials) expect(trial.metadata.name).to.match(/^random-[a-z0-9]{8}$/);
    expect(api.get(refs.suggestions, 'random', 'erin')!.metadata.ownerReferences?.[0]?.kind).to.equal('Experiment');
  });

  it('lays out the Juju model workloads with images in the kubeflow namespace', async () => {
    const set = await eventually(() => api.get(refs.statefulSets, 'kfp-api', 'kubeflow'), 'kfp-api statefulset');
    expect(set.metadata.labels?.['app.kubernetes.io/name']).to.equal('kfp-api');
    const images = (set.spec as any).template.spec.containers.map((c: any) => c.image);
    expect(images).to.include('charmedkubeflow/api-server:2.5.0');
    await eventually(() => api.get(refs.serviceAccounts, 'default', 'kubeflow'), 'default SA in kubeflow');
  });

  it('releases the finalizer of a deleted Profile', async () => {
    api.create(refs.profiles, profile('frank', 'frank@example.com'));
    await eventually(() => api.get(refs.profiles, 'frank')?.metadata.finalizers?.length, 'finalizer');
    api.delete(refs.profiles, 'frank');
    await eventually(() => !api.get(refs.profiles, 'frank'), 'profile gone');
  });
});
