// The restic prune Job as built (src/volumes/restic/prune.ts): hardened like every Job of the charm, forgetting only full
// snapshot ids, and its answers read back from the termination message it writes. The Job itself runs against real
// restic in tests/prune/restic.process.test.ts.
import { expect } from 'chai';
import { buildResticPruneJob, parseResticPrune, resticPruneJobName } from '../../src/volumes/restic/prune.ts';

const ID = 'a'.repeat(64);
const s3 = { endpoint: 'http://s3.local:9000', bucket: 'b', path: 'kf', accessKey: 'AKID', secretKey: 'sk-never-in-the-job', uriStyle: 'path' };
const input = { runId: 'prune-abc', namespace: 'alice', mode: 'prune' as const, snapshots: [ID], image: 'docker.io/restic/restic:0.14.0', secretName: 'kfu-prune-creds-x', s3, activeDeadlineSeconds: 600, ttlSecondsAfterFinished: 60 };

describe('volumes: the restic prune Job', () => {
  it('runs in the hardened template: no token, non-root, every capability dropped, one try, no user volume', () => {
    const job = buildResticPruneJob(input) as unknown as { metadata: { labels: Record<string, string> }; spec: { backoffLimit: number; template: { spec: Record<string, unknown> } } };
    const pod = job.spec.template.spec as { automountServiceAccountToken: boolean; securityContext: { runAsNonRoot: boolean }; volumes: { persistentVolumeClaim?: unknown }[]; containers: { env: { name: string; value?: string; valueFrom?: unknown }[]; securityContext: { capabilities: { drop: string[] } } }[] };
    expect(job.spec.backoffLimit).to.equal(0);
    expect(pod.automountServiceAccountToken).to.equal(false);
    expect(pod.securityContext.runAsNonRoot).to.equal(true);
    expect(pod.containers[0]!.securityContext.capabilities.drop).to.deep.equal(['ALL']);
    expect(pod.volumes.some((v) => v.persistentVolumeClaim)).to.equal(false);
    expect(job.metadata.labels['app.kubernetes.io/component']).to.equal('volume-mover');
    expect(job.metadata.labels['kubeflow-upgrader/operation']).to.equal('prune');
    const env = new Map(pod.containers[0]!.env.map((e) => [e.name, e]));
    expect(env.get('RESTIC_REPOSITORY')?.value).to.equal('s3:http://s3.local:9000/b/kf/restic/alice');
    expect(env.get('MOVER_FORGET')?.value).to.equal(ID);
    // the password and the bucket keys come from the run's Secret, never as values in the Job
    for (const name of ['RESTIC_PASSWORD', 'AWS_SECRET_ACCESS_KEY', 'AWS_ACCESS_KEY_ID']) expect(env.get(name)?.valueFrom).to.not.equal(undefined);
    expect(JSON.stringify(job)).to.not.include('sk-never-in-the-job');
  });

  it('forgets full snapshot ids only: a short id, a flag or nothing at all is refused', () => {
    for (const snapshots of [[], ['abc123'], ['--keep-last=1'], [`${ID} ${ID}`]]) {
      expect(() => buildResticPruneJob({ ...input, snapshots })).to.throw('full snapshot ids only');
    }
    expect(() => buildResticPruneJob({ ...input, mode: 'check', snapshots: [] })).to.not.throw();
  });

  it('names the check and the prune Job of a namespace apart, within 63 characters', () => {
    const names = [resticPruneJobName('prune-abc', 'alice', 'check'), resticPruneJobName('prune-abc', 'alice', 'prune'), resticPruneJobName('prune-abc', 'bob', 'prune')];
    expect(new Set(names).size).to.equal(3);
    for (const name of names) expect(name.length).to.be.at.most(63);
  });

  it('reads its answers, and nothing else', () => {
    const lock = { time: '2026-12-07T12:00:00.123456789Z', exclusive: false, hostname: 'kfu-backup-x', pid: 7 };
    expect(parseResticPrune(JSON.stringify({ resticPrune: 'locks', count: 3, locks: [{ id: ID, lock }, { id: 'b'.repeat(64), lock: null }, { id: '../x', lock: null }] })))
      .to.deep.equal({ state: 'locks', count: 3, locks: [{ id: ID, lock }, { id: 'b'.repeat(64), lock: null }] });
    expect(parseResticPrune('{"resticPrune":"locked","locks":2}')).to.deep.equal({ state: 'locked', locks: 2 });
    expect(parseResticPrune('{"resticPrune":"pruned","ignored":0,"totalPrune":"8 blobs / 6.001 MiB"}')).to.deep.equal({ state: 'pruned', ignored: 0, totalPrune: '8 blobs / 6.001 MiB' });
    for (const other of [undefined, '', 'Fatal: wrong password', '{"resticPrune":"pruned"}', '{"resticPrune":"locked","locks":-1}', '{"volumeMover":"restic"}', '{"resticPrune":"free"}', '{"resticPrune":"locks","count":1}']) {
      expect(parseResticPrune(other)).to.equal(undefined);
    }
  });
});
