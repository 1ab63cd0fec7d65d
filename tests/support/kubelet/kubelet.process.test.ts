// The simulated kubelet as a Job controller and container runtime, driven through the in-process API only.
// Each expectation is what the upstream component does (kubernetes/kubernetes pkg/controller/job, pkg/kubelet); the
// modules of tests/support/kubelet (job-controller.ts, scheduler.ts, image-pull.ts, kubelet.ts) name the file each
// behaviour follows.
import { expect } from 'chai';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { KubeObject } from '../../../src/kube/types.ts';
import type { InProcessApi } from '../cluster/contract.ts';
import { startCluster, type RunningCluster } from '../cluster/index.ts';
import { quotaSynced } from '../cluster/quota-controller.ts';
import { canBindMount, rewritePaths } from './container.ts';
import { simulatedKubelet, storageClass, type SimulatedKubelet } from './index.ts';
import { EVENTS, JOBS, PODS, PVCS, SECRETS, STORAGE_CLASSES } from './refs.ts';

function job(name: string, script: string, extra: { image?: string; backoffLimit?: number; deadline?: number; spec?: Record<string, unknown>; container?: Record<string, unknown> } = {}): KubeObject {
  return {
    apiVersion: 'batch/v1', kind: 'Job', metadata: { name, namespace: 'team' },
    spec: {
      backoffLimit: extra.backoffLimit ?? 0,
      ...(extra.deadline ? { activeDeadlineSeconds: extra.deadline } : {}),
      template: { spec: {
        restartPolicy: 'Never',
        containers: [{ name: 'main', image: extra.image ?? 'busybox:1.36', command: ['sh', '-c', script], terminationMessagePolicy: 'FallbackToLogsOnError', ...extra.container }],
        ...extra.spec,
      } },
    },
  };
}

async function finished(api: InProcessApi, name: string): Promise<KubeObject> {
  for (let i = 0; i < 400; i++) {
    const j = api.get(JOBS, name, 'team');
    const conditions = ((j?.status as { conditions?: { type: string }[] } | undefined)?.conditions ?? []);
    if (j && conditions.some((c) => c.type === 'Complete' || c.type === 'Failed')) return j;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`Job ${name} did not finish`);
}

function podsOf(api: InProcessApi, name: string): KubeObject[] {
  return api.list(PODS, { namespace: 'team', labelSelector: `job-name=${name}` });
}

function terminated(pod: KubeObject | undefined): { exitCode: number; message: string } {
  return (pod?.status as { containerStatuses: { state: { terminated: { exitCode: number; message: string } } }[] }).containerStatuses[0]!.state.terminated;
}

const condition = (j: KubeObject, type: string) =>
  ((j.status as { conditions: { type: string; reason: string }[] }).conditions).find((c) => c.type === type);

