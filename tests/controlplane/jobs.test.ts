// The control-plane copy Job and its Secret as data: where the store's CA chain, endpoint, addressing and storage
// class go (the round trip in tests/charm/control-plane-roundtrip.process.test.ts runs them against a TLS store).
import { expect } from 'chai';
import { buildCopyJob, copyEnvironment, STORE_CA_KEY, type CopySpec } from '../../src/controlplane/jobs.ts';
import type { S3Settings } from '../../src/store/settings.ts';

const PEM = '-----BEGIN CERTIFICATE-----\nMIIBprivateca\n-----END CERTIFICATE-----';
const store: S3Settings = {
  accessKey: 'AKIA0000', secretKey: 'sekret-value', bucket: 'kf-backups', path: 'kf', region: 'us-west-2', uriStyle: 'host', tlsCaChain: [PEM], storageClass: 'STANDARD_IA',
};
const spec: CopySpec = {
  kind: 'mysql-backup',
  db: { host: 'kfp-db-primary', port: 3306, database: 'mlpipeline', username: 'relation-7', password: 'pw' },
  store,
  key: 'kf/backups/id/control-plane/mysql/mlpipeline.sql.gz',
};
const options = { namespace: 'kubeflow', backupId: 'kf-20250201-101500-0c0ffe', part: 'kfp-db', images: { rclone: 'rclone', mysql: 'mysql', sqlite: 'python' } };

