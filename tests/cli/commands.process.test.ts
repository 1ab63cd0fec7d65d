// backup, list, verify, snapshot-profiles, restore and check through the real CLI process, against the embedded
// cluster (with the simulated kubelet, so PVC data moves through mover Jobs) and a real s3rver.
import { expect } from 'chai';
import { mkdtempSync, readFileSync, rmSync, writeFileSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { KubeClient } from '../../src/kube/client.ts';
import { collectUserState, compareStates, describeDifferences } from '../../src/restore/compare.ts';
import { startCluster, type RunningCluster } from '../support/cluster/index.ts';
import { simulatedKubelet, storageClass, type SimulatedKubelet } from '../support/kubelet/index.ts';
import { startS3Server, type S3ServerHandle } from '../support/s3/server.ts';
import { runCli, type CliRun } from './run-cli.ts';
import { S3Client } from '@aws-sdk/client-s3';
import { putForeignArchive } from '../restore/fixtures.ts';
import { putVeleroBackup } from '../support/velero/archive.ts';
import { s3ClientFor, veleroProfileNamespace } from '../archive/fixtures.ts';
import { ObjectStore } from '../../src/store/objects.ts';

const BUCKET = 'cli-backups';

interface KubeletCluster {
  running: RunningCluster;
  kubelet: SimulatedKubelet;
  dataDir: string;
  stop(): Promise<void>;
}

async function clusterWithKubelet(profiles: number): Promise<KubeletCluster> {
  const running = await startCluster({ seed: 3 });
  const dataDir = mkdtempSync(join(tmpdir(), 'cli-kubelet-'));
  const kubelet = simulatedKubelet({ dataDir, configRetryMs: 3000 });
  const stop = kubelet.start(running.api);
  running.api.create({ group: 'storage.k8s.io', resource: 'storageclasses' }, storageClass('standard', { isDefault: true }));
  if (profiles > 0) {
    const { applyDataset } = await import('../support/cluster/kubeflow/dataset.ts');
    await applyDataset(running.kubeconfigPath, { profiles, seed: 3 });
  }
  return {
    running, kubelet, dataDir,
    async stop() {
      stop();
      await kubelet.idle();
      await running.stop();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

describe('kubeflow-upgrader commands against the embedded cluster and s3rver', function () {
  this.timeout(180_000);
  let s3: S3ServerHandle;
  let a: KubeletCluster;
  let b: KubeletCluster;
  let env: Record<string, string>;
  let keyFile: string;
  const location = () => ['--s3-url', `s3://${BUCKET}/team/prod`, '--path-style'];

  before(async () => {
    [s3, a, b] = await Promise.all([startS3Server({ buckets: [BUCKET] }), clusterWithKubelet(2), clusterWithKubelet(0)]);
    env = { AWS_ACCESS_KEY_ID: s3.accessKeyId, AWS_SECRET_ACCESS_KEY: s3.secretAccessKey, AWS_ENDPOINT_URL: s3.endpoint };
    const dir = mkdtempSync(join(tmpdir(), 'cli-key-'));
    keyFile = join(dir, 'key');
    writeFileSync(keyFile, 'correct horse battery staple for the cli test\n');
    // a file in one workspace volume, to see it come back on B
    for (const pvc of a.running.api.list({ group: '', resource: 'persistentvolumeclaims' }).slice(0, 1)) {
      const folder = a.kubelet.volumePath(pvc.metadata.namespace!, pvc.metadata.name!);
      mkdirSync(folder, { recursive: true });
      writeFileSync(join(folder, 'analysis.ipynb'), '{"cells": []}');
    }
  });
  after(async () => {
    await Promise.all([s3?.stop(), a?.stop(), b?.stop()]);
  });

  let backupId = '';
  let backup: CliRun;

  it('backup --json commits a backup with sealed Secrets and volume data, progress on stderr as plain lines', async () => {
    backup = await runCli(['backup', ...location(), '--kubeconfig', a.running.kubeconfigPath, '--encryption-key-file', keyFile, '--description', 'cli test', '--json'], env);
    expect(backup.exitCode, backup.stderr).to.equal(0);
    const result = JSON.parse(backup.stdout) as { backupId: string; location: string; objects: number; sealedSecrets: number; volumes: { copied: number } };
    backupId = result.backupId;
    expect(backupId).to.match(/^kf-\d{8}-\d{6}-[0-9a-f]{6}$/);
    expect(result.location).to.equal(`s3://${BUCKET}/team/prod/backups/${backupId}/`);
    expect(result.objects).to.be.greaterThan(10);
    expect(result.sealedSecrets).to.be.greaterThan(0);
    expect(result.volumes.copied).to.be.greaterThan(0);
    expect(backup.stderr).to.match(/^\[\s*\d+\.\d+s\] backing up 2 profile namespace\(s\)/m);
    expect(backup.stderr).not.to.include('\x1b');
    expect(backup.stdout + backup.stderr).not.to.include(s3.secretAccessKey === s3.accessKeyId ? '\u0000' : s3.secretAccessKey);
    expect(backup.stdout + backup.stderr).not.to.include('correct horse');
  });

  it('list shows it as a table, and as JSON', async () => {
    const people = await runCli(['list', ...location()], env);
    expect(people.exitCode, people.stderr).to.equal(0);
    expect(people.stdout).to.match(/^ID\s+PHASE\s+CREATED\s+SCOPE\s+OBJECTS\s+SIZE\s+SECRETS\s+AUTHENTICATION\s+VOLUMES\s+DESCRIPTION$/m);
    // without the key the HMAC it carries cannot be checked; with it, it is
    // the default mover keeps volume data in the namespaces' restic repositories
    expect(people.stdout).to.match(new RegExp(`^${backupId}\\s+Completed\\s.*backup-state 2 ns 2 profiles\\s.*sealed\\s+hmac-unchecked\\s+restic\\s+cli test$`, 'm'));
    const keyed = await runCli(['list', ...location(), '--encryption-key-file', keyFile], env);
    expect(keyed.stdout).to.match(new RegExp(`^${backupId}\\s.*sealed\\s+authenticated\\s+restic\\s+cli test$`, 'm'));
    const machines = JSON.parse((await runCli(['list', ...location(), '--json', '--limit', '1'], env)).stdout) as { count: number; backups: Array<{ id: string; phase: string }> };
    expect(machines.count).to.equal(1);
    expect(machines.backups[0]).to.include({ id: backupId, phase: 'Completed' });
  });

  it('verify latest finds it intact, and with the key authenticated with its restic repositories checked in the cluster', async () => {
    // restic check runs in Jobs: without credentials for a cluster, one sentence says what is missing
    const nowhere = await runCli(['verify', 'latest', ...location()], { ...env, HOME: mkdtempSync(join(tmpdir(), 'cli-home-')) });
    expect(nowhere.exitCode).to.equal(1);
    expect(nowhere.stderr, nowhere.stderr).to.include('No Kubernetes cluster is configured: pass --kubeconfig, set KUBECONFIG, or run inside a pod.');
    // without the key its files check out, but its repositories do not open: not checked, said, and the run fails
    const run = await runCli(['verify', 'latest', ...location(), '--kubeconfig', a.running.kubeconfigPath], env);
    expect(run.exitCode, run.stderr).to.equal(1);
    expect(run.stdout + run.stderr).to.match(/restic repository of \S+: not-checked, the repository does not open without an --encryption-key-file: its data was written under a key/);
    const keyed = await runCli(['verify', 'latest', ...location(), '--kubeconfig', a.running.kubeconfigPath, '--encryption-key-file', keyFile, '--json'], env);
    expect(keyed.exitCode, keyed.stderr).to.equal(0);
    const report = JSON.parse(keyed.stdout) as { status: string; authentication: { state: string }; sealing: string };
    expect(report).to.deep.include({ status: 'ok', sealing: 'sealed, each value bound to its backup, Secret and key' });
    expect(report.authentication.state).to.equal('authenticated');
  });

  it('verify of a backup that does not exist fails with exit 1 in one sentence', async () => {
    const run = await runCli(['verify', 'kf-20000101-000000-000000', ...location()], env);
    expect(run.exitCode).to.equal(1);
    const errors = run.stderr.trim().split('\n').filter((line) => line.startsWith('kubeflow-upgrader:'));
    expect(errors).to.have.length(1);
    expect(errors[0]).to.match(/^kubeflow-upgrader: Backup kf-20000101-000000-000000 could not be verified: there is no backup kf-20000101-000000-000000 in s3:\/\/cli-backups\/team\/prod\/; kubeflow-upgrader list shows the complete ones\.$/);
  });

  it('a Velero backup whose marker says InProgress is listed with that phase, and verify and restore refuse it naming it', async () => {
    const store = new ObjectStore({ client: s3ClientFor(s3), bucket: BUCKET, prefix: 'team/prod' });
    await putVeleroBackup(store, { name: 'velero-running', items: veleroProfileNamespace('velero-erin'), phase: 'InProgress', started: new Date(0) });
    try {
      const listed = await runCli(['list', ...location()], env);
      expect(listed.stdout).to.match(/^velero-running\s+InProgress\s/m);
      const reason = 'its velero-backup.json says phase InProgress, and only a Completed or PartiallyFailed backup is whole.';
      const verified = await runCli(['verify', 'velero-running', ...location()], env);
      expect(verified.exitCode).to.equal(1);
      expect(verified.stderr).to.include(`kubeflow-upgrader: Backup velero-running could not be verified: ${reason}`);
      const restored = await runCli(['restore', 'velero-running', ...location(), '--kubeconfig', b.running.kubeconfigPath], env);
      // a backup that cannot be restored is bad input to restore: exit 2, nothing changed
      expect(restored.exitCode).to.equal(2);
      expect(restored.stderr).to.include(`Backup velero-running cannot be restored: ${reason.slice(0, -1)}`);
    } finally {
      await store.deleteFolder('backups/velero-running/');
    }
  });

  it('with a key, a Velero backup (no HMAC) is restored only with --allow-unauthenticated, and the outcome says so', async () => {
    const store = new ObjectStore({ client: s3ClientFor(s3), bucket: BUCKET, prefix: 'team/prod' });
    await putVeleroBackup(store, { name: 'velero-nightly', items: veleroProfileNamespace('velero-frank'), started: new Date(0) });
    try {
      const args = ['restore', 'velero-nightly', ...location(), '--kubeconfig', b.running.kubeconfigPath, '--encryption-key-file', keyFile, '--dry-run'];
      const refused = await runCli(args, env);
      expect(refused.exitCode).to.equal(1);
      expect(refused.stderr).to.match(/^kubeflow-upgrader: The restore was refused: Backup velero-nightly is not authenticated and was not restored: its velero-backup.json carries no HMAC of the manifest \(.*\); set --allow-unauthenticated to accept it anyway\.$/m);
      const allowed = await runCli([...args, '--allow-unauthenticated', '--json'], env);
      expect(allowed.exitCode, allowed.stderr).to.equal(0);
      expect((JSON.parse(allowed.stdout) as { authentication: string }).authentication).to.match(/^not authenticated \(.*\), accepted because --allow-unauthenticated was given$/);
      expect(b.running.api.list({ group: 'kubeflow.org', resource: 'profiles' })).to.have.length(0);
    } finally {
      await store.deleteFolder('backups/velero-nightly/');
    }
  });

  it('restore --dry-run into the fresh cluster writes nothing and prints the plan', async () => {
    const run = await runCli(['restore', backupId, ...location(), '--kubeconfig', b.running.kubeconfigPath, '--encryption-key-file', keyFile, '--dry-run'], env);
    expect(run.exitCode, run.stderr).to.equal(0);
    expect(run.stdout).to.match(/would restore \(dry run: nothing was written\)/);
    expect(run.stdout).to.match(/^plan \(namespace, kind: create\/update\/unchanged\/skip\/fail\):$/m);
    expect(b.running.api.list({ group: 'kubeflow.org', resource: 'profiles' })).to.have.length(0);
  });

  it('restore --storage-class-map it cannot read is bad input: exit 2, one sentence, nothing written', async () => {
    const run = await runCli(['restore', backupId, ...location(), '--kubeconfig', b.running.kubeconfigPath, '--encryption-key-file', keyFile, '--storage-class-map', 'standard'], env);
    expect(run.exitCode).to.equal(2);
    expect(run.stderr).to.include('restore: storage-class-map: "standard" is not old=new with two storage class names (write e.g. microk8s-hostpath=ceph-rbd,standard=fast). Nothing was restored');
    expect(b.running.api.list({ group: 'kubeflow.org', resource: 'profiles' })).to.have.length(0);
  });

  it('restore into the fresh cluster brings back the same user state and the volume files', async () => {
    const run = await runCli(['restore', 'latest', ...location(), '--kubeconfig', b.running.kubeconfigPath, '--encryption-key-file', keyFile, '--json'], env);
    expect(run.exitCode, run.stderr).to.equal(0);
    const outcome = JSON.parse(run.stdout) as { totals: { created: number; failed: number }; volumes: { restored: number }; authentication: string };
    expect(outcome.totals.failed).to.equal(0);
    expect(outcome.authentication).to.equal('authenticated: the manifest HMAC matches under the encryption-key');
    expect(outcome.totals.created).to.be.greaterThan(10);
    expect(outcome.volumes.restored).to.be.greaterThan(0);

    const [kubeA, kubeB] = await Promise.all([KubeClient.load({ kubeconfig: a.running.kubeconfigPath }), KubeClient.load({ kubeconfig: b.running.kubeconfigPath })]);
    try {
      const differences = compareStates(await collectUserState(kubeA), await collectUserState(kubeB));
      expect(describeDifferences(differences)).to.deep.equal([]);
    } finally {
      kubeA.close();
      kubeB.close();
    }
    const pvc = a.running.api.list({ group: '', resource: 'persistentvolumeclaims' })[0]!;
    expect(readFileSync(join(b.kubelet.volumePath(pvc.metadata.namespace!, pvc.metadata.name!), 'analysis.ipynb'), 'utf8')).to.equal('{"cells": []}');

  });

  it('snapshot-profiles commits Profiles and contributors only', async () => {
    const run = await runCli(['snapshot-profiles', ...location(), '--kubeconfig', a.running.kubeconfigPath, '--json'], env);
    expect(run.exitCode, run.stderr).to.equal(0);
    const result = JSON.parse(run.stdout) as { profiles: number; contributors: number };
    expect(result.profiles).to.equal(2);
    expect(result.contributors).to.be.greaterThan(0);
  });

  it('check says no-go with every reason when the charm\'s CRD guard is absent; --no-guard drops only that reason', async () => {
    const run = await runCli(['check', ...location(), '--kubeconfig', a.running.kubeconfigPath, '--json'], env);
    expect(run.exitCode, run.stderr).to.equal(1);
    const result = JSON.parse(run.stdout) as { verdict: string; reasons: string[]; crds: unknown[] };
    expect(result.verdict).to.equal('no-go');
    expect(result.reasons.some((r) => /^The CRD guard /.test(r))).to.equal(true);
    expect(result.crds.length).to.be.greaterThan(0);
    const lenient = JSON.parse((await runCli(['check', ...location(), '--kubeconfig', a.running.kubeconfigPath, '--json', '--no-guard'], env)).stdout) as { reasons: string[] };
    expect(lenient.reasons).to.deep.equal(result.reasons.filter((r) => !/^The CRD guard /.test(r)));
  });

  it('S3 that refuses the credentials fails the listing in one sentence, exit 1, without the key', async () => {
    const run = await runCli(['list', ...location()], { ...env, AWS_ACCESS_KEY_ID: 'NOT-THE-KEY-ID', AWS_SECRET_ACCESS_KEY: 'wrong-secret-0987' });
    expect(run.exitCode).to.equal(1);
    expect(run.stderr.trim().split('\n')).to.have.length(1);
    expect(run.stderr).to.match(/credentials|denied|refused|rejected/i);
    expect(run.stderr).not.to.include('wrong-secret-0987');
  });

  it('restore refuses an archive with a cluster-admin binding; --skip-refused restores the rest and names what it left out', async () => {
    const store = new ObjectStore({
      client: new S3Client({ endpoint: s3.endpoint, region: 'us-east-1', forcePathStyle: true, credentials: { accessKeyId: s3.accessKeyId, secretAccessKey: s3.secretAccessKey } }),
      bucket: BUCKET, prefix: 'team/prod',
    });
    const namespace = 'cli-team';
    const binding = (name: string, role: string) => ({
      path: `resources/rolebindings.rbac.authorization.k8s.io/namespaces/${namespace}/${name}.json`,
      object: { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'RoleBinding', metadata: { name, namespace }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: role }, subjects: [{ kind: 'User', name: 'sam@example.com' }] },
    });
    await putForeignArchive(store, 'cli-escalation', [
      { path: `resources/profiles.kubeflow.org/cluster/${namespace}.json`, object: { apiVersion: 'kubeflow.org/v1', kind: 'Profile', metadata: { name: namespace }, spec: { owner: { kind: 'User', name: 'lead@example.com' } } } },
      binding('sam-view', 'view'),
      binding('sam-root', 'cluster-admin'),
    ]);
    const refused = await runCli(['restore', 'cli-escalation', ...location(), '--kubeconfig', b.running.kubeconfigPath], env);
    expect(refused.exitCode).to.equal(1);
    expect(refused.stderr).to.include('RoleBinding/cli-team/sam-root');
    const run = await runCli(['restore', 'cli-escalation', ...location(), '--kubeconfig', b.running.kubeconfigPath, '--skip-refused'], env);
    expect(run.exitCode, run.stderr).to.equal(0);
    expect(run.stdout).to.match(/^refused \(not written\): RoleBinding\/cli-team\/sam-root .*cluster-admin/m);
    expect(run.stdout).to.match(/total: 2 created, 0 updated, 0 unchanged, 1 skipped, 0 failed/);
  });

  it('backup again: the summary says no volume byte was uploaded, the repository held them all', async () => {
    const again = await runCli(['backup', ...location(), '--kubeconfig', a.running.kubeconfigPath, '--encryption-key-file', keyFile, '--description', 'cli test again'], env);
    expect(again.exitCode, again.stderr).to.equal(0);
    // restic's data_added counts tree blobs too: the empty PVC's snapshot is a marker file made anew each time, whose
    // inode and times its tree records (restic/restic internal/restic/node.go), so a few hundred bytes of metadata go up
    const [, uploaded] = /^volumes: [1-9]\d* PVC\(s\), 13 B \((\d+) B uploaded\)$/m.exec(again.stdout) ?? [];
    expect(uploaded, again.stdout).to.be.a('string');
    expect(Number(uploaded)).to.be.below(1024);
  });
});
