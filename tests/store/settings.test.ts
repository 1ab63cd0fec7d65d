import { expect } from 'chai';
import { parseCaChain, requirerRequest, settingsFromProvider } from '../../src/store/settings.ts';

const defaults = { bucket: 'relation-3', path: 'kubeflow-upgrader' };
const PEM = '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----';
const base = { 'access-key': 'AKIA0000', 'secret-key': 'sekret-value', endpoint: 'https://minio.kubeflow.svc:9000', bucket: 'kf-backups' };

describe('store/settings: s3-integrator answers into S3Settings', () => {
  it('asks for bucket, path, lib-version and requested-secrets (both tracks), with a bucket that is not the relation id', () => {
    expect(requirerRequest({ bucket: '', path: 'kubeflow-upgrader' })).to.deep.equal({
      bucket: 'kubeflow-backups',
      path: 'kubeflow-upgrader',
      'lib-version': '1.0',
      'requested-secrets': '["access-key","secret-key"]',
    });
  });

  it('reads track-1 plain keys as they are written', () => {
    const result = settingsFromProvider({ databag: { ...base, region: 'eu-west-1', path: '/team/kf/', 's3-uri-style': 'host', 'tls-ca-chain': JSON.stringify([PEM]) } }, defaults);
    expect(result).to.deep.equal({
      state: 'ready',
      settings: { accessKey: 'AKIA0000', secretKey: 'sekret-value', bucket: 'kf-backups', path: 'team/kf', endpoint: 'https://minio.kubeflow.svc:9000', region: 'eu-west-1', uriStyle: 'host', tlsCaChain: [PEM], track: 1 },
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

  it('defaults region to us-east-1, and addresses AWS without an endpoint in host style', () => {
    const result = settingsFromProvider({ databag: { 'access-key': 'AKIA0000', 'secret-key': 'sekret-value', bucket: 'kf-backups' } }, defaults);
    expect(result).to.deep.include({ state: 'ready' });
    expect(result.state === 'ready' && [result.settings.region, result.settings.uriStyle, result.settings.endpoint]).to.deep.equal(['us-east-1', 'host', undefined]);
  });

  it("never JSON-decodes a plain value: a 20-digit key and 1e5 stay as written", () => {
    const result = settingsFromProvider({ databag: { ...base, 'access-key': '12345678901234567890', 'secret-key': '1e5', region: 'null' } }, defaults);
    expect(result.state === 'ready' && [result.settings.accessKey, result.settings.secretKey, result.settings.region]).to.deep.equal(['12345678901234567890', '1e5', 'null']);
  });

  for (const chain of ['', '""', '[]']) {
    it(`reads tls-ca-chain ${JSON.stringify(chain)} as no chain (what a reset on s3-integrator 1 leaves)`, () => {
      const result = settingsFromProvider({ databag: { ...base, 'tls-ca-chain': chain } }, defaults);
      expect(result.state).to.equal('ready');
      expect(result.state === 'ready' && result.settings.tlsCaChain).to.equal(undefined);
    });
  }

  it('accepts every s3-uri-style spelling and resolves it by the one rule', () => {
    const style = (databag: Record<string, string>) => {
      const result = settingsFromProvider({ databag: { ...base, ...databag } }, defaults);
      return result.state === 'ready' ? [result.settings.uriStyle, result.settings.endpoint] : result;
    };
    expect(style({ 's3-uri-style': 'auto' })).to.deep.equal(['path', base.endpoint]);
    expect(style({ 's3-uri-style': 'virtual' })).to.deep.equal(['host', base.endpoint]);
    expect(style({ 's3-uri-style': 'host', endpoint: 'http://10.1.2.3:9000' })).to.deep.equal(['path', 'http://10.1.2.3:9000']);
    // Canonical's AWS guide: the global endpoint and a region, no style.
    expect(style({ endpoint: 'https://s3.amazonaws.com', region: 'us-west-2' })).to.deep.equal(['host', undefined]);
    expect(style({ endpoint: 'https://s3.amazonaws.com', 's3-uri-style': 'path' })).to.deep.equal(['path', undefined]);
  });

  it('names the fix of the track in use when a key is missing', () => {
    const one = settingsFromProvider({ databag: { 'secret-key': 'x1234', endpoint: base.endpoint } }, defaults);
    expect(one.state === 'invalid' && one.problem).to.match(/sync-s3-credentials action of s3-integrator$/);
    const two = settingsFromProvider({ databag: { endpoint: base.endpoint, 'lib-version': '1.0', 'secret-extra': 'secret:abc' }, secret: { 'secret-key': 'x' } }, defaults);
    expect(two.state === 'invalid' && two.problem).to.match(/juju config s3-integrator credentials=<secret-uri>$/);
    expect(two.state === 'invalid' && two.problem).not.to.include('sync-s3-credentials');
  });

  it('says what s3-integrator needs while it has not answered', () => {
    const waiting = settingsFromProvider({ databag: {} }, { bucket: 'kubeflow-backups', path: '' });
    expect(waiting).to.deep.equal({ state: 'waiting', message: 'waiting for s3-integrator: it needs credentials and a bucket it can find or create ("kubeflow-backups" asked); set s3-bucket here or bucket on s3-integrator' });
    const dotted = settingsFromProvider({ databag: {} }, { bucket: 'team.backups', path: '' });
    expect(dotted.state === 'waiting' && dotted.message).to.match(/^waiting for s3-integrator: its track 2 cannot create "team\.backups"/);
  });

  const problems: [string, Record<string, string>, RegExp][] = [
    ['missing access-key', { 'secret-key': 'x1234' , endpoint: base.endpoint }, /no access-key/],
    ['endpoint without scheme', { ...base, endpoint: 'minio:9000' }, /not an http\(s\) URL/],
    ['endpoint with credentials', { ...base, endpoint: 'https://user:pw@minio:9000' }, /carries credentials/],
    ['bucket name too short', { ...base, bucket: 'kf' }, /not a valid S3 bucket name/],
    ['uri style unknown', { ...base, 's3-uri-style': 'sideways' }, /is not one of "path", "host", "virtual" or "auto"/],
    ['storage class with a space', { ...base, 'storage-class': 'COLD STORAGE' }, /is not a storage class name/],
    // GetObject answers InvalidObjectState on these until each object is thawed (AWS S3 API reference, GetObject).
    ['storage class GLACIER', { ...base, 'storage-class': 'GLACIER' }, /^the storage class "GLACIER" of s3-integrator keeps every object unreadable until it is thawed/],
    ['storage class deep_archive', { ...base, 'storage-class': 'deep_archive' }, /^the storage class "deep_archive" of s3-integrator keeps every object unreadable/],
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

  it('refuses a CA chain that is not a list of PEM strings', () => {
    expect(parseCaChain('[1]')).to.be.a('string');
    expect(parseCaChain('"x"')).to.be.a('string');
  });
});
