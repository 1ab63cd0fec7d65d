// Issue 39, as a profile's owner sees a backup and a restore of the whole cluster (real ./dispatch, restic movers,
// encryption-key set). The owner acts with the RBAC Kubeflow gives them: the profile controller's `namespaceAdmin`
// RoleBinding to kubeflow-admin in their namespace (kubeflow/kubeflow components/profile-controller, canonical/
// kubeflow-roles-operator src/manifests/kubeflow-roles.yaml), through @kubernetes/client-node over TLS. While the run
// goes, they watch every Secret, Job and Pod of their namespace. Everything they saw is then searched for the bucket's
// keys and the encryption key, and every restic password they found is tried, by restic itself, on every other
// namespace's repository: none opens. Their own mover reaches only their own repository, through the gateway's URL.
// A restore hands each filled volume over from the model's namespace (src/volumes/rebind.ts): the owner sees nothing of it.
import { expect } from 'chai';
import { CoreV1Api, KubeConfig, Watch } from '@kubernetes/client-node';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa } from 'execa';
import type { KubeObject } from '../../src/kube/types.ts';
import { ensureCharmBuilt } from '../support/juju/charm-build.ts';
import { runDispatch, type DispatchOutcome } from '../support/juju/harness.ts';
import { s3Relation, track1Data } from '../support/juju/scenarios.ts';
import { emptyState } from '../support/juju/state.ts';
import { startS3Server, type S3ServerHandle } from '../support/s3/server.ts';
import { startKubeletCluster, type KubeletCluster } from '../volumes/helpers.ts';
import { legacyPassword, namespacePassword } from '../volumes/restic-passwords.ts';

const BUCKET = 'isolation';
const KEY_SECRET = 'secret:cta0isolationkey0000000001';
const KEY = 'the isolation passphrase';
const PROFILES = { group: 'kubeflow.org', resource: 'profiles' };

/** Everything the owner of `namespace` sees of its Secrets, Jobs and Pods while it watches. */
class OwnerEyes {
  readonly seen: KubeObject[] = [];
  /** every container log the owner read, Pod by Pod, as their pods/log right gives it */
  readonly logs: string[] = [];
  private readonly reading: Promise<void>[] = [];
  /** a watch that ended with an error before it was closed (a 403, a dropped connection): what it missed is unknown */
  readonly broken: string[] = [];
  private closing = false;
  private readonly aborts: AbortController[] = [];
  constructor(private readonly config: KubeConfig, private readonly namespace: string) {}

  async open(): Promise<void> {
    const watch = new Watch(this.config);
    // a watch without a resourceVersion starts with every object there is, then follows each change
    for (const path of [`/api/v1/namespaces/${this.namespace}/secrets`, `/apis/batch/v1/namespaces/${this.namespace}/jobs`, `/api/v1/namespaces/${this.namespace}/pods`]) {
      this.aborts.push(await watch.watch(path, {}, (_type, object: KubeObject) => {
        this.seen.push(object);
        if (object.kind === 'Pod') this.readLog(object);
      }, (error: unknown) => {
        if (!this.closing && error) this.broken.push(`${path}: ${String((error as Error).message ?? error)}`);
      }));
    }
  }

  /** A started Pod's log, read at once (a finished mover's Pod goes with its Job), whatever it had written by then. */
  private readLog(pod: KubeObject): void {
    const phase = (pod.status as { phase?: string } | undefined)?.phase;
    if (phase !== 'Running' && phase !== 'Succeeded' && phase !== 'Failed') return;
    const api = this.config.makeApiClient(CoreV1Api);
    this.reading.push(api.readNamespacedPodLog({ name: pod.metadata.name!, namespace: this.namespace })
      .then((log) => { this.logs.push(String(log)); }, () => undefined));
  }

  async close(): Promise<void> {
    this.closing = true;
    for (const a of this.aborts) a.abort();
    await Promise.all(this.reading);
  }

  /** Every string the owner could read: Secret data decoded, every other field as JSON, and the Pods' logs. */
  text(): string {
    return [...this.logs, ...this.seen.map((o) => {
      const data = (o as { data?: Record<string, string> }).data ?? {};
      const decoded = Object.values(data).map((v) => Buffer.from(v, 'base64').toString('utf8'));
      return `${JSON.stringify(o)}\n${decoded.join('\n')}`;
    })].join('\n');
  }

  moverSecrets(): Array<Record<string, string>> {
    return this.seen.filter((o) => (o as { type?: string }).type === 'Opaque')
      .filter((o) => o.metadata.labels?.['app.kubernetes.io/component'] === 'volume-mover')
      .map((o) => Object.fromEntries(Object.entries((o as { data?: Record<string, string> }).data ?? {}).map(([k, v]) => [k, Buffer.from(v, 'base64').toString('utf8')])));
  }
}

