// AWS itself: s3-integrator's relation carries no endpoint. backup-state and restore-state through the real ./dispatch
// must copy PVC data both ways: the charm's own S3 client finds AWS the way the AWS SDK does (here AWS_ENDPOINT_URL_S3,
// which the SDK reads when no endpoint is configured, points it at a TLS s3rver), and the mover Jobs, which run inside
// the cluster, use the regional endpoint https://s3.us-east-1.amazonaws.com. The simulated kubelet's containers reach
// that name only through the test's "internet" (tests/support/net/internet.ts), which routes it to the same s3rver
// under a certificate for that name: a mover that used any other endpoint would find nothing there.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { ensureCharmBuilt } from '../support/juju/charm-build.ts';
import { runDispatch, type DispatchOutcome } from '../support/juju/harness.ts';
import { s3Relation, track1Data } from '../support/juju/scenarios.ts';
import { emptyState } from '../support/juju/state.ts';
import { startS3Server, type S3ServerHandle } from '../support/s3/server.ts';
import { makeCertificates } from '../support/cluster/tls.ts';
import { startInternet, type Internet } from '../support/net/internet.ts';
import { hashTree, startKubeletCluster, writeWorkspace, type KubeletCluster } from '../volumes/helpers.ts';
import type { KubeObject } from '../../src/kube/types.ts';

const BUCKET = 'kubeflow-backups-aws';
const AWS_HOST = 's3.us-east-1.amazonaws.com';
// restic's S3 client (minio-go) addresses an amazonaws.com endpoint by its dual-stack name (minio/minio-go api.go,
// s3DualstackEnabled; s3-endpoints.go), which AWS serves for every region as it serves the regional one.
const AWS_DUALSTACK_HOST = 's3.dualstack.us-east-1.amazonaws.com';
const AWS_NAMES = [`${AWS_HOST}:443`, `${AWS_DUALSTACK_HOST}:443`];
const PVCS = { group: '', resource: 'persistentvolumeclaims' };

describe('volume data on AWS without an endpoint in the relation (real ./dispatch)', function () {
  this.timeout(300_000);
  let charmDir: string;
  let work: string;
  let s3: S3ServerHandle;
  let internet: Internet;
  let source: KubeletCluster;
  let target: KubeletCluster;
  let claims: KubeObject[];

  before(async () => {
    work = mkdtempSync(join(tmpdir(), 'aws-volumes-'));
    const certs = await makeCertificates([AWS_HOST, AWS_DUALSTACK_HOST]);
    for (const [name, pem] of [['ca.pem', certs.caCert], ['cert.pem', certs.cert], ['key.pem', certs.key]] as const) writeFileSync(join(work, name), pem);
    [charmDir, s3] = await Promise.all([ensureCharmBuilt(), startS3Server({ buckets: [BUCKET], tlsKeyFile: join(work, 'key.pem'), tlsCertFile: join(work, 'cert.pem') })]);
    internet = await startInternet(Object.fromEntries(AWS_NAMES.map((name) => [name, `127.0.0.1:${s3.port}`])));
    const egress = { proxyUrl: internet.proxyUrl, caFile: join(work, 'ca.pem') };
    [source, target] = await Promise.all([startKubeletCluster({ profiles: 2, seed: 31, egress }), startKubeletCluster({ profiles: 0, seed: 31, egress })]);
    claims = source.cluster.api.list(PVCS).filter((p) => p.metadata.namespace !== 'kubeflow');
    expect(claims.length).to.be.greaterThan(1);
    for (const claim of claims) writeWorkspace(source.kubelet.volumePath(claim.metadata.namespace!, claim.metadata.name!), { files: 30, bigFileBytes: 500_000 });
  });
  after(async () => {
    await internet?.stop();
    await Promise.all([s3?.stop(), source?.stop(), target?.stop()]);
    if (work) rmSync(work, { recursive: true, force: true });
  });

  function action(name: string, params: Record<string, unknown>, cluster: KubeletCluster): Promise<DispatchOutcome> {
    // What s3-integrator sends for AWS: keys, bucket, region, path; no endpoint.
    const relation = s3Relation(track1Data({ endpoint: '', accessKeyId: s3.accessKeyId, secretAccessKey: s3.secretAccessKey }, BUCKET));
    return runDispatch(charmDir, emptyState({ relations: [relation], actionParams: params, config: { 'restore-wait-timeout': 60 } }), {
      event: `actions/${name}`,
      env: { KUBECONFIG: cluster.cluster.kubeconfigPath, AWS_ENDPOINT_URL_S3: s3.endpoint, NODE_EXTRA_CA_CERTS: join(work, 'ca.pem') },
    });
  }

  it('backup-state copies every PVC and restore-state fills every new PVC, file for file', async () => {
    const backup = await action('backup-state', { 'include-control-plane': false }, source);
    expect(backup.state.actionFailure, backup.stderr.slice(-2000)).to.equal(undefined);
    expect(backup.state.actionResults.volumes).to.equal(String(claims.length));
    // the default engine, restic: the regional endpoint, by its dual-stack name
    expect(internet.asked, 'the backup movers went to the regional AWS endpoint').to.include.oneOf(AWS_NAMES);
    const reached = internet.asked.length;

    const restore = await action('restore-state', { 'backup-id': backup.state.actionResults['backup-id'] }, target);
    expect(restore.state.actionFailure, restore.stderr.slice(-2000)).to.equal(undefined);
    expect(restore.state.actionResults.volumes).to.equal(`${claims.length} PVC(s) filled`);
    expect(restore.state.actionResults).not.to.have.property('warnings.0');
    expect(internet.asked.slice(reached), 'the restore movers went to the regional AWS endpoint').to.include.oneOf(AWS_NAMES);
    for (const claim of claims) {
      const { namespace, name } = claim.metadata as { namespace: string; name: string };
      const restored = hashTree(target.kubelet.volumePath(namespace, name));
      expect(restored.size, `${namespace}/${name} holds files`).to.be.greaterThan(30);
      expect(restored, `${namespace}/${name}`).to.deep.equal(hashTree(source.kubelet.volumePath(namespace, name)));
    }
  });
});
