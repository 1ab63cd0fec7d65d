// Relation data parsers and request builders of the control-plane endpoints.
import { expect } from 'chai';
import {
  mysqlClientRequest, mysqlCredentialsSecretUri, notCoveredSentences, objectStorageRequest, parseMysqlClient, parseObjectStorage,
} from '../../src/controlplane/relations.ts';

describe('control-plane relations', function () {
  it('asks MinIO for serialized-data-interface v1 and reads its YAML answer', function () {
    expect(objectStorageRequest()).to.deep.equal({ _supported_versions: '- v1\n' });
    const databag = { _supported_versions: '- v1\n', data: 'access-key: minio\nnamespace: kubeflow\nport: 9000\nsecret-key: s3cr3t-value\nsecure: false\nservice: minio\n' };
    expect(parseObjectStorage(databag, 'other')).to.deep.equal({
      ready: true,
      value: { endpoint: 'http://minio.kubeflow.svc.cluster.local:9000', accessKey: 'minio', secretKey: 's3cr3t-value', service: 'minio', namespace: 'kubeflow' },
    });
    const nullNamespace = parseObjectStorage({ data: 'access-key: a\nsecret-key: b\nport: 9000\nsecure: true\nservice: minio\nnamespace: null\n' }, 'kubeflow');
    expect(nullNamespace.ready && nullNamespace.value.endpoint).to.equal('https://minio.kubeflow.svc.cluster.local:9000');
    expect(parseObjectStorage({}, 'kubeflow')).to.deep.equal({ ready: false, reason: 'MinIO has not published its connection data yet' });
    const bad = parseObjectStorage({ data: 'access-key: a\nsecret-key: s3cr3t-value\nport: 99999\nservice: minio\n' }, 'kubeflow');
    expect(bad).to.deep.equal({ ready: false, reason: "MinIO's connection data is missing or has invalid port" });
  });

  it('requests a database by name and reads plain or secret-held credentials', function () {
    expect(mysqlClientRequest('mlpipeline')).to.deep.equal({
      database: 'mlpipeline', 'requested-secrets': '["username","password","tls","tls-ca","uris"]',
    });
    expect(() => mysqlClientRequest('ml;drop')).to.throw('"ml;drop" is not a usable database name; use letters, digits and underscores (at most 64).');
    const plain = { database: 'mlpipeline', endpoints: 'mysql-0.mysql-endpoints:3306,mysql-1.mysql-endpoints:3306', 'read-only-endpoints': 'mysql-1:3306', username: 'relation-7', password: 'pw', version: '8.0.36' };
    expect(parseMysqlClient(plain, 'mlpipeline')).to.deep.equal({
      ready: true, value: { host: 'mysql-0.mysql-endpoints', port: 3306, database: 'mlpipeline', username: 'relation-7', password: 'pw', version: '8.0.36' },
    });
    const withSecret = { database: 'katib', endpoints: 'katib-db-primary:3306', 'secret-user': 'secret:cq1fa2f7lk5s7b0bha80' };
    expect(mysqlCredentialsSecretUri(withSecret)).to.equal('secret:cq1fa2f7lk5s7b0bha80');
    expect(parseMysqlClient(withSecret, 'katib')).to.deep.include({ ready: false });
    const read = parseMysqlClient(withSecret, 'katib', { username: 'relation-9', password: 'pw2' });
    expect(read.ready && read.value).to.include({ host: 'katib-db-primary', username: 'relation-9', password: 'pw2' });
    expect(parseMysqlClient({ database: 'katib' }, 'katib')).to.deep.equal({ ready: false, reason: 'the database has not published its endpoints yet' });
  });

  it('says in one sentence per missing relation what is not covered', function () {
    expect(notCoveredSentences({ 'kfp-db': true, 'katib-db': true, 'object-storage': true })).to.deep.equal([]);
    const missing = notCoveredSentences({ 'kfp-db': false, 'katib-db': true, 'object-storage': false });
    expect(missing).to.have.length(2);
    expect(missing[0]).to.match(/^control plane not covered: relate kfp-db .*\.$/);
    expect(missing[1]).to.match(/^control plane not covered: relate object-storage .*\.$/);
  });
});