describe('simulated kubelet', function () {
  let cluster: RunningCluster;
  let kubelet: SimulatedKubelet;
  let stop: () => void;
  let dataDir: string;

  before(async function () {
    cluster = await startCluster({ kubeflowCrds: false, controllers: false });
    dataDir = mkdtempSync(join(tmpdir(), 'kubelet-test-'));
    kubelet = simulatedKubelet({ dataDir, nodes: ['n1'], configRetryMs: 500 }); // default read-only views: bind mounts where possible
    stop = kubelet.start(cluster.api);
    cluster.api.create({ group: '', resource: 'namespaces' }, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'team' } });
    cluster.api.create(STORAGE_CLASSES, storageClass('fast'));
    cluster.api.create(STORAGE_CLASSES, storageClass('wffc', { volumeBindingMode: 'WaitForFirstConsumer', isDefault: true }));
  });
  after(async function () {
    stop?.();
    await kubelet?.idle();
    await cluster?.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('rewrites container paths only where they stand as whole paths, in one pass', function () {
    const mapping: [string, string][] = [['/volume', '/tmp/k/m0'], ['/tmp', '/tmp/k/m1']];
    expect(rewritePaths('cp /volume/a "/tmp" /volumes x=/tmp/b', mapping)).to.equal('cp /tmp/k/m0/a "/tmp/k/m1" /volumes x=/tmp/k/m1/b');
    // a default inside a parameter expansion, as scripts write the termination-message path
    expect(rewritePaths(': "${LOG:=/tmp}"', mapping)).to.equal(': "${LOG:=/tmp/k/m1}"');
  });

  it('runs a Job to Complete, resolving Secret env (secretKeyRef and envFrom) and never passing AWS_CA_BUNDLE', async function () {
    process.env.AWS_CA_BUNDLE ??= '/etc/ssl/certs/ca-certificates.crt';
    cluster.api.create(SECRETS, { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'creds', namespace: 'team' }, data: { TOKEN: Buffer.from('t0ken').toString('base64') } });
    cluster.api.create(JOBS, job('env', 'printf "%s|%s|%s" "$ONE" "$TOKEN" "${AWS_CA_BUNDLE:-unset}" > /dev/termination-log', {
      container: { env: [{ name: 'ONE', valueFrom: { secretKeyRef: { name: 'creds', key: 'TOKEN' } } }], envFrom: [{ secretRef: { name: 'creds' } }] },
    }));
    const done = await finished(cluster.api, 'env');
    expect(condition(done, 'Complete')?.reason).to.equal('CompletionsReached');
    expect((done.status as { succeeded: number }).succeeded).to.equal(1);
    const pod = podsOf(cluster.api, 'env')[0];
    expect((pod?.status as { phase: string }).phase).to.equal('Succeeded');
    expect(terminated(pod)).to.include({ exitCode: 0, message: 't0ken|t0ken|unset' });
    expect(pod?.metadata.ownerReferences?.[0]).to.include({ kind: 'Job', name: 'env', controller: true });
  });

  it('binds a WaitForFirstConsumer claim only when a Pod that mounts it is scheduled, and never writes through a read-only mount', async function () {
    cluster.api.create(PVCS, { apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata: { name: 'data', namespace: 'team' }, spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } } });
    await new Promise((r) => setTimeout(r, 100));
    expect((cluster.api.get(PVCS, 'data', 'team')?.status as { phase?: string } | undefined)?.phase ?? 'Pending').to.equal('Pending');
    const volume = { name: 'd', persistentVolumeClaim: { claimName: 'data' } };
    cluster.api.create(JOBS, job('fill', 'echo hello > /data/a.txt', { spec: { volumes: [volume] }, container: { volumeMounts: [{ name: 'd', mountPath: '/data' }] } }));
    expect(condition(await finished(cluster.api, 'fill'), 'Complete')).to.not.equal(undefined);
    const bound = cluster.api.get(PVCS, 'data', 'team')!;
    expect((bound.status as { phase: string }).phase).to.equal('Bound');
    expect(bound.metadata.annotations?.['volume.kubernetes.io/selected-node']).to.equal('n1');
    expect(readdirSync(kubelet.volumePath('team', 'data'))).to.deep.equal(['a.txt']);

    cluster.api.create(JOBS, job('sneaky', 'cat /data/a.txt > /dev/termination-log; touch /data/b.txt; rm -f /data/a.txt; true', {
      spec: { volumes: [{ ...volume, persistentVolumeClaim: { claimName: 'data', readOnly: true } }] },
      container: { volumeMounts: [{ name: 'd', mountPath: '/data', readOnly: true }] },
    }));
    await finished(cluster.api, 'sneaky');
    expect(terminated(podsOf(cluster.api, 'sneaky')[0]).message).to.equal('hello\n');
    expect(kubelet.logs('team', podsOf(cluster.api, 'sneaky')[0]!.metadata.name!)).to.match(canBindMount() ? /Read-only file system/ : /^$/);
    expect(readdirSync(kubelet.volumePath('team', 'data'))).to.deep.equal(['a.txt']);
  });

  it('provisions a claim from its data source as external-provisioner does: a clone starts as a copy; a snapshot or a missing claim leaves it Pending', async function () {
    const claim = (name: string, extra: Record<string, unknown> = {}, storageClassName = 'fast'): KubeObject => ({
      apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata: { name, namespace: 'team' },
      spec: { accessModes: ['ReadWriteOnce'], storageClassName, resources: { requests: { storage: '1Gi' } }, ...extra },
    });
    const phase = (name: string) => (cluster.api.get(PVCS, name, 'team')?.status as { phase?: string } | undefined)?.phase ?? 'Pending';
    const warnings = (name: string) => cluster.api.list(EVENTS, { namespace: 'team' })
      .filter((e) => (e as { involvedObject?: { name?: string } }).involvedObject?.name === name).map((e) => `${(e as { reason?: string }).reason}: ${(e as { message?: string }).message}`);
    const settled = async (name: string, done: () => boolean) => {
      for (let i = 0; i < 200 && !done(); i++) await new Promise((r) => setTimeout(r, 25));
      if (!done()) throw new Error(`claim ${name} did not settle`);
    };
    cluster.api.create(PVCS, claim('origin'));
    await settled('origin', () => phase('origin') === 'Bound');
    writeFileSync(join(kubelet.volumePath('team', 'origin'), 'weights.bin'), 'trained');
    cluster.api.create(PVCS, claim('copy', { dataSource: { kind: 'PersistentVolumeClaim', name: 'origin' } }));
    await settled('copy', () => phase('copy') === 'Bound');
    expect(readFileSync(join(kubelet.volumePath('team', 'copy'), 'weights.bin'), 'utf8')).to.equal('trained');

    cluster.api.create(PVCS, claim('from-snapshot', { dataSourceRef: { apiGroup: 'snapshot.storage.k8s.io', kind: 'VolumeSnapshot', name: 'nightly' }, dataSource: { apiGroup: 'snapshot.storage.k8s.io', kind: 'VolumeSnapshot', name: 'nightly' } }));
    cluster.api.create(PVCS, claim('from-nothing', { dataSource: { kind: 'PersistentVolumeClaim', name: 'gone' } }));
    await settled('from-snapshot', () => warnings('from-snapshot').length > 0);
    await settled('from-nothing', () => warnings('from-nothing').length > 0);
    expect([phase('from-snapshot'), phase('from-nothing')]).to.deep.equal(['Pending', 'Pending']);
    expect(warnings('from-snapshot')).to.deep.equal(['ProvisioningFailed: failed to provision volume with StorageClass "fast": error getting handle for DataSource Type VolumeSnapshot by Name nightly: error getting snapshot nightly from api server: volumesnapshots.snapshot.storage.k8s.io "nightly" not found']);
    expect(warnings('from-nothing')).to.deep.equal(['ProvisioningFailed: failed to provision volume with StorageClass "fast": error getting handle for DataSource Type PersistentVolumeClaim by Name gone: error getting PVC gone (namespace "team") from api server: persistentvolumeclaims "gone" not found']);

    // a Pod that needs such a claim (WaitForFirstConsumer) is never scheduled, so never runs
    cluster.api.create(PVCS, claim('late-snapshot', { dataSource: { apiGroup: 'snapshot.storage.k8s.io', kind: 'VolumeSnapshot', name: 'nightly' } }, 'wffc'));
    cluster.api.create(JOBS, job('needs-snapshot', 'true', { spec: { volumes: [{ name: 'd', persistentVolumeClaim: { claimName: 'late-snapshot' } }] }, container: { volumeMounts: [{ name: 'd', mountPath: '/data' }] } }));
    await settled('late-snapshot', () => podsOf(cluster.api, 'needs-snapshot').some((p) => JSON.stringify(p.status ?? {}).includes('provisioning failed')));
    const pod = podsOf(cluster.api, 'needs-snapshot')[0]!;
    expect((pod.status as { phase: string; conditions: { type: string; message: string }[] }).conditions.find((c) => c.type === 'PodScheduled')?.message)
      .to.equal('running PreBind plugin "VolumeBinding": binding volumes: provisioning failed for PVC "late-snapshot"');
    expect(phase('late-snapshot')).to.equal('Pending');
  });

  it('fails a Job after backoffLimit + 1 failed Pods, with the log tail as the termination message', async function () {
    cluster.api.create(JOBS, job('boom', 'echo "it went boom" >&2; exit 3', { backoffLimit: 1 }));
    const done = await finished(cluster.api, 'boom');
    expect(condition(done, 'Failed')?.reason).to.equal('BackoffLimitExceeded');
    expect((done.status as { failed: number }).failed).to.equal(2);
    const pods = podsOf(cluster.api, 'boom');
    expect(pods).to.have.length(2);
    for (const pod of pods) expect(terminated(pod)).to.deep.include({ exitCode: 3, message: 'it went boom\n' });
  });

  it('ends a Job past its activeDeadlineSeconds as DeadlineExceeded', async function () {
    cluster.api.create(JOBS, job('slow', 'sleep 30', { deadline: 1 }));
    expect(condition(await finished(cluster.api, 'slow'), 'Failed')?.reason).to.equal('DeadlineExceeded');
  });

  it('fails a Pod whose Secret never appears', async function () {
    cluster.api.create(JOBS, job('nosecret', 'true', { container: { envFrom: [{ secretRef: { name: 'missing' } }] } }));
    await finished(cluster.api, 'nosecret');
    expect(terminated(podsOf(cluster.api, 'nosecret')[0]).message).to.equal('secret "missing" not found');
  });

  it('refuses runAsNonRoot over an image that runs as root, and runs it with a non-root uid', async function () {
    cluster.api.create(JOBS, job('rootimage', 'true', { spec: { securityContext: { runAsNonRoot: true } } }));
    await finished(cluster.api, 'rootimage');
    expect(terminated(podsOf(cluster.api, 'rootimage')[0]).message).to.match(/^container has runAsNonRoot and image will run as root/);
    cluster.api.create(JOBS, job('uidzero', 'true', { spec: { securityContext: { runAsNonRoot: true } }, container: { securityContext: { runAsUser: 0 } } }));
    await finished(cluster.api, 'uidzero');
    expect(terminated(podsOf(cluster.api, 'uidzero')[0]).message).to.match(/^container's runAsUser breaks non-root policy/);
    cluster.api.create(JOBS, job('nonroot', 'echo ran > /dev/termination-log', { spec: { securityContext: { runAsNonRoot: true, runAsUser: 1000 } } }));
    expect(condition(await finished(cluster.api, 'nonroot'), 'Complete')).to.not.equal(undefined);
  });

  it('runs mariadb images with the local MariaDB client tools', async function () {
    cluster.api.create(JOBS, job('db', 'mariadb --version > /dev/termination-log', { image: 'mariadb:11.4' }));
    await finished(cluster.api, 'db');
    expect(terminated(podsOf(cluster.api, 'db')[0]).message.toLowerCase()).to.include('mariadb');
  });

  it('runs init containers in order before the main container, all sharing the Pod\'s emptyDir', async function () {
    const volumes = [{ name: 'transfer', emptyDir: {} }];
    const mount = [{ name: 'transfer', mountPath: '/transfer' }];
    cluster.api.create(JOBS, job('two-step', 'cat /transfer/first /transfer/second > /dev/termination-log', {
      image: 'docker.io/rclone/rclone:1.68.2',
      spec: {
        volumes,
        initContainers: [
          { name: 'first', image: 'docker.io/library/mysql:8.4', command: ['sh', '-c', 'echo one > /transfer/first'], volumeMounts: mount },
          { name: 'second', image: 'busybox:1.36', command: ['sh', '-c', 'test -f /transfer/first && echo two > /transfer/second'], volumeMounts: mount },
        ],
      },
      container: { volumeMounts: mount },
    }));
    expect(condition(await finished(cluster.api, 'two-step'), 'Complete')).to.not.equal(undefined);
    const pod = podsOf(cluster.api, 'two-step')[0];
    expect(terminated(pod).message).to.equal('one\ntwo\n');
    const inits = (pod?.status as { initContainerStatuses: { name: string; state: { terminated: { exitCode: number } } }[] }).initContainerStatuses;
    expect(inits.map((s) => [s.name, s.state.terminated.exitCode])).to.deep.equal([['first', 0], ['second', 0]]);
  });

  it('fails the Pod on a failed init container and never starts the main container', async function () {
    cluster.api.create(JOBS, job('init-fails', 'echo ran > /dev/termination-log', {
      spec: { initContainers: [{ name: 'prepare', image: 'busybox:1.36', command: ['sh', '-c', 'echo "no luck" > /dev/termination-log; exit 4'] }] },
    }));
    expect(condition(await finished(cluster.api, 'init-fails'), 'Failed')).to.not.equal(undefined);
    const status = podsOf(cluster.api, 'init-fails')[0]?.status as { phase: string; initContainerStatuses: { state: { terminated: { exitCode: number; message: string } } }[]; containerStatuses: { state: Record<string, unknown> }[] };
    expect(status.phase).to.equal('Failed');
    expect(status.initContainerStatuses[0]!.state.terminated).to.include({ exitCode: 4, message: 'no luck\n' });
    expect(status.containerStatuses[0]!.state).to.have.property('waiting');
  });

  it('gives each official image only its own tools: no rclone beside mysqldump, no MySQL client beside rclone', async function () {
    const probe = 'for t in rclone mysqldump mysql mariadb-dump; do command -v $t >/dev/null && printf "%s " $t; done > /dev/termination-log';
    cluster.api.create(JOBS, job('tools-mysql', probe, { image: 'docker.io/library/mysql:8.4' }));
    cluster.api.create(JOBS, job('tools-rclone', probe, { image: 'docker.io/rclone/rclone:1.68.2' }));
    await finished(cluster.api, 'tools-mysql');
    await finished(cluster.api, 'tools-rclone');
    const mysqlTools = terminated(podsOf(cluster.api, 'tools-mysql')[0]).message;
    expect(mysqlTools).to.match(/dump/);
    expect(mysqlTools).to.not.include('rclone');
    expect(terminated(podsOf(cluster.api, 'tools-rclone')[0]).message).to.equal('rclone ');
  });

  it('resolves <service>.<namespace>.svc.cluster.local to this machine when the Service exists', async function () {
    cluster.api.create({ group: '', resource: 'services' }, { apiVersion: 'v1', kind: 'Service', metadata: { name: 'minio', namespace: 'team' }, spec: { ports: [{ port: 9000 }] } });
    cluster.api.create(JOBS, job('dns', 'printf "%s|%s" "$A" "$B" > /dev/termination-log', {
      container: { env: [{ name: 'A', value: 'http://minio.team.svc.cluster.local:9000' }, { name: 'B', value: 'http://absent.team.svc.cluster.local:9000' }] },
    }));
    await finished(cluster.api, 'dns');
    expect(terminated(podsOf(cluster.api, 'dns')[0]).message).to.equal('http://127.0.0.1:9000|http://absent.team.svc.cluster.local:9000');
  });

  it('leaves Pods of images it cannot run to other controllers', async function () {
    cluster.api.create(PODS, { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'nb', namespace: 'team' }, spec: { containers: [{ name: 'nb', image: 'jupyter/scipy:latest' }] } });
    await new Promise((r) => setTimeout(r, 200));
    expect(cluster.api.get(PODS, 'nb', 'team')?.status ?? {}).to.not.have.property('phase', 'Running');
    expect(existsSync(join(dataDir, 'team', 'nb'))).to.equal(false);
  });

  it('reports an image from an unreachable registry as ErrImagePull, then ImagePullBackOff, and never runs it', async function () {
    cluster.api.create(JOBS, job('airgap', 'echo never', { image: 'registry.example.invalid/tools/busybox:1.36' }));
    const states = new Set<string>();
    for (let i = 0; i < 80 && states.size < 2; i++) {
      const pod = podsOf(cluster.api, 'airgap')[0];
      const waiting = (pod?.status as { containerStatuses?: { state?: { waiting?: { reason: string; message?: string } } }[] } | undefined)?.containerStatuses?.[0]?.state?.waiting;
      if (waiting?.reason === 'ErrImagePull') expect(waiting.message).to.include('lookup registry.example.invalid: no such host');
      if (waiting?.reason === 'ImagePullBackOff') expect(waiting.message).to.equal('Back-off pulling image "registry.example.invalid/tools/busybox:1.36"');
      if (waiting) states.add(waiting.reason);
      await new Promise((r) => setTimeout(r, 50));
    }
    expect([...states].sort()).to.deep.equal(['ErrImagePull', 'ImagePullBackOff']);
    expect((podsOf(cluster.api, 'airgap')[0]!.status as { phase: string }).phase).to.equal('Pending');
    cluster.api.delete(JOBS, 'airgap', 'team', { propagationPolicy: 'Background' });
  });

  it('records each refused Pod as a FailedCreate event on its Job, keeps trying, and creates it once admitted', async function () {
    const QUOTAS = { group: '', resource: 'resourcequotas' };
    const EVENTS = { group: '', resource: 'events' };
    cluster.api.create(QUOTAS, { apiVersion: 'v1', kind: 'ResourceQuota', metadata: { name: 'cpu-limits', namespace: 'team' }, spec: { hard: { 'limits.cpu': '2' } } });
    // a quota counts only once the quota controller has written its status (admission reads status.hard)
    await quotaSynced(cluster.api, 'team', 'cpu-limits');
    const created = cluster.api.create(JOBS, job('refused', 'echo admitted > /dev/termination-log'));
    type Event = KubeObject & { reason?: string; message?: string; type?: string; source?: { component?: string } };
    let events: Event[] = [];
    for (let i = 0; i < 100 && events.length < 2; i++) {
      events = cluster.api.list(EVENTS, { namespace: 'team' }).filter((e) => (e as { involvedObject?: { uid?: string } }).involvedObject?.uid === created.metadata.uid);
      await new Promise((r) => setTimeout(r, 50));
    }
    expect(events.length, 'a retry after a backoff, refused again').to.be.at.least(2);
    for (const event of events) {
      expect(event).to.deep.include({ reason: 'FailedCreate', type: 'Warning', source: { component: 'job-controller' } });
      expect(event.message).to.match(/^Error creating: pods "refused-[a-z0-9]+" is forbidden: failed quota: cpu-limits: must specify limits\.cpu for: main$/);
    }
    expect(podsOf(cluster.api, 'refused')).to.deep.equal([]);
    cluster.api.delete(QUOTAS, 'cpu-limits', 'team');
    const done = await finished(cluster.api, 'refused');
    expect(condition(done, 'Complete')).to.not.equal(undefined);
    expect(terminated(podsOf(cluster.api, 'refused')[0]).message).to.equal('admitted\n');
  });
});

