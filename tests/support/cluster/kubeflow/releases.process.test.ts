// Upstream: the CRDs of CKF 1.8-1.11 as the charms ship them (kubeflow/training-operator, kserve/kserve, canonical/*).
// The release profiles: each CKF release's cluster serves its kinds and versions and applies the schema parts that
// change between releases, as the real CRDs of that release do (the CI release suite runs the same scenarios on the
// real files).
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { expect } from 'chai';
import type { KubeObject } from '../../../../src/kube/types.ts';
import { KubeClient } from '../../../../src/kube/client.ts';
import { Cluster, CRD_REF, NS_REF } from '../cluster.ts';
import { releaseCrds, RELEASES, type Release } from './releases.ts';

function clusterOf(release: Release): Cluster {
  const cluster = new Cluster();
  cluster.create(NS_REF, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'alice' } });
  for (const crd of releaseCrds(release)) cluster.create(CRD_REF, crd);
  return cluster;
}

const served = (release: Release) => new Map(releaseCrds(release).map((c) => {
  const spec = c.spec as { names: { kind: string }; versions: { name: string; storage: boolean }[] };
  return [spec.names.kind, spec.versions.map((v) => `${v.name}${v.storage ? '*' : ''}`).join(',')];
}));

const isvc = (explainer: Record<string, unknown>): KubeObject => ({
  apiVersion: 'serving.kserve.io/v1beta1', kind: 'InferenceService', metadata: { name: 'sk', namespace: 'alice' },
  spec: { predictor: { model: { modelFormat: { name: 'sklearn' } } }, explainer },
});
const ISVC = { group: 'serving.kserve.io', resource: 'inferenceservices' };
const NOTEBOOKS = { group: 'kubeflow.org', resource: 'notebooks' };

describe('release profiles: kinds and versions', () => {
  const rows: Array<[kind: string, ...perRelease: Array<string | undefined>]> = [
    // kind, then its versions in 1.8, 1.9, 1.10, 1.11 (* = storage; undefined = not served)
    ['SeldonDeployment', 'v1*,v1alpha2,v1alpha3', undefined, undefined, undefined],
    ['MXJob', 'v1*', 'v1*', undefined, undefined],
    ['JAXJob', undefined, undefined, 'v1*', 'v1*'],
    ['VirtualService', 'v1alpha3*,v1beta1', 'v1beta1*,v1alpha3,v1', 'v1beta1*,v1alpha3,v1', 'v1*,v1alpha3,v1beta1'],
    ['AuthorizationPolicy', 'v1beta1*,v1', 'v1beta1*,v1', 'v1beta1*,v1', 'v1*,v1beta1'],
    ['Notebook', 'v1*,v1beta1,v1alpha1', 'v1*,v1beta1,v1alpha1', 'v1*,v1beta1,v1alpha1', 'v1*,v1beta1,v1alpha1'],
  ];
  for (const [kind, ...versions] of rows) {
    it(kind, () => {
      expect(RELEASES.map((r) => served(r).get(kind))).to.deep.equal(versions);
    });
  }
});

