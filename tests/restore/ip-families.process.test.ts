// Services archived on a dual-stack cluster, restored into a single-stack one and into a dual-stack one, against
// servers that check IP families as kube-apiserver does (tests/support/cluster/ip-families.ts, after kubernetes
// pkg/registry/core/service/storage/alloc.go initIPFamilyFields). A PreferDualStack Service is restored with its
// primary family where the target is single-stack, and the restore says so; a RequireDualStack one is refused there
// with the server's sentence; on a dual-stack target both come back with both families, and nothing is said.
import { expect } from 'chai';
import { S3Client } from '@aws-sdk/client-s3';
import { backupStore } from '../support/backup-store.ts';
import { startCluster, type RunningCluster } from '../support/cluster/index.ts';
import { startS3Server, type S3ServerHandle } from '../support/s3/server.ts';
import { KubeClient } from '../../src/kube/client.ts';
import type { KubeObject } from '../../src/kube/types.ts';
import { ObjectStore } from '../../src/store/objects.ts';
import { runBackup } from '../../src/backup/engine.ts';
import { runRestore } from '../../src/restore/engine.ts';

const SERVICES = { group: '', resource: 'services' };
const PROFILES = { group: 'kubeflow.org', resource: 'profiles' };

interface FamilySpec { ipFamilies?: string[]; ipFamilyPolicy?: string; clusterIPs?: string[] }
const familiesOf = (o: KubeObject | undefined) => (o?.spec as FamilySpec | undefined)?.ipFamilies;

function service(name: string, namespace: string, ipFamilyPolicy?: string): KubeObject {
  return {
    apiVersion: 'v1', kind: 'Service', metadata: { name, namespace },
    spec: { selector: { app: name }, ports: [{ port: 8080, protocol: 'TCP' }], ...(ipFamilyPolicy ? { ipFamilyPolicy } : {}) },
  } as KubeObject;
}

describe('restore of dual-stack Services into single-stack and dual-stack clusters (strict server)', function () {
  this.timeout(120_000);
  let source: RunningCluster;
  let single: RunningCluster;
  let dual: RunningCluster;
  let s3: S3ServerHandle;
  const clients: KubeClient[] = [];
  let namespace: string;
  let restoreInto: (target: RunningCluster, options?: { dryRun?: boolean }) => ReturnType<typeof runRestore>;

  before(async () => {
    [source, single, dual, s3] = await Promise.all([
      startCluster({ profiles: 1, seed: 9, dualStack: true }), startCluster({ seed: 9 }), startCluster({ seed: 9, dualStack: true }), startS3Server({ buckets: ['stacks'] }),
    ]);
    const kubeSource = await KubeClient.load({ kubeconfig: source.kubeconfigPath, concurrency: 4 });
    clients.push(kubeSource);
    namespace = source.api.list(PROFILES)[0]!.metadata.name!;
    source.api.create(SERVICES, service('both', namespace, 'PreferDualStack'));
    source.api.create(SERVICES, service('must', namespace, 'RequireDualStack'));
    source.api.create(SERVICES, service('one', namespace));
    expect(familiesOf(source.api.get(SERVICES, 'both', namespace))).to.deep.equal(['IPv4', 'IPv6']);
    const client = new S3Client({ endpoint: s3.endpoint, region: 'us-east-1', forcePathStyle: true, credentials: { accessKeyId: s3.accessKeyId, secretAccessKey: s3.secretAccessKey } });
    const store = new ObjectStore({ client, bucket: 'stacks', prefix: 'kf' });
    const backup = await runBackup(kubeSource, backupStore(store), {
      kind: 'backup-state', includeVolumes: false, includeControlPlane: false, toolVersion: 'test', namespaces: [namespace],
      profileNamespaceSelector: 'app.kubernetes.io/part-of=kubeflow-profile', protectedCrdGroups: ['kubeflow.org'],
    });
    restoreInto = async (target, options = {}) => {
      const kube = await KubeClient.load({ kubeconfig: target.kubeconfigPath, concurrency: 4 });
      clients.push(kube);
      return runRestore(kube, backupStore(store), { backupId: backup.backupId, waitTimeoutMs: 20_000, ...options });
    };
  });
  after(async () => {
    for (const c of clients) c.close();
    await Promise.all([source?.stop(), single?.stop(), dual?.stop(), s3?.stop()]);
  });

  const narrowed = (verb: string) => `Service/${namespace}/both: ${verb} single-stack (IPv4): the target is not configured for dual-stack services, and the backup's asks PreferDualStack over IPv4 and IPv6`;
  const refusedRequire = 'Service "must" is invalid: [spec.ipFamilyPolicy: Invalid value: "RequireDualStack": this cluster is not configured for dual-stack services, spec.ipFamilies[1]: Invalid value: "IPv6": not configured on this cluster]';

  it('a dry run into the single-stack cluster says which Service would be narrowed and which is refused', async () => {
    const planned = await restoreInto(single, { dryRun: true });
    expect(planned.warnings).to.include(narrowed('would be restored'));
    expect(planned.failures).to.have.length(1);
    expect(planned.failures[0]).to.contain(`Service/${namespace}/must`).and.to.contain(refusedRequire);
    expect(single.api.get(SERVICES, 'both', namespace)).to.equal(undefined);
  });

  it('the single-stack cluster gets the PreferDualStack Service with its primary family, reported, and refuses the RequireDualStack one', async () => {
    const result = await restoreInto(single);
    expect(result.warnings).to.include(narrowed('restored'));
    expect(result.failures).to.have.length(1);
    expect(result.failures[0]).to.contain(refusedRequire);
    const both = single.api.get(SERVICES, 'both', namespace)!;
    expect([(both.spec as FamilySpec).ipFamilyPolicy, familiesOf(both), (both.spec as FamilySpec).clusterIPs!.length]).to.deep.equal(['PreferDualStack', ['IPv4'], 1]);
    expect(familiesOf(single.api.get(SERVICES, 'one', namespace))).to.deep.equal(['IPv4']);
    expect(single.api.get(SERVICES, 'must', namespace)).to.equal(undefined);
  });

  it('a rerun into the single-stack cluster finds the narrowed Service as it should be, and says nothing more about it', async () => {
    const rerun = await restoreInto(single);
    expect(rerun.warnings.filter((w) => w.includes('single-stack'))).to.deep.equal([]);
    expect(rerun.totals).to.include({ created: 0, updated: 0, failed: 1 });
  });

  it('the dual-stack cluster gets both Services with both families, and nothing is said', async () => {
    const result = await restoreInto(dual);
    expect(result.failures).to.deep.equal([]);
    expect(result.warnings.filter((w) => w.includes('single-stack'))).to.deep.equal([]);
    expect(familiesOf(dual.api.get(SERVICES, 'both', namespace))).to.deep.equal(['IPv4', 'IPv6']);
    expect(familiesOf(dual.api.get(SERVICES, 'must', namespace))).to.deep.equal(['IPv4', 'IPv6']);
    expect((dual.api.get(SERVICES, 'both', namespace)!.spec as FamilySpec).clusterIPs![1]).to.match(/^fd00:10:152::/);
  });
});
