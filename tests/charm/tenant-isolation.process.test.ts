// Issue 39, as a profile's owner sees a backup and a restore of the whole cluster (real ./dispatch, restic movers,
// encryption-key set). The owner acts with the RBAC Kubeflow gives them: the profile controller's `namespaceAdmin`
// RoleBinding to kubeflow-admin in their namespace (kubeflow/kubeflow components/profile-controller, canonical/
// kubeflow-roles-operator src/manifests/kubeflow-roles.yaml), through @kubernetes/client-node over TLS. While the run
// goes, they watch every Secret, Job and Pod of their namespace. Everything they saw is then searched for the bucket's
// keys and the encryption key, and every restic password they found is tried, by restic itself, on every other
// namespace's repository: none opens. Their own mover reaches only their own repository, through the gateway's URL.
// The owner also execs into every Pod the run starts in their namespace while it runs (pods/exec is theirs through
// kubeflow-admin: kubeflow-kubernetes-edit grants get and create on it, aggregated into kubeflow-edit and so into
// kubeflow-admin), over WebSocket as client-node's Exec speaks it: they read its environment and every file under its
// volume mounts, which joins what is searched and what is tried; and, from inside the mover while the run's gateway
// serves, they try the gateway credential they found on every namespace's repository or folder there (their own as
// the probe's control, another's with their user or with the other namespace's): only their own opens. An exec that
// read nothing fails the test; a plain-file mover lasts about a second, so there only the probes that finished count.
// A restore hands each filled volume over from the model's namespace (src/volumes/rebind.ts): the owner sees nothing of it.
import { expect } from 'chai';
import { CoreV1Api, Exec, KubeConfig, Watch, type V1Status } from '@kubernetes/client-node';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
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

/** One exec of the owner into a running Pod of the run: all it printed, and the Status it ended with. */
interface OwnerExec {
  pod: string;
  output: string;
  status: V1Status | undefined;
  error: string | undefined;
}

/** A probe's result line, printed by the exec script: `== probe <label> <exit code> <restic's words>`. */
const PROBE = /^== probe (\S+) (\d+) (.*)$/gm;

/**
 * What the owner runs in a Pod: its environment, every file under each of its volume mounts (the first MiB of each),
 * then the gateway credential it holds, tried on the run's gateway while it serves: where it holds a restic repository
 * (a restic mover), restic on the repository it names and on the URL with another namespace's path, with their user or
 * with the other namespace's, trusting the CA file of the Pod's Secret volumes; where it holds an sftp remote and its
 * password (a plain-file mover), rclone on its own root, on `../<ns>` and `/<ns>`, and as the other namespace's user.
 * A refused connection is tried again four times a second (a restore's gateway may start after its movers, which do
 * the same); the probes run side by side, since the mover's end ends the exec. Nothing here knows the product's paths: they come from the Pod's spec and environment.
 */