describe('tenant isolation: what a profile\'s owner gets from a backup and a restore (real ./dispatch)', function () {
  this.timeout(600_000);
  let charmDir: string;
  let s3: S3ServerHandle;
  let source: KubeletCluster;
  let work: string;
  let namespaces: string[];
  let owner: { namespace: string; user: string };

  before(async () => {
    [charmDir, s3, source] = await Promise.all([ensureCharmBuilt(), startS3Server({ buckets: [BUCKET] }), startKubeletCluster({ profiles: 2, seed: 91 })]);
    const profiles = source.cluster.api.list(PROFILES);
    namespaces = profiles.map((p) => p.metadata.name!).sort();
    const first = profiles.find((p) => p.metadata.name === namespaces[0])!;
    owner = { namespace: first.metadata.name!, user: (first.spec as { owner: { name: string } }).owner.name };
    work = mkdtempSync(join(tmpdir(), 'isolation-'));
  });
  after(async () => {
    await Promise.all([s3?.stop(), source?.stop()]);
    if (work) rmSync(work, { recursive: true, force: true });
  });

  function action(name: string, params: Record<string, unknown>, side: KubeletCluster, engine: 'restic' | 'rclone' = 'restic'): Promise<DispatchOutcome> {
    const state = emptyState({
      relations: [s3Relation(track1Data(s3, BUCKET))], actionParams: params,
      config: { 'restore-wait-timeout': 120, 'volume-mover-engine': engine, 'encryption-key': KEY_SECRET },
    });
    state.secrets[KEY_SECRET] = { revisions: [{ key: KEY }] };
    return runDispatch(charmDir, state, { event: `actions/${name}`, env: { KUBECONFIG: side.cluster.kubeconfigPath } });
  }

  /** restic itself, with the bucket's keys (the test's, never the owner's), on a namespace's repository. */
  const opens = async (namespace: string, password: string) => (await execa('restic', ['-o', 's3.bucket-lookup=path', '--no-lock', 'cat', 'config'], {
    reject: false, extendEnv: false,
    env: {
      PATH: process.env.PATH, HOME: work, AWS_ACCESS_KEY_ID: s3.accessKeyId, AWS_SECRET_ACCESS_KEY: s3.secretAccessKey, RESTIC_PASSWORD: password,
      RESTIC_REPOSITORY: `s3:${s3.endpoint}/${BUCKET}/backups/restic/${namespace}`, RESTIC_CACHE_DIR: join(work, 'cache'),
    },
  })).exitCode === 0;

  /**
   * A restore (by hand-over, the default: src/volumes/rebind.ts) fills each claim in the model's namespace and hands its
   * volume over: the owner sees nothing the run made in their namespace, no Secret, Job or Pod.
   */
  function judgeRestore(eyes: OwnerEyes): void {
    expect(eyes.broken, 'every watch of the owner stayed open for the whole run').to.deep.equal([]);
    const ours = eyes.seen.filter((o) => o.metadata.labels?.['app.kubernetes.io/managed-by'] === 'kubeflow-upgrader' || o.metadata.name?.startsWith('kfu-'));
    expect(ours.map((o) => `${o.kind}/${o.metadata.name}`), 'nothing of the restore in the profile namespace').to.deep.equal([]);
    expect(eyes.moverSecrets()).to.deep.equal([]);
    const text = eyes.text();
    expect(text).to.not.include(s3.secretAccessKey);
    expect(text).to.not.include(KEY);
    for (const namespace of namespaces) expect(text).to.not.include(namespacePassword(KEY, namespace));
  }

  function judge(eyes: OwnerEyes, engine: 'restic' | 'rclone' = 'restic'): void {
    expect(eyes.broken, 'every watch of the owner stayed open for the whole run').to.deep.equal([]);
    const text = eyes.text();
    // nothing reaches beyond the namespace: not the bucket's keys, not the encryption key, not the old shared password,
    // not another namespace's restic password
    expect(text).to.not.include(s3.secretAccessKey);
    // and no credential's name in what the run made there (the users' own Secrets may hold their own S3 keys)
    const ours = JSON.stringify(eyes.seen.filter((o) => o.metadata.labels?.['app.kubernetes.io/managed-by'] === 'kubeflow-upgrader'));
    expect(ours).to.not.match(/AWS_SECRET_ACCESS_KEY|AWS_ACCESS_KEY_ID|RCLONE_CONFIG_\w+_(SECRET_)?ACCESS_KEY/);
    expect(text).to.not.include(KEY);
    expect(text).to.not.include(legacyPassword(KEY));
    for (const other of namespaces.filter((n) => n !== owner.namespace)) expect(text).to.not.include(namespacePassword(KEY, other));
    const movers = eyes.moverSecrets();
    expect(movers.length, 'the owner saw the mover Secret of their namespace').to.be.greaterThan(0);
    if (engine === 'rclone') {
      // the plain-file gateway's password of this run and namespace, and nothing else
      for (const secret of movers) expect(Object.keys(secret)).to.deep.equal(['MOVER_GATEWAY_PASSWORD']);
      return;
    }
    for (const secret of movers) {
      expect(Object.keys(secret).sort()).to.deep.equal(['RESTIC_PASSWORD', 'RESTIC_REPOSITORY', 'store-ca.crt']);
      expect(secret.RESTIC_REPOSITORY).to.match(new RegExp(`^rest:https://${owner.namespace}:[0-9a-f]{64}@kfu-gateway-[0-9a-f]{12}\\.kubeflow\\.svc:8443/${owner.namespace}/$`));
      expect(secret.RESTIC_PASSWORD).to.equal(namespacePassword(KEY, owner.namespace));
    }
  }

  /** The owner watches their namespace of `side` while the action runs; the action must succeed. */
  async function asOwnerSees(side: KubeletCluster, name: string, params: Record<string, unknown>, engine: 'restic' | 'rclone' = 'restic'): Promise<OwnerEyes> {
    const config = new KubeConfig();
    config.loadFromString(side.cluster.kubeconfigFor({ username: owner.user }, owner.namespace));
    const running = action(name, params, side, engine);
    // in a fresh cluster the namespace exists only once the restore made its Profile: the owner starts watching as soon
    // as they may, whose sign is the profile controller's namespaceAdmin RoleBinding, made with the namespace
    const bindings = { group: 'rbac.authorization.k8s.io', resource: 'rolebindings' };
    for (const deadline = Date.now() + 120_000; !side.cluster.api.get(bindings, 'namespaceAdmin', owner.namespace) && Date.now() < deadline;) {
      await new Promise((r) => setTimeout(r, 20));
    }
    const eyes = new OwnerEyes(config, owner.namespace);
    await eyes.open();
    let done: DispatchOutcome;
    try {
      done = await running;
    } finally {
      await eyes.close();
    }
    expect(done.state.actionFailure ?? '', done.stderr.slice(-3000)).to.equal('');
    return eyes;
  }

  /** A fresh cluster for a restore, stopped after `use`. */
  async function inFreshCluster(use: (target: KubeletCluster) => Promise<void>): Promise<void> {
    const target = await startKubeletCluster({ profiles: 0, seed: 91 });
    try {
      await use(target);
    } finally {
      await target.stop();
    }
  }

  it('during a backup: no bucket key, no other namespace\'s password; the one found opens only their own repository', async () => {
    const eyes = await asOwnerSees(source, 'backup-state', { 'include-control-plane': false });
    // the logs are read while the Pods last (a finished mover goes with its Job): here, where restic writes for a while
    expect(eyes.logs.length, 'the owner read the logs of their mover Pods').to.be.greaterThan(0);
    judge(eyes);
    // every password the owner found, tried on every repository: only their own opens
    const found = eyes.moverSecrets().map((s) => s.RESTIC_PASSWORD!);
    for (const namespace of namespaces) {
      for (const password of new Set(found)) expect(await opens(namespace, password), `${namespace} with the owner's password`).to.equal(namespace === owner.namespace);
    }
    // the gateway is gone with the run: the URL the owner kept reaches nothing any more
    expect(source.cluster.api.list({ group: 'batch', resource: 'jobs' }).filter((j) => j.metadata.name?.startsWith('kfu-gateway-'))).to.deep.equal([]);
  });

  it('during a restore into a fresh cluster: nothing of the run at all (the volumes are handed over from the model\'s namespace)', async () => {
    await inFreshCluster(async (target) => {
      judgeRestore(await asOwnerSees(target, 'restore-state', { 'backup-id': 'latest' }));
      // the claims the restore filled were handed over: Bound, their fill mark off
      const claims = target.cluster.api.list({ group: '', resource: 'persistentvolumeclaims' }, { namespace: owner.namespace })
        .filter((c) => (c.spec as { selector?: { matchLabels?: Record<string, string> } }).selector?.matchLabels?.['kubeflow-upgrader/handover'] !== undefined);
      expect(claims.length, 'claims reserved for a hand-over').to.be.greaterThan(0);
      for (const claim of claims) {
        expect((claim.status as { phase?: string }).phase, claim.metadata.name).to.equal('Bound');
        expect(claim.metadata.labels ?? {}).to.not.have.property('kubeflow-upgrader/volume-fill');
      }
    });
  });

  it('with the plain-file movers (volume-mover-engine=rclone): a backup, and its restore into a fresh cluster, the same', async () => {
    const eyes = await asOwnerSees(source, 'backup-state', { 'include-control-plane': false }, 'rclone');
    judge(eyes, 'rclone');
    const jobs = eyes.seen.filter((o) => o.kind === 'Job' && o.metadata.labels?.['app.kubernetes.io/component'] === 'volume-mover');
    expect(jobs.length, 'the owner saw their mover Job').to.be.greaterThan(0);
    expect(jobs.some((job) => JSON.stringify(job).includes('"name":"RCLONE_CONFIG_KFUSTORE_TYPE","value":"sftp"')), 'a plain-file mover reached the gateway').to.equal(true);
    await inFreshCluster(async (target) => judgeRestore(await asOwnerSees(target, 'restore-state', { 'backup-id': 'latest' }, 'rclone')));
  });
});
