// Secrets as the API server writes them: stringData folded into data, and each built-in type's required keys
// (kubernetes/kubernetes pkg/apis/core/v1/conversion.go; pkg/apis/core/validation/validation.go, ValidateSecret and
// its cases in validation_test.go, TestValidateSecret / TestValidateDockerConfigSecret / TestValidateBasicAuthSecret ...).
import { expect } from 'chai';
import { Cluster } from './cluster.ts';
import type { KubeObject } from '../../../src/kube/types.ts';

const SECRETS = { group: '', resource: 'secrets' };

function refused(f: () => unknown): string {
  try {
    f();
  } catch (e) {
    return (e as Error).message;
  }
  throw new Error('expected the server to refuse');
}

const b64 = (s: string) => Buffer.from(s).toString('base64');

describe('embedded API server: Secrets', () => {
  let cluster: Cluster;
  const secret = (name: string, fields: Record<string, unknown>, annotations?: Record<string, string>): KubeObject =>
    ({ apiVersion: 'v1', kind: 'Secret', metadata: { name, namespace: 'a', ...(annotations ? { annotations } : {}) }, ...fields }) as KubeObject;

  beforeEach(() => {
    cluster = new Cluster();
    cluster.create({ group: '', resource: 'namespaces' }, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'a' } });
  });

  it('folds stringData into data on create, stringData winning, and never stores or returns stringData', () => {
    const made = cluster.create(SECRETS, secret('s', { data: { a: b64('old'), b: b64('kept') }, stringData: { a: 'new', c: 'plain' } }));
    expect(made.data).to.deep.equal({ a: b64('new'), b: b64('kept'), c: b64('plain') });
    expect(made).not.to.have.property('stringData');
    expect(cluster.get(SECRETS, 's', 'a')).not.to.have.property('stringData');
  });

  it('folds stringData into data on update and on a merge patch', () => {
    const made = cluster.create(SECRETS, secret('s', { data: { a: b64('1') } }));
    const updated = cluster.update(SECRETS, { ...made, stringData: { b: '2' } } as KubeObject);
    expect(updated.data).to.deep.equal({ a: b64('1'), b: b64('2') });
    expect(updated).not.to.have.property('stringData');
    const patched = cluster.mergePatch(SECRETS, 's', 'a', { stringData: { a: 'x' } });
    expect(patched.data).to.deep.equal({ a: b64('x'), b: b64('2') });
  });

  it('refuses a data key that is not a config key, whether it came through data or stringData', () => {
    expect(refused(() => cluster.create(SECRETS, secret('s', { stringData: { 'a/b': 'x' } }))))
      .to.equal(`Secret "s" is invalid: data[a/b]: Invalid value: "a/b": a valid config key must consist of alphanumeric characters, '-', '_' or '.' (e.g. 'key.name',  or 'KEY_NAME',  or 'key-name', regex used for validation is '[-._a-zA-Z0-9]+')`);
    expect(refused(() => cluster.create(SECRETS, secret('s', { data: { '..x': b64('x') } }))))
      .to.equal(`Secret "s" is invalid: data[..x]: Invalid value: "..x": must not start with '..'`);
  });

  it('refuses a service-account-token Secret without the account name annotation, and takes one with it', () => {
    expect(refused(() => cluster.create(SECRETS, secret('t', { type: 'kubernetes.io/service-account-token' }))))
      .to.equal('Secret "t" is invalid: metadata.annotations[kubernetes.io/service-account.name]: Required value');
    const made = cluster.create(SECRETS, secret('t', { type: 'kubernetes.io/service-account-token' }, { 'kubernetes.io/service-account.name': 'default' }));
    expect(made.type).to.equal('kubernetes.io/service-account-token');
  });

  it('requires .dockerconfigjson (and .dockercfg) to be there and to be a JSON object, redacting the value', () => {
    expect(refused(() => cluster.create(SECRETS, secret('d', { type: 'kubernetes.io/dockerconfigjson', data: { other: b64('{}') } }))))
      .to.equal('Secret "d" is invalid: data[.dockerconfigjson]: Required value');
    const bad = refused(() => cluster.create(SECRETS, secret('d', { type: 'kubernetes.io/dockerconfigjson', stringData: { '.dockerconfigjson': 'hunter2' } })));
    expect(bad).to.equal(`Secret "d" is invalid: data[.dockerconfigjson]: Invalid value: "<secret contents redacted>": invalid character 'h' looking for beginning of value`);
    expect(bad).not.to.contain('hunter2'.slice(1));
    expect(refused(() => cluster.create(SECRETS, secret('d', { type: 'kubernetes.io/dockercfg' }))))
      .to.equal('Secret "d" is invalid: data[.dockercfg]: Required value');
    cluster.create(SECRETS, secret('d', { type: 'kubernetes.io/dockerconfigjson', stringData: { '.dockerconfigjson': '{"auths":{}}' } }));
  });

  it('requires the keys of basic-auth, ssh-auth and tls Secrets, with upstream field paths', () => {
    expect(refused(() => cluster.create(SECRETS, secret('b', { type: 'kubernetes.io/basic-auth' }))))
      .to.equal('Secret "b" is invalid: [data[%s][username]: Required value, data[%s][password]: Required value]');
    cluster.create(SECRETS, secret('b', { type: 'kubernetes.io/basic-auth', data: { password: '' } }));
    expect(refused(() => cluster.create(SECRETS, secret('k', { type: 'kubernetes.io/ssh-auth', data: { 'ssh-privatekey': '' } }))))
      .to.equal('Secret "k" is invalid: data[%s][ssh-privatekey]: Required value');
    expect(refused(() => cluster.create(SECRETS, secret('t', { type: 'kubernetes.io/tls', data: { 'tls.crt': b64('c') } }))))
      .to.equal('Secret "t" is invalid: data[tls.key]: Required value');
  });

  it('validates the whole Secret again on update: removing a required key is refused', () => {
    const made = cluster.create(SECRETS, secret('t', { type: 'kubernetes.io/tls', data: { 'tls.crt': b64('c'), 'tls.key': b64('k') } }));
    expect(refused(() => cluster.update(SECRETS, { ...made, data: { 'tls.crt': b64('c') } } as KubeObject)))
      .to.equal('Secret "t" is invalid: data[tls.key]: Required value');
  });
});
