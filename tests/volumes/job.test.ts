// The mover's Job and Secret as data: what a reviewer of `kubectl get job -o yaml` would check.
import { expect } from 'chai';
import { buildCredentialsSecret, buildMoverJob } from '../../src/volumes/job.ts';
import { moverJobName } from '../../src/volumes/labels.ts';
import { failureReason, parseMovedTree } from '../../src/volumes/outcome.ts';
import { remotePath } from '../../src/volumes/settings.ts';

const s3 = {
  endpoint: 'https://minio.kubeflow:9000', bucket: 'backups', path: '/team/kf/', region: 'eu-west-1',
  accessKey: 'AKIAEXAMPLE', secretKey: 'wJalrXUtnFEMI/K7MDENG', uriStyle: 'host', tlsCaChain: '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n',
};

function job(operation: 'backup' | 'restore', nodeName?: string, copyDestPath?: string) {
  return buildMoverJob({
    name: 'kfu-backup-x', namespace: 'alice', pvc: 'workspace', backupId: 'kf-20250131-142500-a1b2c3', operation,
    image: 'rclone/rclone:1.68.2', secretName: 'creds', remotePath: remotePath(s3, 'backups/kf-20250131-142500-a1b2c3/volumes/alice/workspace/'),
    s3, nodeName, activeDeadlineSeconds: 600, ttlSecondsAfterFinished: 3600, ...(copyDestPath ? { copyDestPath } : {}),
  });
}

