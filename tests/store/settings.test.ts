import { expect } from 'chai';
import { decodeValue, parseCaChain, requirerRequest, settingsFromProvider } from '../../src/store/settings.ts';

const defaults = { bucket: 'relation-3', path: 'kubeflow-upgrader' };
const PEM = '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----';
const base = { 'access-key': 'AKIA0000', 'secret-key': 'sekret-value', endpoint: 'https://minio.kubeflow.svc:9000', bucket: 'kf-backups' };

describe('store/settings: s3-integrator answers into S3Settings', () => {
  it('asks for bucket, path, lib-version and requested-secrets (both tracks)', () => {
    expect(requirerRequest('s3-credentials:3', { bucket: '', path: 'kubeflow-upgrader' })).to.deep.equal({
      bucket: 'relation-3',
      path: 'kubeflow-upgrader',
      'lib-version': '1.0',
      'requested-secrets': '["access-key","secret-key"]',
    });
  });

  it('reads track-1 plain keys, JSON-encoded or raw', () => {
    const result = settingsFromProvider({ databag: { ...base, region: '"eu-west-1"', path: '/team/kf/', 's3-uri-style': 'host', 'tls-ca-chain': JSON.stringify([PEM]) } }, defaults);
    expect(result).to.deep.equal({
      state: 'ready',
      settings: { accessKey: 'AKIA0000', secretKey: 'sekret-value', bucket: 'kf-backups', path: 'team/kf', endpoint: 'https://minio.kubeflow.svc:9000', region: 'eu-west-1', uriStyle: 'host', tlsCaChain: [PEM] },
    });
  });

  it('takes track-2 credentials from the secret-extra content, never from the databag', () => {
    const databag = { endpoint: base.endpoint, 'secret-extra': 'secret:abc', 'access-key': 'IGNORED' };
    const result = settingsFromProvider({ databag, secret: { 'access-key': 'FROMSECRET', 'secret-key': 'from-secret' } }, defaults);
    expect(result.state === 'ready' && result.settings.accessKey).to.equal('FROMSECRET');
    expect(result.state === 'ready' && result.settings.bucket).to.equal('relation-3');
    expect(result.state === 'ready' && result.settings.path).to.equal('kubeflow-upgrader');
  });

  it('waits while the provider has written nothing (or only what we ignore)', () => {
    expect(settingsFromProvider({ databag: {} }, defaults).state).to.equal('waiting');
    expect(settingsFromProvider({ databag: { data: '{}', 'lib-version': '1.0' } }, defaults).state).to.equal('waiting');
  });

  it('defaults region to us-east-1 and style to path, and accepts AWS without an endpoint', () => {
    const result = settingsFromProvider({ databag: { 'access-key': 'AKIA0000', 'secret-key': 'sekret-value', bucket: 'kf-backups' } }, defaults);
    expect(result).to.deep.include({ state: 'ready' });
    expect(result.state === 'ready' && [result.settings.region, result.settings.uriStyle, result.settings.endpoint]).to.deep.equal(['us-east-1', 'path', undefined]);
  });

  const problems: [string, Record<string, string>, RegExp][] = [
    ['missing access-key', { 'secret-key': 'x1234' , endpoint: base.endpoint }, /no access-key/],
    ['endpoint without scheme', { ...base, endpoint: 'minio:9000' }, /not an http\(s\) URL/],
    ['endpoint with credentials', { ...base, endpoint: 'https://user:pw@minio:9000' }, /carries credentials/],
    ['bucket name too short', { ...base, bucket: 'kf' }, /not a valid S3 bucket name/],
    ['uri style neither', { ...base, 's3-uri-style': 'virtual' }, /neither "path" nor "host"/],
    ['ca chain not JSON', { ...base, 'tls-ca-chain': PEM }, /not JSON/],
    ['path with a double slash', { ...base, path: 'a//b' }, /not a valid key prefix/],
  ];
  for (const [name, databag, message] of problems) {
    it(`names the problem: ${name}`, () => {
      const result = settingsFromProvider({ databag }, defaults);
      expect(result.state).to.equal('invalid');
      expect(result.state === 'invalid' && result.problem).to.match(message);
      expect(result.state === 'invalid' && result.problem).not.to.include('pw@');
    });
  }

  it('decodes values as JSON and falls back to the raw string', () => {
    expect(decodeValue('"a"')).to.equal('a');
    expect(decodeValue('not json')).to.equal('not json');
    expect(parseCaChain('[1]')).to.be.a('string');
  });
});