describe('simulated kubelet stopped while a container waits for its configuration', function () {
  it('ends: the wait between tries does not outlive the stop', async function () {
    this.timeout(30_000);
    const cluster = await startCluster({ kubeflowCrds: false, controllers: false });
    const dataDir = mkdtempSync(join(tmpdir(), 'kubelet-test-'));
    try {
      const kubelet = simulatedKubelet({ dataDir, nodes: ['n1'], configRetryMs: 600_000 });
      const stop = kubelet.start(cluster.api);
      cluster.api.create({ group: '', resource: 'namespaces' }, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'team' } });
      const waiting = new Promise<void>((resolve) => {
        const unsubscribe = cluster.api.subscribe((event) => {
          const statuses = (event.object.status as { containerStatuses?: { state: { waiting?: { reason?: string } } }[] } | undefined)?.containerStatuses ?? [];
          if (event.ref.resource === 'pods' && statuses.some((c) => c.state.waiting?.reason === 'CreateContainerConfigError')) {
            unsubscribe();
            resolve();
          }
        });
      });
      cluster.api.create(PODS, { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'waits', namespace: 'team' }, spec: { restartPolicy: 'Never', containers: [{ name: 'main', image: 'busybox:1.36', command: ['true'], env: [{ name: 'X', valueFrom: { secretKeyRef: { name: 'absent', key: 'x' } } }] }] } });
      await waiting;
      stop();
      await kubelet.idle(); // hung before: the wait between tries was a loop timer, cleared by the stop and never run
    } finally {
      await cluster.stop();
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