function ownerScript(pod: KubeObject, own: string, namespaces: string[]): string {
  const container = ((pod.spec as { containers: { volumeMounts?: { name: string; mountPath: string }[] }[] }).containers[0])!;
  const volumes = (pod.spec as { volumes?: { name: string; secret?: unknown }[] }).volumes ?? [];
  const mounts = (container.volumeMounts ?? []).map((m) => m.mountPath);
  const secretMounts = (container.volumeMounts ?? []).filter((m) => volumes.find((v) => v.name === m.name)?.secret).map((m) => m.mountPath);
  const others = namespaces.filter((ns) => ns !== own);
  const resticProbes = [
    'probe own "$RESTIC_REPOSITORY"',
    ...others.flatMap((ns) => [
      `probe ${ns}:own-user "$(printf %s "$RESTIC_REPOSITORY" | sed 's#/${own}/$#/${ns}/#')"`,
      `probe ${ns}:its-user "$(printf %s "$RESTIC_REPOSITORY" | sed 's#^rest:https://${own}:#rest:https://${ns}:#; s#/${own}/$#/${ns}/#')"`,
    ]),
  ];
  const sftpProbes = [
    'probe own "" ""',
    ...others.flatMap((ns) => [`probe ${ns}:parent "../${ns}" ""`, `probe ${ns}:root "/${ns}" ""`, `probe ${ns}:its-user "" "${ns}"`]),
  ];
  const retrying = (command: string) => [
    'probe() {',
    '  tries=0',
    '  while :; do',
    `    out=$(${command} 2>&1); st=$?`,
    '    case "$out" in *"connection refused"*) tries=$((tries + 1)); if [ "$tries" -lt 240 ]; then sleep 0.25; continue; fi ;; esac',
    '    break',
    '  done',
    '  echo "== probe $1 $st $(printf %s "$out" | tr "\\n" " " | cut -c1-300)"',
    '}',
  ];
  return [
    'echo "== env"; env',
    `find ${mounts.join(' ')} -type f -exec sh -c 'for f; do echo "== file $f"; head -c 1048576 "$f"; echo; done' sh {} + 2>/dev/null`,
    'echo "== read"',
    'case "${RESTIC_REPOSITORY:-}" in rest:*)',
    `  ca=$(find ${secretMounts.length ? secretMounts.join(' ') : '/nonexistent'} -type f -name '*.crt' 2>/dev/null | head -n 1)`,
    ...retrying('restic --no-lock --no-cache ${ca:+--cacert "$ca"} -r "$2" cat config'),
    // all at once (each line is one short write): a mover lasts seconds, and its end ends the exec
    ...resticProbes.map((p) => `  ${p} &`),
    '  wait',
    '  echo "== probed" ;;',
    'esac',
    'remote=$(env | sed -n "s/^RCLONE_CONFIG_\\([A-Z0-9_]*\\)_TYPE=sftp\\$/\\1/p" | head -n 1)',
    'if [ -n "$remote" ] && [ -n "${MOVER_GATEWAY_PASSWORD:-}" ]; then',
    '  name=$(printf %s "$remote" | tr "A-Z" "a-z")',
    '  known=$(mktemp)',
    '  printf "%s\\n" "${MOVER_KNOWN_HOSTS:-}" > "$known"',
    '  export "RCLONE_CONFIG_${remote}_KNOWN_HOSTS_FILE=$known"',
    '  export "RCLONE_CONFIG_${remote}_PASS=$(printf %s "$MOVER_GATEWAY_PASSWORD" | rclone obscure -)"',
    // one try each (the mover's environment asks rclone for retries): a refusal is an answer, and the mover is brief
    '  set -- --retries 1 --low-level-retries 1 --max-depth 1',
    '  flags="$*"',
    ...retrying('if [ -n "$3" ]; then env "RCLONE_CONFIG_${remote}_USER=$3" rclone lsf $flags "$name:$2"; else rclone lsf $flags "$name:$2"; fi'),
    ...sftpProbes.map((p) => `  ${p} &`),
    '  wait',
    '  echo "== probed"',
    'fi',
  ].join('\n');
}

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
  /** every exec into a Pod of the run, started when the watch showed the Pod Running */
  readonly execs: OwnerExec[] = [];
  private readonly execed = new Set<string>();
  constructor(private readonly config: KubeConfig, private readonly namespace: string, private readonly namespaces: string[]) {}

  async open(): Promise<void> {
    const watch = new Watch(this.config);
    // a watch without a resourceVersion starts with every object there is, then follows each change
    for (const path of [`/api/v1/namespaces/${this.namespace}/secrets`, `/apis/batch/v1/namespaces/${this.namespace}/jobs`, `/api/v1/namespaces/${this.namespace}/pods`]) {
      this.aborts.push(await watch.watch(path, {}, (_type, object: KubeObject) => {
        this.seen.push(object);
        if (object.kind === 'Pod') {
          this.readLog(object);
          this.execInto(object);
        }
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

  /**
   * The run's Pod, exec'd into the moment the watch shows it Running (its sign that the container runs; a mover
   * lasts seconds), once. The owner's pods/exec right is what decides; a refusal or a container already gone is kept.
   */
  private execInto(pod: KubeObject): void {
    const name = pod.metadata.name!;
    if ((pod.status as { phase?: string } | undefined)?.phase !== 'Running' || this.execed.has(name)) return;
    if (pod.metadata.labels?.['app.kubernetes.io/managed-by'] !== 'kubeflow-upgrader') return;
    this.execed.add(name);
    const container = (pod.spec as { containers: { name: string }[] }).containers[0]!.name;
    const record: OwnerExec = { pod: name, output: '', status: undefined, error: undefined };
    this.execs.push(record);
    const stdout = new PassThrough();
    stdout.on('data', (d: Buffer) => { record.output += d.toString(); });
    const stderr = new PassThrough();
    stderr.on('data', (d: Buffer) => { record.output += d.toString(); });
    this.reading.push(new Exec(this.config).exec(this.namespace, name, container, ['sh', '-c', ownerScript(pod, this.namespace, this.namespaces)], stdout, stderr, null, false, (status) => { record.status = status; })
      .then((ws) => new Promise<void>((resolve) => {
        if (ws.readyState === 3) return resolve();
        ws.on('close', () => resolve());
      }), (error: Error) => { record.error = error.message; }));
  }

  /** the execs that read the whole environment and every mounted file (the `== read` mark) */
  completeExecs(): OwnerExec[] {
    return this.execs.filter((e) => e.output.includes('\n== read\n'));
  }

  /** what each probe of a gateway credential gave: label (`own`, `<ns>:own-user`, `<ns>:its-user`) and exit code */
  probes(): { pod: string; label: string; exitCode: number; words: string }[] {
    return this.execs.flatMap((e) => [...e.output.matchAll(PROBE)].map((m) => ({ pod: e.pod, label: m[1]!, exitCode: Number(m[2]), words: m[3]! })));
  }

  /** every restic password, gateway password and gateway URL's password the owner's execs printed in an environment */
  execPasswords(): string[] {
    return this.execs.flatMap((e) => [
      ...[...e.output.matchAll(/^(?:RESTIC_PASSWORD|MOVER_GATEWAY_PASSWORD)=(.*)$/gm)].map((m) => m[1]!),
      ...[...e.output.matchAll(/^RESTIC_REPOSITORY=rest:https:\/\/[^:@/]+:([^@]+)@/gm)].map((m) => m[1]!),
    ]);
  }

  async close(): Promise<void> {
    this.closing = true;
    for (const a of this.aborts) a.abort();
    await Promise.all(this.reading);
  }

  /** Every string the owner could read: Secret data decoded, every other field as JSON, the Pods' logs, what exec read. */
  text(): string {
    return [...this.logs, ...this.execs.map((e) => `${e.output}\n${JSON.stringify(e.status ?? e.error ?? '')}`), ...this.seen.map((o) => {
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

  function action(name: string, params: Record<string, unknown>, side: KubeletCluster, engine: 'restic' | 'rclone' = 'restic', extra: Record<string, string> = {}): Promise<DispatchOutcome> {
    const state = emptyState({
      relations: [s3Relation(track1Data(s3, BUCKET))], actionParams: params,
      config: { 'restore-wait-timeout': 120, 'volume-mover-engine': engine, 'encryption-key': KEY_SECRET, ...extra },
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

  /**
   * `briefMovers`: the movers last about a second (a restore's of these small volumes, or any plain-file mover), and
   * their end ends the owner's exec, so only the probes that finished in time are judged and none may be required.
   */
  function judge(eyes: OwnerEyes, engine: 'restic' | 'rclone' = 'restic', briefMovers = engine === 'rclone'): void {
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
    // not vacuous: the owner did get into a running Pod of the run and read all of it
    expect(eyes.completeExecs().length, `an exec of the owner read a running Pod of the run: ${JSON.stringify(eyes.execs.map((e) => ({ pod: e.pod, status: e.status, error: e.error })))}`).to.be.greaterThan(0);
    const movers = eyes.moverSecrets();
    expect(movers.length, 'the owner saw the mover Secret of their namespace').to.be.greaterThan(0);
    // the gateway credential, tried from inside a mover while the gateway served: the control (their own repository
    // or folder) opens, or (a first backup, before its restic mover's `init`) the gateway let them in and found no
    // repository yet: either way the credential passed the gateway, so the probe works; another namespace's repository
    // or folder is refused by the gateway itself (restic: 403 with their user, 401 with the other's; sftp: the other's
    // folder is not in their root, the other's user does not log in), never merely absent
    // A plain-file mover of these small volumes lasts about a second and its end ends the exec (137): there the probes
    // that finished in time are judged, and none may be required.
    const probes = eyes.probes();
    const passed = (p: { exitCode: number; words: string }) => p.exitCode === 0 || (engine === 'restic' && /<config\/> does not exist/.test(p.words));
    if (!briefMovers) {
      expect(probes.some((p) => p.label === 'own' && passed(p)), `an exec of the owner tried the gateway while it served: ${JSON.stringify(probes)}`).to.equal(true);
      expect(probes.filter((p) => p.label !== 'own').length, 'the owner tried the gateway credential on another namespace').to.be.greaterThan(0);
    }
    for (const p of probes.filter((p) => p.label === 'own')) expect(passed(p), `their own, from ${p.pod}: ${p.words}`).to.equal(true);
    const refused = engine === 'restic' ? /unexpected HTTP response \((401|403)\)/ : /directory not found|unable to authenticate/;
    for (const p of probes.filter((p) => p.label !== 'own')) {
      expect(p.exitCode, `${p.label} from ${p.pod}: ${p.words}`).to.not.equal(0);
      expect(p.words, `${p.label} from ${p.pod}`).to.match(refused);
    }
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

  /** every password the owner found (Secrets, and what exec printed), tried by restic on every other namespace's repository: none opens */
  async function tryEveryPassword(eyes: OwnerEyes): Promise<void> {
    const gatewayPassword = (url: string | undefined) => /^rest:https:\/\/[^:@/]+:([^@]+)@/.exec(url ?? '')?.[1];
    const found = new Set([
      ...eyes.moverSecrets().flatMap((s) => [s.RESTIC_PASSWORD!, gatewayPassword(s.RESTIC_REPOSITORY)].filter((p): p is string => p !== undefined)),
      ...eyes.execPasswords(),
    ]);
    expect(found.size, 'the owner found passwords to try').to.be.greaterThan(1);
    for (const namespace of namespaces.filter((n) => n !== owner.namespace)) {
      for (const password of found) expect(await opens(namespace, password), `${namespace} with a password the owner found`).to.equal(false);
    }
    // the control: the restic password of their mover opens their own repository (a gateway's password opens none)
    for (const password of new Set(eyes.moverSecrets().map((s) => s.RESTIC_PASSWORD!))) expect(await opens(owner.namespace, password), 'their own repository').to.equal(true);
  }

  /** The owner watches their namespace of `side` while the action runs; the action must succeed. */
  async function asOwnerSees(side: KubeletCluster, name: string, params: Record<string, unknown>, engine: 'restic' | 'rclone' = 'restic', extra: Record<string, string> = {}): Promise<OwnerEyes> {
    const config = new KubeConfig();
    config.loadFromString(side.cluster.kubeconfigFor({ username: owner.user }, owner.namespace));
    const running = action(name, params, side, engine, extra);
    // in a fresh cluster the namespace exists only once the restore made its Profile: the owner starts watching as soon
    // as they may, whose sign is the profile controller's namespaceAdmin RoleBinding, made with the namespace
    const bindings = { group: 'rbac.authorization.k8s.io', resource: 'rolebindings' };
    for (const deadline = Date.now() + 120_000; !side.cluster.api.get(bindings, 'namespaceAdmin', owner.namespace) && Date.now() < deadline;) {
      await new Promise((r) => setTimeout(r, 20));
    }
    const eyes = new OwnerEyes(config, owner.namespace, namespaces);
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
    await tryEveryPassword(eyes);
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

  it('during a restore whose movers run in the profile namespace (volume-restore-by=in-namespace): no bucket key, no other namespace\'s password, their own exec\'d mover reaching only their own repository', async () => {
    await inFreshCluster(async (target) => {
      const eyes = await asOwnerSees(target, 'restore-state', { 'backup-id': 'latest' }, 'restic', { 'volume-restore-by': 'in-namespace' });
      judge(eyes, 'restic', true);
      await tryEveryPassword(eyes);
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