describe('controlplane/jobs: the store as the copy Jobs see it', () => {
  it('gives the rclone container the CA chain as a file from the Secret, and the MySQL container nothing of it', () => {
    const { secret, job } = buildCopyJob(spec, options);
    expect(Buffer.from((secret.data as Record<string, string>)[STORE_CA_KEY]!, 'base64').toString()).to.equal(PEM);
    const pod = (job.spec as any).template.spec;
    const [dump] = pod.initContainers;
    const [upload] = pod.containers;
    const caVolume = pod.volumes.find((v: any) => v.secret);
    expect(caVolume.secret).to.deep.equal({ secretName: secret.metadata.name, items: [{ key: STORE_CA_KEY, path: STORE_CA_KEY }] });
    const caMount = upload.volumeMounts.find((m: any) => m.name === caVolume.name);
    expect(upload.env).to.deep.include({ name: 'RCLONE_CA_CERT', value: `${caMount.mountPath}/${STORE_CA_KEY}` });
    expect(dump.volumeMounts.some((m: any) => m.name === caVolume.name)).to.equal(false);
    // The PEM is not an environment variable of either container, and the Job spec does not hold it.
    for (const container of [dump, upload]) expect(container.env.map((e: any) => e.name)).not.to.include(STORE_CA_KEY);
    expect(JSON.stringify(job)).not.to.include('MIIBprivateca');
  });

  it('an SQLite copy mounts the claim in the sqlite container and the CA in the rclone one, each only there', () => {
    const sqliteSpec: CopySpec = { kind: 'sqlite-backup', sqlite: { claim: 'mlmd-data-mlmd-0', file: 'mlmd.db', nodeName: 'node-a' }, store, key: 'kf/backups/id/control-plane/mlmd/mlmd.db.gz' };
    const { job } = buildCopyJob(sqliteSpec, { ...options, part: 'mlmd' });
    const pod = (job.spec as any).template.spec;
    const [backup] = pod.initContainers;
    const [upload] = pod.containers;
    const claimVolume = pod.volumes.find((v: any) => v.persistentVolumeClaim);
    const caVolume = pod.volumes.find((v: any) => v.secret);
    expect(claimVolume.persistentVolumeClaim).to.deep.equal({ claimName: 'mlmd-data-mlmd-0' });
    expect(backup.volumeMounts.map((m: any) => m.name)).to.include(claimVolume.name).and.not.include(caVolume.name);
    expect(upload.volumeMounts.map((m: any) => m.name)).to.include(caVolume.name).and.not.include(claimVolume.name);
    expect(pod.nodeName).to.equal('node-a');
  });

  it('without a chain there is no CA volume and no RCLONE_CA_CERT', () => {
    const { job } = buildCopyJob({ ...spec, store: { ...store, tlsCaChain: [] } }, options);
    const pod = (job.spec as any).template.spec;
    expect(pod.volumes.every((v: any) => !v.secret)).to.equal(true);
    expect(JSON.stringify(pod)).not.to.include('RCLONE_CA_CERT');
  });

  it('addresses AWS at the regional endpoint in host style, with the storage class', () => {
    const { plain } = copyEnvironment(spec);
    expect(plain).to.include({
      RCLONE_CONFIG_STORE_ENDPOINT: 'https://s3.us-west-2.amazonaws.com',
      RCLONE_CONFIG_STORE_FORCE_PATH_STYLE: 'false',
      RCLONE_CONFIG_STORE_REGION: 'us-west-2',
      RCLONE_CONFIG_STORE_STORAGE_CLASS: 'STANDARD_IA',
    });
  });

  it('runs every copy as a hardened Job: no service-account token, no Istio sidecar, non-root, nothing to escalate', () => {
    const kinds: CopySpec[] = [
      spec,
      { kind: 'mysql-restore', db: spec.db, store, key: spec.key },
      { kind: 'sqlite-restore', sqlite: { claim: 'mlmd-data', file: 'mlmd.db' }, store, key: 'k' },
      { kind: 'minio-backup', minio: { endpoint: 'http://minio.kubeflow:9000', accessKey: 'a', secretKey: 'b', service: 'minio', namespace: 'kubeflow' }, bucket: 'mlpipeline', store, keyPrefix: 'p/' },
    ];
    for (const copy of kinds) {
      const { job } = buildCopyJob(copy, options);
      const template = (job.spec as any).template;
      // A token would sit next to the database and S3 credentials; the copies never call the Kubernetes API.
      expect(template.spec.automountServiceAccountToken, copy.kind).to.equal(false);
      // Profile and kubeflow namespaces may have injection on: a sidecar never exits, so the Job would never end.
      expect(template.metadata.annotations['sidecar.istio.io/inject'], copy.kind).to.equal('false');
      expect(template.spec.securityContext).to.include({ runAsNonRoot: true });
      expect(template.spec.securityContext.runAsUser).to.be.a('number').and.not.equal(0);
      for (const container of [...(template.spec.initContainers ?? []), ...template.spec.containers]) {
        expect(container.securityContext, `${copy.kind}/${container.name}`).to.deep.include({ allowPrivilegeEscalation: false, capabilities: { drop: ['ALL'] } });
      }
      expect((job.spec as any).backoffLimit).to.equal(0);
      expect((job.spec as any).ttlSecondsAfterFinished).to.be.a('number');
    }
  });
  it("runs the SQLite step as ML Metadata's own user, and sets no fsGroup that would regroup the live database", () => {
    // canonical/mlmd-operator runs mlmd as 584792; with every capability dropped only that user can read a private
    // database and leave a restored mlmd.db owned as mlmd needs it (chown to another user needs CAP_CHOWN).
    for (const kind of ['sqlite-backup', 'sqlite-restore'] as const) {
      const { job } = buildCopyJob({ kind, sqlite: { claim: 'mlmd-data', file: 'mlmd.db', owner: '584792:584792' }, store, key: 'k' }, { ...options, part: 'mlmd' });
      const podSpec = (job.spec as any).template.spec;
      expect(podSpec.securityContext, kind).to.not.have.property('fsGroup');
      const all = [...(podSpec.initContainers ?? []), ...podSpec.containers];
      const sqlite = all.filter((c: any) => (c.volumeMounts ?? []).some((m: any) => m.name !== 'transfer' && !String(m.mountPath).includes('store-ca')));
      expect(sqlite, kind).to.have.length(1);
      expect(sqlite[0].securityContext, kind).to.deep.include({ runAsUser: 584792, runAsGroup: 584792, runAsNonRoot: true });
      for (const other of all.filter((c: any) => c !== sqlite[0])) expect(other.securityContext.runAsUser, `${kind}/${other.name}`).to.equal(undefined);
    }
    // without a known owner, the step runs as the template's unprivileged user (the script then names a failed chown)
    const { job } = buildCopyJob({ kind: 'sqlite-restore', sqlite: { claim: 'mlmd-data', file: 'mlmd.db' }, store, key: 'k' }, { ...options, part: 'mlmd' });
    const podSpec = (job.spec as any).template.spec;
    for (const c of [...(podSpec.initContainers ?? []), ...podSpec.containers]) expect(c.securityContext.runAsUser).to.equal(undefined);
  });
});