describe('release profiles: schemas', () => {
  it('keeps the Alibi explainer on 1.8 and prunes it from 1.9 on', () => {
    const explainer = { alibi: { type: 'AnchorTabular', storageUri: 'gs://x' }, minReplicas: 1 };
    expect(clusterOf('1.8').create(ISVC, isvc(explainer)).spec).to.have.nested.property('explainer.alibi.type', 'AnchorTabular');
    for (const release of ['1.9', '1.10', '1.11'] as const) expect(clusterOf(release).create(ISVC, isvc(explainer)).spec, release).to.deep.include({ explainer: { minReplicas: 1 } });
  });

  it('prunes predictor.workerSpec.size from 1.11 on', () => {
    const withSize = (release: Release) => clusterOf(release).create(ISVC, {
      ...isvc({}), spec: { predictor: { model: { modelFormat: { name: 'vllm' } }, workerSpec: { size: 2, containers: [] } } },
    }).spec as { predictor: { workerSpec: Record<string, unknown> } };
    expect(withSize('1.10').predictor.workerSpec).to.deep.equal({ size: 2, containers: [] });
    expect(withSize('1.11').predictor.workerSpec).to.deep.equal({ containers: [] });
  });

  it('refuses a Notebook container without an image from 1.9 on, with the 422 sentence', () => {
    const nb: KubeObject = { apiVersion: 'kubeflow.org/v1', kind: 'Notebook', metadata: { name: 'nb', namespace: 'alice' }, spec: { template: { spec: { containers: [{ name: 'nb' }] } } } };
    expect(clusterOf('1.8').create(NOTEBOOKS, nb).metadata.name).to.equal('nb');
    expect(() => clusterOf('1.9').create(NOTEBOOKS, nb)).to.throw('Notebook.kubeflow.org "nb" is invalid: spec.template.spec.containers[0].image: Required value');
  });

  it('makes the training queue immutable from 1.9 on (a transition rule: create passes, a change is refused)', () => {
    const ref = { group: 'kubeflow.org', resource: 'pytorchjobs' };
    const job: KubeObject = { apiVersion: 'kubeflow.org/v1', kind: 'PyTorchJob', metadata: { name: 'j', namespace: 'alice' }, spec: { runPolicy: { schedulingPolicy: { queue: 'a' } }, pytorchReplicaSpecs: {} } };
    for (const release of ['1.8', '1.9'] as const) {
      const cluster = clusterOf(release);
      const made = cluster.create(ref, job);
      const change = () => cluster.update(ref, { ...made, spec: { ...(made.spec as object), runPolicy: { schedulingPolicy: { queue: 'b' } } } });
      if (release === '1.8') expect(change).not.to.throw();
      else expect(change).to.throw('spec.runPolicy.schedulingPolicy.queue: Invalid value: "b": spec.runPolicy.schedulingPolicy.queue is immutable');
    }
  });

  it('refuses an AuthorizationPolicy with both a selector and a targetRef from 1.10 on', () => {
    const ref = { group: 'security.istio.io', resource: 'authorizationpolicies' };
    const ap: KubeObject = { apiVersion: 'security.istio.io/v1beta1', kind: 'AuthorizationPolicy', metadata: { name: 'ap', namespace: 'alice' }, spec: { selector: { matchLabels: { app: 'x' } }, targetRef: { kind: 'Service', group: '', name: 'x' } } };
    expect(() => clusterOf('1.9').create(ref, ap)).not.to.throw();
    expect(() => clusterOf('1.10').create(ref, ap)).to.throw('only one of targetRefs or selector can be set');
  });
});

describe('npm run cluster -- --kubeflow RELEASE', function () {
  this.timeout(60_000);
  it('serves the kinds of the release chosen, and refuses an unknown release in one sentence', async () => {
    const work = mkdtempSync(join(tmpdir(), 'cluster-release-'));
    const main = join(import.meta.dirname, '..', 'main.ts');
    const child = spawn(process.execPath, ['--import', 'tsx', main, '--kubeconfig', join(work, 'kubeconfig'), '--kubeflow', '1.8'], { stdio: ['ignore', 'pipe', 'inherit'] });
    let kube: KubeClient | undefined;
    try {
      await new Promise<void>((resolve, reject) => {
        child.once('exit', (code) => reject(new Error(`the cluster exited with ${code}`)));
        createInterface({ input: child.stdout! }).on('line', (line) => { if (line.startsWith('cluster ready')) resolve(); });
      });
      kube = await KubeClient.load({ kubeconfig: join(work, 'kubeconfig') });
      expect((await kube.findByResource('machinelearning.seldon.io', 'seldondeployments'))?.versions).to.include('v1');
      expect(await kube.findByResource('kubeflow.org', 'jaxjobs')).to.equal(undefined);
    } finally {
      kube?.close();
      child.kill('SIGTERM');
      rmSync(work, { recursive: true, force: true });
    }
    const bad = spawn(process.execPath, ['--import', 'tsx', main, '--kubeconfig', join(work, 'k'), '--kubeflow', '2.0'], { stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    bad.stderr!.on('data', (d: Buffer) => { stderr += d.toString(); });
    const code = await new Promise<number | null>((resolve) => bad.once('exit', resolve));
    expect(code).to.equal(2);
    expect(stderr.trim()).to.equal('--kubeflow must be one of 1.8, 1.9, 1.10, 1.11, got "2.0".');
  });
});