describe('volumes: Job and Secret builders', function () {
  it('keeps every credential out of the Job spec: env comes from the Secret by key', function () {
    const spec = JSON.stringify(job('backup'));
    for (const secret of [s3.accessKey, s3.secretKey, 'MIIB']) expect(spec).not.to.include(secret);
    const container = (job('backup').spec as any).template.spec.containers[0];
    const fromSecret = container.env.filter((e: any) => e.valueFrom?.secretKeyRef?.name === 'creds').map((e: any) => e.name);
    expect(fromSecret).to.include.members(['RCLONE_CONFIG_KFUSTORE_ACCESS_KEY_ID', 'RCLONE_CONFIG_KFUSTORE_SECRET_ACCESS_KEY', 'RCLONE_CONFIG_KFUSTORE_ENDPOINT']);
    expect(container.command.join(' ')).not.to.match(/ACCESS_KEY|--s3-/);
  });

  it('puts the credentials and CA chain in the Secret, base64 as the API wants', function () {
    const secret = buildCredentialsSecret({ name: 'creds', namespace: 'alice', backupId: 'kf-20250131-142500-a1b2c3', operation: 'backup', s3 });
    const data = secret.data as Record<string, string>;
    const decoded = (k: string) => Buffer.from(data[k]!, 'base64').toString();
    expect(decoded('RCLONE_CONFIG_KFUSTORE_SECRET_ACCESS_KEY')).to.equal(s3.secretKey);
    expect(decoded('RCLONE_CONFIG_KFUSTORE_FORCE_PATH_STYLE')).to.equal('false');
    expect(decoded('RCLONE_CONFIG_KFUSTORE_REGION')).to.equal('eu-west-1');
    expect(decoded('store-ca.crt')).to.equal(s3.tlsCaChain);
    expect(secret.metadata.labels).to.include({ 'kubeflow-upgrader/backup-id': 'kf-20250131-142500-a1b2c3', 'app.kubernetes.io/component': 'volume-mover' });
  });

  it('mounts the PVC read-only for a backup and writable for a restore, copying in the right direction', function () {
    const env = (j: ReturnType<typeof job>) => Object.fromEntries((j.spec as any).template.spec.containers[0].env.filter((e: any) => 'value' in e).map((e: any) => [e.name, e.value]));
    const backup = (job('backup').spec as any).template.spec;
    expect(backup.volumes[0].persistentVolumeClaim).to.deep.equal({ claimName: 'workspace', readOnly: true });
    expect(backup.containers[0].volumeMounts[0]).to.include({ mountPath: '/volume', readOnly: true });
    expect(env(job('backup'))).to.include({ MOVER_SOURCE: '/volume', MOVER_TARGET: 'kfustore:backups/team/kf/backups/kf-20250131-142500-a1b2c3/volumes/alice/workspace' });
    const restore = (job('restore').spec as any).template.spec;
    expect(restore.volumes[0].persistentVolumeClaim.readOnly).to.equal(false);
    expect(env(job('restore'))).to.include({ MOVER_TARGET: '/volume' });
  });

  it('points a backup mover at the earlier copy of its PVC, never a restore mover', function () {
    const env = (j: ReturnType<typeof job>) => Object.fromEntries((j.spec as any).template.spec.containers[0].env.filter((e: any) => 'value' in e).map((e: any) => [e.name, e.value]));
    const earlier = remotePath(s3, 'backups/kf-20250130-120000-000000/volumes/alice/workspace/');
    expect(env(job('backup', undefined, earlier))).to.include({ MOVER_COPY_DEST: 'kfustore:backups/team/kf/backups/kf-20250130-120000-000000/volumes/alice/workspace' });
    expect(env(job('backup'))).not.to.have.property('MOVER_COPY_DEST');
    expect(env(job('restore', undefined, earlier))).not.to.have.property('MOVER_COPY_DEST');
    const script = (job('backup').spec as any).template.spec.containers[0].command[2] as string;
    // the earlier copy is copied inside the bucket, then the volume synced onto it by size and checksum
    expect(script).to.include('rclone copy --checksum').and.to.include('"$MOVER_COPY_DEST" "$MOVER_TARGET"');
    expect(script).to.include('rclone sync --checksum').and.to.include('"$MOVER_SOURCE" "$MOVER_TARGET"');
    expect(script).not.to.include('--copy-dest');
  });

  it('bounds the Job, keeps the Istio sidecar out and pins it to a node when asked', function () {
    const j = job('backup', 'worker-3');
    const spec = j.spec as any;
    expect(spec).to.include({ backoffLimit: 0, activeDeadlineSeconds: 600, ttlSecondsAfterFinished: 3600 });
    expect(spec.template.metadata.annotations['sidecar.istio.io/inject']).to.equal('false');
    expect(spec.template.spec.restartPolicy).to.equal('Never');
    expect(spec.template.spec.automountServiceAccountToken).to.equal(false);
    expect(spec.template.spec.securityContext).to.include({ runAsNonRoot: true, runAsUser: 1000, runAsGroup: 100, fsGroup: 100 });
    expect(spec.template.spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0].matchFields[0])
      .to.deep.equal({ key: 'metadata.name', operator: 'In', values: ['worker-3'] });
    expect(job('backup').spec as any).not.to.have.nested.property('template.spec.affinity');
    expect(spec.template.spec.containers[0]).to.include({ image: 'rclone/rclone:1.68.2', terminationMessagePolicy: 'FallbackToLogsOnError' });
  });

  it('names Jobs within 63 characters for any PVC name', function () {
    const name = moverJobName('restore', 'kf-20250131-142500-a1b2c3', 'a'.repeat(63), 'p'.repeat(253), Buffer.alloc(32, 7));
    expect(name).to.match(/^kfu-restore-[0-9a-f]{16}$/);
    expect(moverJobName('restore', 'kf-20250131-142500-a1b2c3', 'a'.repeat(63), 'p'.repeat(253), Buffer.alloc(32, 7)), 'the same on every run').to.equal(name);
    expect(name.length).to.be.at.most(63);
  });

  it('reads the mover outcome and turns a log tail into one reason without secrets', function () {
    const stats = { bytes: 42, checks: 1, transfers: 2, errors: 0, totalBytes: 42 };
    expect(parseMovedTree(JSON.stringify({ volumeMover: 2, copy: { level: 'warning', msg: 'Transferred', stats } }))).to.deep.equal({ files: 3, bytes: 42, checksumVerified: true });
    // rclone 1.64 and later also count server-side copies apart (fs/accounting/stats.go RemoteStats)
    const withCopies = { ...stats, serverSideCopies: 2, serverSideCopyBytes: 40 };
    expect(parseMovedTree(JSON.stringify({ volumeMover: 2, copy: { stats: withCopies } }))).to.deep.equal({ files: 3, bytes: 42, checksumVerified: true, reused: { files: 2, bytes: 40 } });
    // after a reuse: the sync's stats (2 files uploaded, 42 bytes) and the finished tree's size
    expect(parseMovedTree(JSON.stringify({ volumeMover: 2, copy: { stats }, tree: { count: 10, bytes: 1042, sizeless: 0 } })))
      .to.deep.equal({ files: 10, bytes: 1042, checksumVerified: true, reused: { files: 8, bytes: 1000 } });
    expect(parseMovedTree(JSON.stringify({ volumeMover: 2, copy: { stats }, tree: {} }))).to.equal(undefined);
    expect(parseMovedTree(JSON.stringify({ volumeMover: 2, copy: {} }))).to.equal(undefined);
    expect(parseMovedTree('some log text')).to.equal(undefined);
    const tail = [
      '2026/11/30 03:36:22 ERROR : S3 bucket bk path p: error reading destination root directory: InvalidAccessKeyId: nope',
      '\tstatus code: 403, request id: , host id: ',
      '2026/11/30 03:36:22 Failed to copy: InvalidAccessKeyId: The key sekrit-value was not accepted.',
    ].join('\n');
    expect(failureReason(tail, ['sekrit-value'])).to.equal('InvalidAccessKeyId: The key *** was not accepted.');
    const jsonTail = '{"level":"error","msg":"Failed to copy: InvalidAccessKeyId: The AWS Access Key Id you provided does not exist in our records.\\n\\tstatus code: 403","time":"x"}';
    expect(failureReason(jsonTail, [])).to.equal('InvalidAccessKeyId: The AWS Access Key Id you provided does not exist in our records.');
    expect(failureReason('Failed to copy with 4 errors: last error was: NoSuchBucket: The specified bucket does not exist', [])).to.equal('NoSuchBucket: The specified bucket does not exist');
  });
});
