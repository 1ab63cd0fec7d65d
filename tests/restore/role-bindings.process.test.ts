// conflict-policy=update over RoleBindings, against a server that refuses to change a binding's roleRef
// (tests/support/cluster/rbac/binding-validation.ts, after kubernetes pkg/apis/rbac/validation/validation.go
// ValidateRoleBindingUpdate). A live binding of the same name that grants another role is kept and named in one
// sentence, never sent as an update (which a real server answers 422 on every run) and never deleted; its subjects
// are not touched either, since the binding as a whole stays the target's. A binding whose role is the same is
// updated as any object is, and a dry run says what the real run says.
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

const ROLEBINDINGS = { group: 'rbac.authorization.k8s.io', resource: 'rolebindings' };
const PROFILES = { group: 'kubeflow.org', resource: 'profiles' };
const RBAC = 'rbac.authorization.k8s.io';

function binding(name: string, namespace: string, role: string, users: string[]): KubeObject {
  return {
    apiVersion: `${RBAC}/v1`, kind: 'RoleBinding', metadata: { name, namespace },
    roleRef: { apiGroup: RBAC, kind: 'ClusterRole', name: role },
    subjects: users.map((name) => ({ kind: 'User', name, apiGroup: RBAC })),
  } as KubeObject;
}

const subjectsOf = (o: KubeObject | undefined) => ((o as unknown as { subjects: Array<{ name: string }> }).subjects).map((s) => s.name);
const roleOf = (o: KubeObject | undefined) => (o as unknown as { roleRef: { name: string } }).roleRef.name;

describe('conflict-policy=update over RoleBindings whose role changed (strict server)', function () {
  this.timeout(120_000);
  let source: RunningCluster;
  let target: RunningCluster;
  let s3: S3ServerHandle;
  let kubeSource: KubeClient;
  let kubeTarget: KubeClient;
  let namespace: string;
  let restore: (options?: { dryRun?: boolean }) => ReturnType<typeof runRestore>;

  before(async () => {
    [source, target, s3] = await Promise.all([startCluster({ profiles: 1, seed: 7 }), startCluster({ seed: 7 }), startS3Server({ buckets: ['rbac'] })]);
    kubeSource = await KubeClient.load({ kubeconfig: source.kubeconfigPath, concurrency: 4 });
    kubeTarget = await KubeClient.load({ kubeconfig: target.kubeconfigPath, concurrency: 4 });
    namespace = source.api.list(PROFILES)[0]!.metadata.name!;
    source.api.create(ROLEBINDINGS, binding('reviewers', namespace, 'view', ['rita@example.com']));
    source.api.create(ROLEBINDINGS, binding('helpers', namespace, 'edit', ['hugo@example.com']));
    const client = new S3Client({ endpoint: s3.endpoint, region: 'us-east-1', forcePathStyle: true, credentials: { accessKeyId: s3.accessKeyId, secretAccessKey: s3.secretAccessKey } });
    const store = new ObjectStore({ client, bucket: 'rbac', prefix: 'kf' });
    const backup = await runBackup(kubeSource, backupStore(store), {
      kind: 'backup-state', includeVolumes: false, includeControlPlane: false, toolVersion: 'test', namespaces: [namespace],
      profileNamespaceSelector: 'app.kubernetes.io/part-of=kubeflow-profile', protectedCrdGroups: ['kubeflow.org'],
    });
    restore = (options = {}) => runRestore(kubeTarget, backupStore(store), { backupId: backup.backupId, waitTimeoutMs: 20_000, conflictPolicy: 'update', ...options });
    const first = await restore();
    expect(first.failures).to.deep.equal([]);
    // on the target meanwhile: `reviewers` now grants edit (deleted and made again, as a real server requires), and
    // `helpers` gained a subject
    target.api.delete(ROLEBINDINGS, 'reviewers', namespace);
    target.api.create(ROLEBINDINGS, binding('reviewers', namespace, 'edit', ['rita@example.com', 'ron@example.com']));
    target.api.mergePatch(ROLEBINDINGS, 'helpers', namespace, { subjects: [{ kind: 'User', name: 'hugo@example.com', apiGroup: RBAC }, { kind: 'User', name: 'mallory@example.com', apiGroup: RBAC }] });
  });
  after(async () => {
    kubeSource?.close();
    kubeTarget?.close();
    await Promise.all([source?.stop(), target?.stop(), s3?.stop()]);
  });

  const sentence = (ns: string) => `RoleBinding/${ns}/reviewers: not updated: the target's binds ClusterRole edit and the backup's ClusterRole view, and a binding's roleRef cannot change; the live binding is kept — delete it and rerun to restore the backup's`;

  it('a dry run names the binding of another role in one sentence and would update the other', async () => {
    const planned = await restore({ dryRun: true });
    expect(planned.failures).to.deep.equal([sentence(namespace)]);
    expect(planned.totals).to.include({ updated: 1, failed: 1 });
    expect(subjectsOf(target.api.get(ROLEBINDINGS, 'helpers', namespace))).to.deep.equal(['hugo@example.com', 'mallory@example.com']);
  });

  it('the real run keeps the live binding of another role as it is, says so in the same sentence, and updates the rest', async () => {
    const before = target.api.get(ROLEBINDINGS, 'reviewers', namespace)!;
    const result = await restore();
    expect(result.failures).to.deep.equal([sentence(namespace)]);
    expect(result.totals).to.include({ updated: 1, failed: 1 });
    const kept = target.api.get(ROLEBINDINGS, 'reviewers', namespace)!;
    expect(kept.metadata.uid).to.equal(before.metadata.uid);
    expect(kept.metadata.resourceVersion).to.equal(before.metadata.resourceVersion);
    expect(roleOf(kept)).to.equal('edit');
    expect(subjectsOf(kept)).to.deep.equal(['rita@example.com', 'ron@example.com']);
    expect(subjectsOf(target.api.get(ROLEBINDINGS, 'helpers', namespace))).to.deep.equal(['hugo@example.com']);
  });

  it('once the operator deletes the live binding, a rerun restores the backup\'s and then writes nothing', async () => {
    target.api.delete(ROLEBINDINGS, 'reviewers', namespace);
    const rerun = await restore();
    expect(rerun.failures).to.deep.equal([]);
    expect(roleOf(target.api.get(ROLEBINDINGS, 'reviewers', namespace))).to.equal('view');
    const again = await restore();
    expect(again.totals).to.include({ created: 0, updated: 0, failed: 0 });
  });
});
