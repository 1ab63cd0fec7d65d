// Upstream repository: github.com/kubernetes/kubernetes (the staging paths above), at release-1.30.
// Probe tests: unknown fields and the fieldValidation parameter over TLS, with what kube-apiserver 1.30 answers
// (staging/src/k8s.io/apiserver/pkg/endpoints/handlers create.go, update.go, patch.go, rest.go fieldValidation;
// filters/warning.go and apimachinery pkg/util/net/http.go NewWarningHeader for the header; kubernetes-sigs/json
// kubernetes_patch.go for the field paths; apimachinery pkg/apis/meta/v1/validation ValidateFieldValidation). The
// expected texts are written out here from those sources.
import { expect } from 'chai';
import { request as httpsRequest } from 'node:https';
import { startCluster, type RunningCluster } from './index.ts';
import type { KubeObject } from '../../../src/kube/types.ts';

interface Answer { status: number; warnings: string[]; body: Record<string, unknown> & { message?: string } }

describe('embedded API server: unknown fields and fieldValidation', function () {
  let c: RunningCluster;

  const gadgets: KubeObject = {
    apiVersion: 'apiextensions.k8s.io/v1', kind: 'CustomResourceDefinition', metadata: { name: 'gadgets.example.org' },
    spec: {
      group: 'example.org', scope: 'Namespaced', names: { plural: 'gadgets', singular: 'gadget', kind: 'Gadget', listKind: 'GadgetList' },
      versions: [{ name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: { type: 'object', properties: { spec: { type: 'object', properties: { size: { type: 'integer' } } } } } } }],
    },
  };

  before(async () => {
    c = await startCluster({ kubeflowCrds: false, crds: [gadgets] });
    await send('POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'fv' } });
  });
  after(async () => c?.stop());

  function send(method: string, path: string, body?: unknown, contentType = 'application/json'): Promise<Answer> {
    return new Promise((resolve, reject) => {
      const req = httpsRequest(`${c.server}${path}`, { method, ca: c.caCert, headers: { Authorization: `Bearer ${c.token}`, 'Content-Type': contentType } }, (res) => {
        let text = '';
        res.on('data', (d: Buffer) => (text += d.toString()));
        res.on('end', () => {
          // node joins repeated headers with ', '; the raw list keeps each line
          const warnings: string[] = [];
          for (let i = 0; i < res.rawHeaders.length; i += 2) if (res.rawHeaders[i]!.toLowerCase() === 'warning') warnings.push(res.rawHeaders[i + 1]!);
          resolve({ status: res.statusCode ?? 0, warnings, body: text ? JSON.parse(text) : {} });
        });
      });
      req.on('error', reject);
      if (body !== undefined) req.write(JSON.stringify(body));
      req.end();
    });
  }

  const CONFIGMAPS = '/api/v1/namespaces/fv/configmaps';
  const DEPLOYMENTS = '/apis/apps/v1/namespaces/fv/deployments';
  const cm = (name: string, extra: Record<string, unknown> = {}, meta: Record<string, unknown> = {}) => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: 'fv', ...meta }, data: { a: 'b' }, ...extra });
  const deployment = (name: string, container: Record<string, unknown>) => ({
    apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name, namespace: 'fv' },
    spec: { selector: { matchLabels: { app: name } }, template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: 'c', image: 'busybox', ...container }] } } },
  });

  it('drops unknown fields of a built-in kind and of metadata, and warns of each by default (Warn)', async () => {
    const made = await send('POST', CONFIGMAPS, cm('warned', { foo: 1 }, { bar: 'x' }));
    expect(made.status).to.equal(201);
    // in the order the body lists them: metadata comes before the misplaced top-level field
    expect(made.warnings).to.deep.equal(['299 - "unknown field \\"metadata.bar\\""', '299 - "unknown field \\"foo\\""']);
    expect(made.body).to.not.have.property('foo');
    expect(made.body.metadata).to.not.have.property('bar');
    const read = await send('GET', `${CONFIGMAPS}/warned`);
    expect(read.body).to.not.have.property('foo');
    expect(read.warnings).to.deep.equal([]);
  });

  it('names a nested unknown field by its path with list indices', async () => {
    const made = await send('POST', DEPLOYMENTS, deployment('nested', { imagePullPolicyx: 'Always' }));
    expect(made.status).to.equal(201);
    expect(made.warnings).to.deep.equal(['299 - "unknown field \\"spec.template.spec.containers[0].imagePullPolicyx\\""']);
  });

  it('drops them without a word under Ignore', async () => {
    const made = await send('POST', `${CONFIGMAPS}?fieldValidation=Ignore`, cm('ignored', { foo: 1 }));
    expect(made.status).to.equal(201);
    expect(made.warnings).to.deep.equal([]);
    expect(made.body).to.not.have.property('foo');
  });

  it('refuses them under Strict: 400 from create and update, 422 from a patch', async () => {
    const created = await send('POST', `${CONFIGMAPS}?fieldValidation=Strict`, cm('strict', { foo: 1 }, { bar: 'x' }));
    expect(created.status).to.equal(400);
    expect(created.body.message).to.equal('ConfigMap in version "v1" cannot be handled as a ConfigMap: strict decoding error: unknown field "metadata.bar", unknown field "foo"');
    await send('POST', CONFIGMAPS, cm('strict'));
    const updated = await send('PUT', `${CONFIGMAPS}/strict?fieldValidation=Strict`, cm('strict', { foo: 1 }));
    expect(updated.status).to.equal(400);
    expect(updated.body.message).to.equal('ConfigMap in version "v1" cannot be handled as a ConfigMap: strict decoding error: unknown field "foo"');
    const patched = await send('PATCH', `${CONFIGMAPS}/strict?fieldValidation=Strict`, { foo: 1 }, 'application/merge-patch+json');
    expect(patched.status).to.equal(422);
    expect(patched.body.message).to.match(/^ "" is invalid: patch: Invalid value: ".*": strict decoding error: unknown field "foo"$/);
    const warned = await send('PATCH', `${CONFIGMAPS}/strict`, { foo: 1 }, 'application/merge-patch+json');
    expect(warned.status).to.equal(200);
    expect(warned.warnings).to.deep.equal(['299 - "unknown field \\"foo\\""']);
  });

  it('refuses an unknown directive with ValidateFieldValidation\'s sentence', async () => {
    const answer = await send('POST', `${CONFIGMAPS}?fieldValidation=Loose`, cm('loose'));
    expect(answer.status).to.equal(422);
    expect(answer.body.message).to.equal('CreateOptions.meta.k8s.io "" is invalid: fieldValidation: Unsupported value: "Loose": supported values: "", "Ignore", "Strict", "Warn"');
  });

  it('warns of a custom resource\'s pruned fields, and refuses them under Strict', async () => {
    const path = '/apis/example.org/v1/namespaces/fv/gadgets';
    const gadget = (name: string) => ({ apiVersion: 'example.org/v1', kind: 'Gadget', metadata: { name, namespace: 'fv', odd: 1 }, spec: { size: 1, colour: 'red' } });
    const made = await send('POST', path, gadget('g'));
    expect(made.status).to.equal(201);
    expect(made.warnings).to.deep.equal(['299 - "unknown field \\"metadata.odd\\""', '299 - "unknown field \\"spec.colour\\""']);
    expect(made.body.spec).to.deep.equal({ size: 1 });
    const strict = await send('POST', `${path}?fieldValidation=Strict`, gadget('s'));
    expect(strict.status).to.equal(400);
  });
});
