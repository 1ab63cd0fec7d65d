// Custom resources after their CRD's schema changes, over TLS: a read decodes the stored object with the CRD's current
// schema, pruning what it no longer declares and filling its new defaults, while etcd keeps the old bytes until the next
// write (kubernetes/apiextensions-apiserver pkg/apiserver/customresource_handler.go, crdConversionRESTOptionsGetter:
// schemaCoercingDecoder and unstructuredDefaulter on the storage codec). Validation ratcheting only where the server's
// version turns CRDValidationRatcheting on (pkg/features/kube_features.go: off in 1.29, beta and on in 1.30), so an
// update that keeps a value the new schema refuses is refused on 1.29 and taken on 1.30. A watch's events are decoded
// too (after a CRD change the real server rebuilds the resource's storage and its watch cache with the new decoder).
import { expect } from 'chai';
import { request as httpsRequest } from 'node:https';
import { startCluster, type RunningCluster } from './index.ts';
import { objectKey } from './store.ts';
import type { KubeObject } from '../../../src/kube/types.ts';

interface Answer { status: number; body: Record<string, unknown> & { message?: string } }

function send(c: RunningCluster, method: string, path: string, body?: unknown): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = httpsRequest(`${c.server}${path}`, {
      method, ca: c.caCert,
      headers: { Authorization: `Bearer ${c.token}`, 'Content-Type': method === 'PATCH' ? 'application/merge-patch+json' : 'application/json' },
    }, (res) => {
      let text = '';
      res.on('data', (d: Buffer) => (text += d.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text ? JSON.parse(text) : {} }));
    });
    req.on('error', reject);
    if (body !== undefined) req.write(JSON.stringify(body));
    req.end();
  });
}

function watchLines(c: RunningCluster, path: string): Promise<Array<{ type: string; object: unknown }>> {
  return new Promise((resolve, reject) => {
    const req = httpsRequest(`${c.server}${path}`, { ca: c.caCert, headers: { Authorization: `Bearer ${c.token}` } }, (res) => {
      let text = '';
      res.on('data', (d: Buffer) => (text += d.toString()));
      res.on('end', () => resolve(text.split('\n').filter((l) => l.trim()).map((l) => JSON.parse(l) as { type: string; object: unknown })));
    });
    req.on('error', reject);
    req.end();
  });
}

const CRDS = '/apis/apiextensions.k8s.io/v1/customresourcedefinitions';
const GADGETS = '/apis/example.org/v1/namespaces/default/gadgets';

function crd(spec: Record<string, unknown>): KubeObject {
  return {
    apiVersion: 'apiextensions.k8s.io/v1', kind: 'CustomResourceDefinition', metadata: { name: 'gadgets.example.org' },
    spec: {
      group: 'example.org', scope: 'Namespaced', names: { plural: 'gadgets', singular: 'gadget', kind: 'Gadget', listKind: 'GadgetList' },
      versions: [{ name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: { type: 'object', properties: { spec } } } }],
    },
  };
}

const gadget = (name: string, spec: Record<string, unknown>) => ({ apiVersion: 'example.org/v1', kind: 'Gadget', metadata: { name, namespace: 'default' }, spec });

async function replaceSchema(c: RunningCluster, spec: Record<string, unknown>): Promise<void> {
  const current = await send(c, 'GET', `${CRDS}/gadgets.example.org`);
  const next = crd(spec);
  (next.metadata as Record<string, unknown>).resourceVersion = (current.body.metadata as { resourceVersion: string }).resourceVersion;
  const answer = await send(c, 'PUT', `${CRDS}/gadgets.example.org`, next);
  expect(answer.status, JSON.stringify(answer.body)).to.equal(200);
}

describe('embedded API server: custom resources read after their CRD changed', function () {
  let c: RunningCluster;
  before(async () => {
    c = await startCluster({ kubeflowCrds: false, crds: [crd({ type: 'object', 'x-kubernetes-preserve-unknown-fields': true })] });
  });
  after(async () => c?.stop());

  it('prunes on GET and LIST what the new schema no longer declares, and fills its new defaults; etcd keeps the old object until the next write', async () => {
    expect((await send(c, 'POST', GADGETS, gadget('old', { size: 2, legacy: 'x' }))).status).to.equal(201);
    await replaceSchema(c, { type: 'object', properties: { size: { type: 'integer' }, color: { type: 'string', default: 'blue' } } });

    const got = await send(c, 'GET', `${GADGETS}/old`);
    expect(got.body.spec).to.deep.equal({ size: 2, color: 'blue' });
    const listed = await send(c, 'GET', GADGETS);
    expect((listed.body.items as { spec: unknown }[]).map((i) => i.spec)).to.deep.equal([{ size: 2, color: 'blue' }]);
    // a watch's synthetic ADDED events are decoded the same way (the stream ends after timeoutSeconds)
    const events = await watchLines(c, `${GADGETS}?watch=1&timeoutSeconds=1`);
    expect(events.map((e) => (e.object as { spec: unknown }).spec)).to.deep.equal([{ size: 2, color: 'blue' }]);
    const held = c.cluster.store.get({ group: 'example.org', resource: 'gadgets' }, objectKey('default', 'old'));
    expect(held?.obj.spec, 'what etcd holds').to.deep.equal({ size: 2, legacy: 'x' });

    // a merge patch applies to the decoded object, and the write stores it
    const patched = await send(c, 'PATCH', `${GADGETS}/old`, { spec: { size: 3 } });
    expect(patched.body.spec).to.deep.equal({ size: 3, color: 'blue' });
    expect(c.cluster.store.get({ group: 'example.org', resource: 'gadgets' }, objectKey('default', 'old'))?.obj.spec).to.deep.equal({ size: 3, color: 'blue' });
  });
});

describe('embedded API server: CRD validation ratcheting by Kubernetes version', function () {
  for (const [version, ratchets] of [['1.29', false], ['1.30', true]] as const) {
    it(`${version}: an update keeping a value the tightened schema refuses is ${ratchets ? 'taken' : 'refused'}`, async () => {
      const c = await startCluster({ kubeflowCrds: false, kubernetesVersion: version, crds: [crd({ type: 'object', properties: { size: { type: 'integer' }, note: { type: 'string' } } })] });
      try {
        expect(((await send(c, 'GET', '/version')).body as { gitVersion: string }).gitVersion).to.equal(`v${version}.0`);
        expect((await send(c, 'POST', GADGETS, gadget('g', { size: 20 }))).status).to.equal(201);
        await replaceSchema(c, { type: 'object', properties: { size: { type: 'integer', maximum: 10 }, note: { type: 'string' } } });
        const answer = await send(c, 'PATCH', `${GADGETS}/g`, { spec: { note: 'unrelated change' } });
        if (ratchets) expect(answer.status, JSON.stringify(answer.body)).to.equal(200);
        else {
          expect(answer.status).to.equal(422);
          expect(answer.body.message).to.equal('Gadget.example.org "g" is invalid: spec.size: Invalid value: 20: spec.size in body should be less than or equal to 10');
        }
      } finally {
        await c.stop();
      }
    });
  }
});
