// The plain-file movers through the run's gateway (src/volumes/files-gateway.ts), as the charm runs them: the gateway
// Job in the model's namespace, the movers in two profile namespaces reaching it through the embedded cluster's
// Service network, Debian's rclone on both ends, s3rver behind. A backup, a second backup that reuses the first's
// copies, and a restore into a fresh cluster, byte for byte; everything written into a profile namespace on the way is
// searched for the bucket's keys.
import { expect } from 'chai';
import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { paginateListObjectsV2, S3Client } from '@aws-sdk/client-s3';
import { newBackupId } from '../../src/store/layout.ts';
import { backupVolumes, restoreVolumes } from '../../src/volumes/mover.ts';
import type { KubeObject } from '../../src/kube/types.ts';
import { startS3Server, type S3ServerHandle } from '../support/s3/server.ts';
import { createBoundPvc, hashTree, pvc, PVC_REF, s3For, startVolumeCluster, writeWorkspace, type VolumeCluster } from './helpers.ts';

const GATEWAY = { namespace: 'kubeflow', image: 'docker.io/rclone/rclone:1.68.2', imageSetting: 'control-plane-rclone-image' };
const PROFILES = ['alice', 'bob'];

/** Every Secret, Job and Pod written into a profile namespace, as its users could read them (Secret data decoded). */
function watchProfiles(vc: VolumeCluster): KubeObject[] {
  const seen: KubeObject[] = [];
  vc.cluster.api.subscribe((e) => {
    if (PROFILES.includes(e.object.metadata.namespace ?? '') && ['secrets', 'jobs', 'pods'].includes(e.ref.resource)) seen.push(e.object);
  });
  return seen;
}

function readable(objects: KubeObject[]): string {
  return objects.map((o) => {
    const data = (o as { data?: Record<string, string> }).data ?? {};
    return `${JSON.stringify(o)}\n${Object.values(data).map((v) => Buffer.from(v, 'base64').toString('utf8')).join('\n')}`;
  }).join('\n');
}

async function listKeys(s3: S3ServerHandle, prefix: string): Promise<string[]> {
  const client = new S3Client({ endpoint: s3.endpoint, region: 'us-east-1', forcePathStyle: true, credentials: { accessKeyId: s3.accessKeyId, secretAccessKey: s3.secretAccessKey } });
  const keys: string[] = [];
  for await (const page of paginateListObjectsV2({ client }, { Bucket: 'kf-backups', Prefix: prefix })) keys.push(...(page.Contents ?? []).map((o) => o.Key!));
  client.destroy();
  return keys;
}

