// Types and required fields of built-in kinds on the embedded API server, from the real OpenAPI schemas (schemas.ts; upstream: kubernetes/kubernetes api/openapi-spec).
import { expect } from 'chai';
import type { KubeObject } from '../../../src/kube/types.ts';
import { Cluster } from './cluster.ts';
import { ApiError } from './errors.ts';

function refusal(f: () => unknown): ApiError {
  try {
    f();
  } catch (e) {
    if (e instanceof ApiError) return e;
    throw e;
  }
  throw new Error('expected the API server to refuse the request');
}

describe('embedded API server: built-in kinds checked against their OpenAPI schemas', () => {
  let cluster: Cluster;
  beforeEach(() => {
    cluster = new Cluster();
    cluster.create({ group: '', resource: 'namespaces' }, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'a' } });
  });

  it('refuses a missing required field with 422 naming it', () => {
    const e = refusal(() => cluster.create({ group: '', resource: 'pods' }, { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p', namespace: 'a' }, spec: { containers: [{ image: 'busybox' }] } } as KubeObject));
    expect(e.status).to.equal(422);
    expect(e.message).to.equal('Pod "p" is invalid: spec.containers[0].name: Required value');
    const binding = refusal(() => cluster.create({ group: 'rbac.authorization.k8s.io', resource: 'rolebindings' }, { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'RoleBinding', metadata: { name: 'b', namespace: 'a' }, subjects: [{ kind: 'User', name: 'x' }] } as KubeObject));
    expect(binding.message).to.equal('RoleBinding.rbac.authorization.k8s.io "b" is invalid: roleRef: Required value');
  });

  it('refuses a value of the wrong type with 400, as the decoder does', () => {
    const e = refusal(() => cluster.create({ group: '', resource: 'services' }, { apiVersion: 'v1', kind: 'Service', metadata: { name: 's', namespace: 'a' }, spec: { ports: [{ port: '80' }] } } as KubeObject));
    expect(e.status).to.equal(400);
    expect(e.reason).to.equal('BadRequest');
    expect(e.message).to.equal('Service in version "v1" cannot be handled as a Service: json: cannot unmarshal string into Go struct field spec.ports[0].port of type int32');
  });

  it('takes an int-or-string either way, and a valid object of every checked kind as it is', () => {
    for (const targetPort of [8080, 'http']) {
      const made = cluster.create({ group: '', resource: 'services' }, { apiVersion: 'v1', kind: 'Service', metadata: { name: `s-${targetPort}`, namespace: 'a' }, spec: { ports: [{ port: 80, targetPort }] } } as KubeObject);
      expect((made.spec as { ports: Array<{ targetPort: unknown }> }).ports[0]!.targetPort).to.equal(targetPort);
    }
    const role = cluster.create({ group: 'rbac.authorization.k8s.io', resource: 'roles' }, { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'Role', metadata: { name: 'r', namespace: 'a' }, rules: [{ apiGroups: [''], resources: ['pods'], verbs: ['get'] }] } as KubeObject);
    expect(role.metadata.uid).to.be.a('string');
  });

  it('checks an update too', () => {
    const map = cluster.create({ group: '', resource: 'configmaps' }, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'm', namespace: 'a' }, data: { k: 'v' } } as KubeObject);
    const e = refusal(() => cluster.update({ group: '', resource: 'configmaps' }, { ...map, data: { k: 1 } } as KubeObject));
    expect(e.status).to.equal(400);
    expect(e.message).to.equal('ConfigMap in version "v1" cannot be handled as a ConfigMap: json: cannot unmarshal number into Go struct field data.k of type string');
  });
});