describe('volumes: plain-file movers through the run\'s gateway', function () {
  this.timeout(300_000);
  let s3: S3ServerHandle;
  let source: VolumeCluster;
  let target: VolumeCluster;

  before(async () => {
    [s3, source, target] = await Promise.all([
      startS3Server({ buckets: ['kf-backups'] }),
      startVolumeCluster({ bindingMode: 'Immediate', namespaces: PROFILES }),
      startVolumeCluster({ bindingMode: 'WaitForFirstConsumer', namespaces: PROFILES }),
    ]);
  });
  after(async () => {
    await Promise.all([source?.stop(), target?.stop(), s3?.stop()]);
  });

  it('backs up, reuses the first backup\'s copies, and restores byte-identical, with no bucket key in a profile namespace', async () => {
    const seenAtSource = watchProfiles(source);
    const seenAtTarget = watchProfiles(target);
    const roots = new Map<string, string>();
    for (const ns of PROFILES) {
      const root = await createBoundPvc(source, ns, 'workspace');
      writeWorkspace(root, { files: 60, bigFileBytes: 3 * 1024 * 1024 });
      roots.set(ns, root);
    }
    // an empty volume leaves no object in the bucket: its restore through the gateway finds no folder, and fills nothing
    await createBoundPvc(source, 'bob', 'scratch');
    const settings = s3For(s3, 'kf-backups');
    const pvcs = [...PROFILES.map((namespace) => ({ namespace, name: 'workspace' })), { namespace: 'bob', name: 'scratch' }];

    const first = newBackupId();
    const backedUp = await backupVolumes(source.kube, { backupId: first, s3: settings, pvcs, gateway: GATEWAY });
    for (const r of backedUp.filter((b) => b.pvc === 'workspace')) {
      expect(r.files, `${r.namespace}: every file`).to.equal(hashTree(roots.get(r.namespace)!).size);
      expect(r.checksumVerified).to.equal(true);
      expect(r.location).to.equal(`s3://kf-backups/kubeflow/backups/${first}/volumes/${r.namespace}/workspace/`);
    }
    // in the bucket where a mover with the bucket's key would have put them: the plain-file layout is unchanged
    const keys = await listKeys(s3, `kubeflow/backups/${first}/volumes/`);
    expect(keys.filter((k) => k.includes('/alice/workspace/')).length).to.be.greaterThan(60);
    expect(keys.filter((k) => k.includes('/bob/workspace/')).length).to.be.greaterThan(60);

    // a second backup, one file changed in alice's volume: the gateway copied the first backup's copies inside the
    // bucket before serving; the movers uploaded only what changed
    writeFileSync(join(roots.get('alice')!, 'model.ckpt'), randomBytes(1024));
    const second = newBackupId();
    const again = await backupVolumes(source.kube, {
      backupId: second, s3: settings, pvcs, gateway: GATEWAY, copyFrom: new Map(pvcs.map((p) => [`${p.namespace}/${p.name}`, first])),
    });
    const alice = again.find((r) => r.namespace === 'alice')!;
    const bob = again.find((r) => r.namespace === 'bob' && r.pvc === 'workspace')!;
    expect(alice.reusedFrom).to.equal(first);
    expect(alice.reused!.bytes, 'all but the changed file was reused').to.be.greaterThan(alice.bytes - 4096);
    expect(alice.reused!.bytes).to.be.lessThan(alice.bytes);
    expect(bob.reused).to.deep.equal({ files: bob.files, bytes: bob.bytes });

    for (const p of pvcs) target.cluster.api.create(PVC_REF, pvc(p.namespace, p.name));
    const restored = await restoreVolumes(target.kube, { backupId: second, s3: settings, pvcs, gateway: GATEWAY });
    expect(restored.map((r) => r.checksumVerified)).to.deep.equal([true, true, true]);
    expect(restored.find((r) => r.pvc === 'scratch')!.files).to.equal(0);
    expect(hashTree(target.kubelet.volumePath('bob', 'scratch')).size).to.equal(0);
    for (const ns of PROFILES) {
      expect(hashTree(target.kubelet.volumePath(ns, 'workspace')), `${ns} restored`).to.deep.equal(hashTree(roots.get(ns)!));
    }

    // what the profiles' users could read, at both ends: the movers' Secrets and Jobs, and no bucket key anywhere
    for (const seen of [seenAtSource, seenAtTarget]) {
      const text = readable(seen);
      expect(text).to.not.include(s3.secretAccessKey);
      expect(text).to.not.include(s3.accessKeyId);
      expect(text).to.not.match(/RCLONE_CONFIG_\w+_(SECRET_)?ACCESS_KEY/);
      const secrets = seen.filter((o) => o.kind === 'Secret' || (o as { type?: string }).type === 'Opaque');
      expect(secrets.length).to.be.greaterThan(0);
      for (const s of secrets) expect(Object.keys((s as { data?: object }).data ?? {})).to.deep.equal(['MOVER_GATEWAY_PASSWORD']);
    }
    // the gateway went with each run
    for (const vc of [source, target]) {
      expect(vc.cluster.api.list({ group: 'batch', resource: 'jobs' }, { namespace: 'kubeflow' }).map((j) => j.metadata.name)).to.deep.equal([]);
    }
  });
});
