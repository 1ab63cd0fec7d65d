// Runs one Pod's container on this machine: the image is mapped to a locally installed tool, every mount path (and the
// termination-message path) to a local folder or file, and the environment is resolved from the spec and the API the
// way a kubelet would. Nothing of the test process's own environment leaks in (AWS_CA_BUNDLE in particular).
import { execFile, spawn, spawnSync } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { accessSync, constants as fsConstants, mkdtempSync, mkdirSync, readFileSync, rmSync, statSync, writeFileSync, chmodSync } from 'node:fs';
import { access, mkdtemp, readdir, readFile, realpath, rename, rm } from 'node:fs/promises';
import { constants as osConstants, tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { PassThrough } from 'node:stream';
import type { KubeObject } from '../../../src/kube/types.ts';
import type { ExecProcess, ExecRequest, InProcessApi } from '../cluster/contract.ts';
import type { Probe } from './prober.ts';
import { CONFIGMAPS, SECRETS } from './refs.ts';

export interface ContainerSpec {
  name: string;
  image: string;
  command?: string[];
  args?: string[];
  env?: EnvVar[];
  envFrom?: { prefix?: string; secretRef?: { name: string; optional?: boolean }; configMapRef?: { name: string; optional?: boolean } }[];
  volumeMounts?: { name: string; mountPath: string; readOnly?: boolean; subPath?: string }[];
  terminationMessagePath?: string;
  terminationMessagePolicy?: string;
  workingDir?: string;
  securityContext?: SecurityContext;
  ports?: { name?: string; containerPort: number; protocol?: string }[];
  readinessProbe?: Probe;
}

interface SecurityContext { runAsNonRoot?: boolean; runAsUser?: number }

interface EnvVar {
  name: string;
  value?: string;
  valueFrom?: {
    secretKeyRef?: { name: string; key: string; optional?: boolean };
    configMapKeyRef?: { name: string; key: string; optional?: boolean };
    fieldRef?: { fieldPath: string };
  };
}

interface VolumeSpec {
  name: string;
  persistentVolumeClaim?: { claimName: string; readOnly?: boolean };
  emptyDir?: unknown;
  secret?: { secretName: string; items?: { key: string; path: string }[]; optional?: boolean };
  configMap?: { name: string; items?: { key: string; path: string }[]; optional?: boolean };
  hostPath?: { path: string };
}

// The tools of one official image that the others lack: a container only sees those of its own image, so a script
// that calls mysqldump in the rclone container (or rclone in the MySQL one) fails here as it would in a cluster.
const MYSQL_TOOLS = /^(mysql|mariadb)/;
const RCLONE_TOOLS = /^rclone$/;
const RESTIC_TOOLS = /^restic$/;

/** Images the kubelet can "pull": each maps to the entrypoint of a locally installed tool. */
const RUNTIMES: { image: RegExp; entrypoint: string[]; hides?: RegExp[] }[] = [
  { image: /(^|\/)rclone(:|@|$)/, entrypoint: ['rclone'], hides: [MYSQL_TOOLS, RESTIC_TOOLS] },
  // The official restic image (restic/restic: Alpine with restic and busybox) runs this machine's restic.
  { image: /(^|\/)restic(:|@|$)/, entrypoint: ['restic'], hides: [MYSQL_TOOLS, RCLONE_TOOLS] },
  { image: /(^|\/)(mariadb|mysql)(:|@|$)/, entrypoint: ['mariadb'], hides: [RCLONE_TOOLS, RESTIC_TOOLS] },
  { image: /(^|\/)(busybox|alpine|debian|ubuntu)(:|@|$)/, entrypoint: ['sh'] },
  // The official node image (docker-library/node, e.g. `24/alpine3.22/Dockerfile`: Alpine with Node.js, npm, yarn and
  // busybox; its docker-entrypoint.sh runs `node`): this machine's Node 24 (the test process's PATH finds npm's `node`
  // package first), sh and coreutils; neither rclone, restic nor MySQL tools.
  { image: /(^|\/)node(:|@|$)/, entrypoint: ['node'], hides: [MYSQL_TOOLS, RCLONE_TOOLS, RESTIC_TOOLS] },
  // The official python image: Python with its sqlite3 module, sh and coreutils; neither rclone nor MySQL tools.
  { image: /(^|\/)python(:|@|$)/, entrypoint: ['python3'], hides: [RCLONE_TOOLS, MYSQL_TOOLS, RESTIC_TOOLS] },
];

const shimPaths = new Map<string, Promise<string>>();

/**
 * A PATH for an image: the machine's own PATH unless the image lacks some tool families. Then each PATH folder that
 * holds a hidden tool is replaced, in place, by a folder of symlinks to everything in it but the hidden tools; the other
 * folders stay as they are, and a folder seen before (/bin is /usr/bin) is dropped, so lookups find what they would
 * have found, hidden tools excepted. Like a pulled image, a mirror is kept on the machine and shared by later runs:
 * it is named after what it holds, so a changed folder gets a new one. Nothing here blocks the event loop (the first
 * cut symlinked the whole PATH synchronously on every process's first container: 0.4-1.5 s here, during which no other
 * Pod or API event was served).
 */
function pathFor(image: string, machinePath: string): Promise<string> {
  const hides = RUNTIMES.find((r) => r.image.test(image))?.hides;
  if (!hides) return Promise.resolve(machinePath);
  const cacheKey = `${hides.map(String).join('|')}\n${machinePath}`;
  let pending = shimPaths.get(cacheKey);
  if (!pending) {
    pending = pathHiding(hides, machinePath);
    pending.catch(() => shimPaths.delete(cacheKey));
    shimPaths.set(cacheKey, pending);
  }
  return pending;
}

async function pathHiding(hides: RegExp[], machinePath: string): Promise<string> {
  const seen = new Set<string>();
  const folders: string[] = [];
  for (const folder of machinePath.split(delimiter).filter(Boolean)) {
    let names: string[];
    try {
      const real = await realpath(folder);
      if (seen.has(real)) continue; // an earlier PATH entry is this same folder: it can add nothing
      seen.add(real);
      names = await readdir(folder);
    } catch {
      continue; // a PATH entry that does not exist provides nothing
    }
    const kept = names.filter((name) => !hides.some((h) => h.test(name)));
    if (kept.length === names.length) {
      folders.push(folder);
      continue;
    }
    folders.push(await mirrorWithout(folder, kept));
  }
  return folders.join(delimiter);
}

/** `<tmp>/kubelet-path-<hash>`: symlinks to `kept` names of `folder`, built aside and renamed into place whole. */
async function mirrorWithout(folder: string, kept: string[]): Promise<string> {
  const digest = createHash('sha256').update(`${folder}\0${kept.join('\0')}`).digest('hex').slice(0, 20);
  const mirror = join(tmpdir(), `kubelet-path-${digest}`);
  try {
    await access(mirror);
    return mirror;
  } catch {
    // not built yet on this machine
  }
  const building = await mkdtemp(join(tmpdir(), 'kubelet-path-building-'));
  try {
    // One `ln` for the whole folder: ~1100 symlink calls through Node's thread pool took over a second here.
    await new Promise<void>((resolve, reject) => {
      execFile('ln', ['-s', '-t', building, '--', ...kept.map((name) => join(folder, name))], { maxBuffer: 1024 * 1024 }, (error) => (error ? reject(error) : resolve()));
    });
    await rename(building, mirror);
  } catch (error) {
    await rm(building, { recursive: true, force: true });
    // another process renamed its identical mirror into place first
    if (!['ENOTEMPTY', 'EEXIST'].includes((error as NodeJS.ErrnoException).code ?? '')) throw error;
  }
  return mirror;
}

// An absolute name's trailing dot (`….svc.cluster.local.`) resolves like the name without it, as it does for any
// resolver; mysql-k8s publishes its endpoints that way (canonical/mysql-k8s-operator src/relations/mysql_provider.py,
// `dotappend(socket.getfqdn(...))`).
const CLUSTER_DNS = /\b([a-z0-9](?:[-a-z0-9]*[a-z0-9])?)\.([a-z0-9](?:[-a-z0-9]*[a-z0-9])?)\.svc(?:\.cluster\.local)?\b\.?/g;
const SERVICES = { group: '', resource: 'services' };

/**
 * The stand-ins for servers outside the cluster: a Service without a selector (its backends are not Pods: MinIO or
 * MySQL that a test runs on this machine, on the Service's port) is written as 127.0.0.1 where a container's
 * environment names it as `<service>.<namespace>.svc[.cluster.local][.]`. A Service with a selector is never rewritten:
 * its Pods are reached as in a cluster, through the cluster DNS (tests/support/net/cluster-dns.ts) and kube-proxy
 * (tests/support/net/kube-proxy.ts), so nothing here can stand in for a route the cluster would not have.
 */
export function resolveServiceNames(text: string, api: InProcessApi): string {
  return text.replace(CLUSTER_DNS, (whole, service: string, namespace: string) => {
    try {
      const found = api.get(SERVICES, service, namespace);
      const selector = (found?.spec as { selector?: Record<string, string> } | undefined)?.selector ?? {};
      return found && Object.keys(selector).length === 0 ? '127.0.0.1' : whole;
    } catch {
      return whole;
    }
  });
}

export function isRunnableImage(image: string): boolean {
  return RUNTIMES.some((r) => r.image.test(image));
}

/** A container that cannot start yet (missing Secret, unbound claim): the kubelet retries, as the real one does. */
export class ContainerConfigError extends Error {}

export interface ContainerRun {
  exitCode: number;
  message: string;
  logs: string;
  startedAt: string;
  finishedAt: string;
  /** the most memory the container's processes held at once (resident set), see MemoryPeak */
  peakRssBytes?: number;
}

/** What a finished container used, for benches: the memory a cgroup limit would have had to allow. */
export interface ContainerUsage {
  namespace: string;
  pod: string;
  container: string;
  image: string;
  peakRssBytes: number;
}

const usageListeners = new Set<(usage: ContainerUsage) => void>();

/** Calls `listener` with every container that finishes in this process, whichever simulated cluster ran it. */
export function onContainerFinished(listener: (usage: ContainerUsage) => void): () => void {
  usageListeners.add(listener);
  return () => usageListeners.delete(listener);
}

const MEMORY_FIELDS = /^(VmRSS|VmHWM):\s+(\d+) kB$/gm;

/**
 * The peak resident memory of a container's processes. In a cluster the runtime puts every process a container starts
 * in one memory cgroup, the one limits.memory caps (opencontainers/runc libcontainer/cgroups/fs2/memory.go writes
 * memory.max; torvalds/linux Documentation/admin-guide/cgroup-v2.rst has memory.peak). Here the container is a process
 * tree on this machine, so it is sampled: every `intervalMs`, the tree under the container's first process
 * (/proc/<pid>/task/<tid>/children, torvalds/linux Documentation/filesystems/proc.rst) and the sum of its VmRSS; and
 * each process's VmHWM, its exact high-water mark, so one process's peak between two samples is not missed. The result
 * is the larger of the highest sum and the highest single VmHWM. Unlike a cgroup, it leaves out the page cache.
 */
class MemoryPeak {
  private peak = 0;
  private stopped = false;
  private timer: NodeJS.Timeout | undefined;
  private sampling: Promise<void> = Promise.resolve();

  constructor(private readonly root: number, private readonly intervalMs = 200) {
    this.schedule();
  }

  private schedule(): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      this.sampling = this.sample().catch(() => undefined).then(() => this.schedule());
    }, this.intervalMs);
  }

  private async children(pid: number): Promise<number[]> {
    const tasks = await readdir(`/proc/${pid}/task`).catch(() => [] as string[]);
    const lists = await Promise.all(tasks.map((tid) => readFile(`/proc/${pid}/task/${tid}/children`, 'utf8').catch(() => '')));
    return lists.flatMap((list) => list.split(' ').filter(Boolean).map(Number));
  }

  private async sample(): Promise<void> {
    let sum = 0;
    const queue = [this.root];
    for (let pid = queue.shift(); pid !== undefined; pid = queue.shift()) {
      const status = await readFile(`/proc/${pid}/status`, 'utf8').catch(() => '');
      for (const [, field, kib] of status.matchAll(MEMORY_FIELDS)) {
        const bytes = Number(kib) * 1024;
        if (field === 'VmRSS') sum += bytes;
        else this.peak = Math.max(this.peak, bytes);
      }
      queue.push(...await this.children(pid));
    }
    this.peak = Math.max(this.peak, sum);
  }

  /** Stops sampling (the processes are gone) and gives the peak. */
  async stop(): Promise<number> {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.sampling;
    return this.peak;
  }
}

export interface RunContext {
  api: InProcessApi;
  pod: KubeObject;
  container: ContainerSpec;
  /** local folder of a bound claim */
  claimFolder: (claimName: string) => string | undefined;
  /** the Pod's own folder for an emptyDir volume, shared by all its containers */
  emptyDirFolder: (volumeName: string) => string;
  /** how read-only claim mounts are made: a read-only bind mount where possible (default), or a private copy */
  readOnlyViews?: 'copy' | 'bind-mount';
  /** the nodes' route to the internet, see SimulatedKubeletOptions.egress */
  egress?: { proxyUrl: string; caFile: string } | undefined;
  /** each piece of the container's output as it comes, for its log */
  onOutput?: (chunk: string) => void;
  /** called once the process runs, with a function that kills it and one that runs a command beside it (exec) */
  onStarted?: (kill: () => void, exec: (request: ExecRequest) => ExecProcess) => void;
  /** the Pod's sandbox on the cluster's loopback network (kubelet.ts), when the cluster has one */
  sandbox?: PodSandbox | undefined;
}

/** What a Pod's containers share besides volumes: its IP, hostname and the /etc files its kubelet writes (pod-network.ts). */
export interface PodSandbox {
  podIP: string;
  hostIP: string;
  /** the Pod's hostname, as /etc/hosts names it (the process itself keeps the machine's, see runContainer) */
  hostname: string;
  /** the file for /etc/resolv.conf, undefined to keep the node's */
  resolvConf: string | undefined;
  hosts: string;
  /** what goes direct rather than through the egress proxy: the cluster's names and ranges */
  noProxy: string[];
}

const MAX_MESSAGE = 4096;
const FALLBACK_LINES = 80;
const FALLBACK_BYTES = 2048;
const MAX_LOG = 1024 * 1024;

function decoded(object: KubeObject | undefined, isSecret: boolean): Record<string, string> | undefined {
  if (!object) return undefined;
  const out: Record<string, string> = {};
  const data = (object.data ?? {}) as Record<string, string>;
  for (const [k, v] of Object.entries(data)) out[k] = isSecret ? Buffer.from(v, 'base64').toString('utf8') : v;
  if (isSecret) for (const [k, v] of Object.entries((object.stringData ?? {}) as Record<string, string>)) out[k] = v;
  return out;
}

function source(api: InProcessApi, namespace: string, kind: 'secret' | 'configmap', name: string): Record<string, string> | undefined {
  return decoded(api.get(kind === 'secret' ? SECRETS : CONFIGMAPS, name, namespace), kind === 'secret');
}

export function resolveEnv(api: InProcessApi, pod: KubeObject, container: ContainerSpec, status: { podIP?: string; hostIP?: string } = {}): Record<string, string> {
  const namespace = pod.metadata.namespace ?? '';
  const env: Record<string, string> = {};
  for (const from of container.envFrom ?? []) {
    const ref = from.secretRef ?? from.configMapRef;
    if (!ref) continue;
    const kind = from.secretRef ? 'secret' : 'configmap';
    const values = source(api, namespace, kind, ref.name);
    if (!values) {
      if (ref.optional) continue;
      throw new ContainerConfigError(`${kind} "${ref.name}" not found`);
    }
    for (const [k, v] of Object.entries(values)) env[`${from.prefix ?? ''}${k}`] = v;
  }
  for (const item of container.env ?? []) {
    if (item.value !== undefined || !item.valueFrom) {
      env[item.name] = expandVars(item.value ?? '', env);
      continue;
    }
    const { secretKeyRef, configMapKeyRef, fieldRef } = item.valueFrom;
    const ref = secretKeyRef ?? configMapKeyRef;
    if (ref) {
      const kind = secretKeyRef ? 'secret' : 'configmap';
      const values = source(api, namespace, kind, ref.name);
      // as the kubelet's makeEnvironmentVariables (kubernetes pkg/kubelet/kubelet_pods.go): a missing object and a missing
      // key are told apart
      if (!values && !ref.optional) throw new ContainerConfigError(`${kind} "${ref.name}" not found`);
      const value = values?.[ref.key];
      if (value === undefined) {
        if (ref.optional) continue;
        throw new ContainerConfigError(`couldn't find key ${ref.key} in ${kind === 'secret' ? 'Secret' : 'ConfigMap'} ${namespace}/${ref.name}`);
      }
      env[item.name] = value;
    } else if (fieldRef) {
      // the downward API's fields (kubernetes pkg/kubelet/kubelet_pods.go, podFieldSelectorRuntimeValue: status.podIP
      // and status.hostIP are the sandbox's, known before the containers start)
      const field: Record<string, string | undefined> = {
        'metadata.name': pod.metadata.name, 'metadata.namespace': namespace, 'metadata.uid': pod.metadata.uid,
        'spec.nodeName': (pod.spec as { nodeName?: string }).nodeName,
        'spec.serviceAccountName': (pod.spec as { serviceAccountName?: string }).serviceAccountName,
        'status.podIP': status.podIP, 'status.podIPs': status.podIP, 'status.hostIP': status.hostIP, 'status.hostIPs': status.hostIP,
      };
      env[item.name] = field[fieldRef.fieldPath] ?? '';
    }
  }
  return env;
}

/**
 * `$(NAME)` references in an env value, a command or an argument, as the kubelet expands them
 * (kubernetes/kubernetes third_party/forked/golang/expansion/expand.go, Expand; used by kubelet_pods.go for env and
 * by kuberuntime's ExpandContainerCommandAndArgs): a defined variable is replaced, an undefined one is left as written,
 * `$$` is one `$`, anything else after a `$` stays.
 */
export function expandVars(input: string, env: Record<string, string>): string {
  let out = '';
  for (let i = 0; i < input.length; i++) {
    const c = input[i]!;
    if (c !== '$' || i + 1 >= input.length) {
      out += c;
      continue;
    }
    const next = input[i + 1];
    if (next === '$') {
      out += '$';
      i++;
    } else if (next === '(') {
      const close = input.indexOf(')', i + 2);
      if (close < 0) {
        out += '$(';
        i++;
      } else {
        const name = input.slice(i + 2, close);
        out += env[name] ?? `$(${name})`;
        i = close;
      }
    } else {
      out += `$${next}`;
      i++;
    }
  }
  return out;
}

function writeProjected(folder: string, values: Record<string, string>, items: { key: string; path: string }[] | undefined): void {
  const chosen = items ?? Object.keys(values).map((key) => ({ key, path: key }));
  for (const { key, path } of chosen) {
    const value = values[key];
    if (value === undefined) continue;
    const file = join(folder, path);
    mkdirSync(join(file, '..'), { recursive: true });
    writeFileSync(file, value);
  }
}

function copyTree(from: string, to: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const cp = spawn('cp', ['-a', '--reflink=auto', `${from}/.`, to], { stdio: ['ignore', 'ignore', 'pipe'] });
    let err = '';
    cp.stderr.on('data', (d: Buffer) => { err += d.toString(); });
    cp.on('error', reject);
    cp.on('close', (code) => (code === 0 ? resolve() : reject(new Error(`could not prepare a read-only view: ${err.trim()}`))));
  });
}

let bindMountsWork: boolean | undefined;

/**
 * Read-only mounts are true read-only bind mounts in a private mount namespace where this machine allows it (root and
 * unshare): a write then fails with EROFS as in a real Pod, and the mount costs what a kubelet's does, next to nothing.
 * Elsewhere the container gets a private copy of the tree (cp --reflink=auto: a full copy on ext4), which costs time in
 * proportion to the tree. (An earlier note here had bind-mounted reads ~2 s slower per 64 MiB; re-measured on 64 MiB
 * and 200 files, 4 alternating rounds each, a mover Job took min 2.13 s / median 2.82 s through a bind mount against
 * 2.67 s / 2.84 s through a copy, and rclone's CPU time is the same either way.)
 */
export function canBindMount(): boolean {
  if (bindMountsWork !== undefined) return bindMountsWork;
  const probe = mkdtempSync(join(tmpdir(), 'kubelet-probe-'));
  // The probe checks the semantics, not just the exit code: a mount too old to apply ro to a bind would leave it writable.
  const result = spawnSync('unshare', ['-m', '--propagation', 'private', 'sh', '-c', 'mount --bind -o ro "$0" "$0" && ! touch "$0/.probe" 2>/dev/null', probe], { stdio: 'ignore' });
  rmSync(probe, { recursive: true, force: true }); // holds .probe if the bind mount was writable
  bindMountsWork = result.status === 0;
  return bindMountsWork;
}

// One mount call per view: util-linux applies ro to a bind mount itself (bind, then remount), one exec fewer per Pod.
const BIND_PRELUDE = 'while [ "$1" != "--" ]; do mount --bind -o ro "$1" "$2" || exit 126; shift 2; done; shift; exec "$@"';

/**
 * Replaces each mapped container path where it stands as a whole path (or a prefix of one) in a string. One pass, so
 * a local path that happens to start with another mount path (/tmp/...) is never rewritten twice.
 */
export function rewritePaths(text: string, mapping: [string, string][]): string {
  if (mapping.length === 0) return text;
  const sorted = [...mapping].sort((a, b) => b[0].length - a[0].length);
  const targets = new Map(sorted);
  const alternatives = sorted.map(([from]) => from.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('|');
  const pattern = new RegExp(`(^|[\\s"'=:(>])(${alternatives})(?=$|[/\\s"';:)}])`, 'g');
  return text.replace(pattern, (_m, lead: string, from: string) => `${lead}${targets.get(from) ?? from}`);
}

function entrypointFor(image: string): string[] {
  const runtime = RUNTIMES.find((r) => r.image.test(image));
  if (!runtime) throw new ContainerConfigError(`image ${image} cannot be run by the simulated kubelet`);
  return runtime.entrypoint;
}

/**
 * runAsNonRoot as the kubelet checks it before it starts a container (kubernetes pkg/kubelet/kuberuntime/
 * security_context_others.go verifyRunAsNonRoot): the container's fields over the Pod's; an explicit uid 0 breaks the
 * policy, and without a uid the image's user decides. Every image this kubelet runs is an official one whose user is
 * root (rclone, mysql, python, busybox ...), so that is refused too. The refusal is a CreateContainerConfigError.
 */
function verifyRunAsNonRoot(pod: KubeObject, container: ContainerSpec): void {
  const podContext = ((pod.spec as { securityContext?: SecurityContext }).securityContext) ?? {};
  const nonRoot = container.securityContext?.runAsNonRoot ?? podContext.runAsNonRoot;
  if (!nonRoot) return;
  const uid = container.securityContext?.runAsUser ?? podContext.runAsUser;
  const where = `(pod: "${pod.metadata.name}_${pod.metadata.namespace}(${pod.metadata.uid ?? ''})", container: ${container.name})`;
  if (uid === 0) throw new ContainerConfigError(`container's runAsUser breaks non-root policy ${where}`);
  if (uid === undefined) throw new ContainerConfigError(`container has runAsNonRoot and image will run as root ${where}`);
}

export async function runContainer(ctx: RunContext): Promise<ContainerRun> {
  const { api, pod, container } = ctx;
  verifyRunAsNonRoot(pod, container);
  const scratch = mkdtempSync(join(tmpdir(), 'kubelet-'));
  try {
    const env = resolveEnv(api, pod, container, ctx.sandbox ?? {});
    const volumes = ((pod.spec as { volumes?: VolumeSpec[] }).volumes ?? []);
    const mapping: [string, string][] = [];
    const views: Promise<void>[] = [];
    const readOnlyBinds: [string, string][] = [];
    let index = 0;
    for (const mount of container.volumeMounts ?? []) {
      const volume = volumes.find((v) => v.name === mount.name);
      if (!volume) throw new ContainerConfigError(`volume "${mount.name}" is not defined in the Pod`);
      const local = join(scratch, `mount-${index++}`);
      if (volume.persistentVolumeClaim) {
        const folder = ctx.claimFolder(volume.persistentVolumeClaim.claimName);
        if (!folder) throw new ContainerConfigError(`persistentvolumeclaim "${volume.persistentVolumeClaim.claimName}" is not bound`);
        const base = mount.subPath ? join(folder, mount.subPath) : folder;
        if (mount.readOnly || volume.persistentVolumeClaim.readOnly) {
          // Whatever the container does, the claim's own folder is never written.
          mkdirSync(local, { recursive: true });
          if ((ctx.readOnlyViews ?? 'bind-mount') === 'bind-mount' && canBindMount()) readOnlyBinds.push([base, local]);
          else views.push(copyTree(base, local));
          mapping.push([mount.mountPath, local]);
        } else {
          mapping.push([mount.mountPath, base]);
        }
      } else if (volume.hostPath) {
        mapping.push([mount.mountPath, volume.hostPath.path]);
      } else if (volume.secret || volume.configMap) {
        const kind = volume.secret ? 'secret' : 'configmap';
        const name = volume.secret?.secretName ?? volume.configMap?.name ?? '';
        const values = source(api, pod.metadata.namespace ?? '', kind, name);
        if (!values && !(volume.secret?.optional ?? volume.configMap?.optional)) throw new ContainerConfigError(`${kind} "${name}" not found`);
        mkdirSync(local, { recursive: true });
        writeProjected(local, values ?? {}, volume.secret?.items ?? volume.configMap?.items);
        mapping.push([mount.mountPath, local]);
      } else if (volume.emptyDir !== undefined) {
        const shared = ctx.emptyDirFolder(volume.name);
        mapping.push([mount.mountPath, mount.subPath ? join(shared, mount.subPath) : shared]);
      } else {
        mkdirSync(local, { recursive: true }); // anything else: a fresh folder
        mapping.push([mount.mountPath, local]);
      }
    }
    await Promise.all(views);
    const terminationFile = join(scratch, 'termination-log');
    writeFileSync(terminationFile, '');
    mapping.push([container.terminationMessagePath ?? '/dev/termination-log', terminationFile]);

    const home = join(scratch, 'home');
    mkdirSync(home);
    const processEnv: Record<string, string> = { PATH: await pathFor(container.image, process.env.PATH ?? '/usr/bin:/bin'), HOME: home };
    for (const [k, v] of Object.entries(env)) processEnv[k] = resolveServiceNames(rewritePaths(v, mapping), api);
    delete processEnv.AWS_CA_BUNDLE;
    // Cluster Services are on this machine and go direct; anything else leaves through the egress proxy. (The proxy
    // stands for the nodes' route out; a Pod reaches the cluster's names and addresses without it, as in a cluster.)
    const noProxy = ['127.0.0.1', 'localhost', ...(ctx.sandbox?.noProxy ?? [])].join(',');
    if (ctx.egress) Object.assign(processEnv, { HTTPS_PROXY: ctx.egress.proxyUrl, NO_PROXY: noProxy, SSL_CERT_FILE: ctx.egress.caFile });
    const argv = [...(container.command ?? entrypointFor(container.image)), ...(container.args ?? []).map((a) => expandVars(a, env))]
      .map((a, i) => rewritePaths(container.command && i < container.command.length ? expandVars(a, env) : a, mapping));
    if (argv.length === 0) throw new ContainerConfigError('the container has no command');
    // The Pod's /etc/resolv.conf and /etc/hosts are bind-mounted over the node's in the container's own mount namespace,
    // as a container runtime does (needs root, as canBindMount checks). The hostname is NOT the Pod's: a container here
    // keeps the machine's (no UTS namespace), because tests rely on restic judging a lock left by a killed process of
    // this machine stale at once (restic internal/restic/lock.go, Stale: same hostname and the PID gone). In a cluster
    // each Pod has its own hostname, so a lock another Pod left is stale only after 30 minutes.
    const sandbox = ctx.sandbox && canBindMount() ? ctx.sandbox : undefined;
    if (sandbox) {
      const hostsFile = join(scratch, 'etc-hosts');
      writeFileSync(hostsFile, sandbox.hosts);
      readOnlyBinds.push([hostsFile, '/etc/hosts']);
      if (sandbox.resolvConf !== undefined) {
        const resolvFile = join(scratch, 'etc-resolv.conf');
        writeFileSync(resolvFile, sandbox.resolvConf);
        readOnlyBinds.push([resolvFile, '/etc/resolv.conf']);
      }
    }
    const [file, ...args] = readOnlyBinds.length === 0 ? argv
      : ['unshare', '-m', '--propagation', 'private', 'sh', '-c', BIND_PRELUDE, 'kubelet-mounts', ...readOnlyBinds.flat(), '--', ...argv];
    if (!file) throw new ContainerConfigError('the container has no command');
    chmodSync(scratch, 0o700);

    const cwd = container.workingDir ? rewritePaths(container.workingDir, mapping) : home;
    const execs = new Set<ExecProcess>();
    let ended = false;
    const exec = (request: ExecRequest): ExecProcess => {
      if (ended) throw new Error('the container is not running');
      const running = execInContainer(request, { env: processEnv, cwd, mapping, readOnlyBinds });
      execs.add(running);
      void running.done.then(() => execs.delete(running));
      return running;
    };

    const startedAt = new Date().toISOString();
    let memory: MemoryPeak | undefined;
    const { exitCode, logs } = await new Promise<{ exitCode: number; logs: string }>((resolve) => {
      const child = spawn(file, args, { env: processEnv, cwd, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
      if (child.pid) memory = new MemoryPeak(child.pid);
      let log = '';
      const collect = (d: Buffer) => {
        const chunk = d.toString('utf8');
        log = (log + chunk).slice(-MAX_LOG);
        ctx.onOutput?.(chunk);
      };
      child.stdout.on('data', collect);
      child.stderr.on('data', collect);
      // The container is its own process group, so a kill takes its children (sleep, rclone under sh) along.
      ctx.onStarted?.(() => {
        try {
          if (child.pid) process.kill(-child.pid, 'SIGKILL');
        } catch {
          child.kill('SIGKILL');
        }
      }, exec);
      // An exec'd process lives in its container (its cgroup and namespaces): it ends with it, and none starts after.
      const end = () => {
        ended = true;
        for (const running of execs) running.kill();
      };
      child.on('error', (error) => { end(); resolve({ exitCode: 127, logs: `${log}${error.message}\n` }); });
      child.on('close', (code, signal) => { end(); resolve({ exitCode: code ?? (signal ? 137 : 1), logs: log }); });
    });
    let message = readFileSync(terminationFile).subarray(0, MAX_MESSAGE).toString('utf8');
    if (message === '' && exitCode !== 0 && container.terminationMessagePolicy === 'FallbackToLogsOnError') {
      message = Buffer.from(logs.split('\n').slice(-FALLBACK_LINES).join('\n')).subarray(-FALLBACK_BYTES).toString('utf8');
    }
    const peakRssBytes = (await memory?.stop()) ?? 0;
    const usage = { namespace: pod.metadata.namespace ?? '', pod: pod.metadata.name ?? '', container: container.name, image: container.image, peakRssBytes };
    for (const listener of usageListeners) listener(usage);
    return { exitCode, message, logs, startedAt, finishedAt: new Date().toISOString(), peakRssBytes };
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}

/** Whether `name` is a file this process could execute: a path as it is, a bare name through PATH (execvp's lookup). */
function findExecutable(name: string, path: string, cwd: string): boolean {
  const executable = (file: string) => {
    try {
      accessSync(file, fsConstants.X_OK);
      return statSync(file).isFile();
    } catch {
      return false;
    }
  };
  if (name.includes('/')) return executable(name.startsWith('/') ? name : join(cwd, name));
  return path.split(delimiter).filter(Boolean).some((folder) => executable(join(folder, name)));
}

/**
 * A command run in a running container, as the runtime's exec does (opencontainers/runc `exec`: a new process that
 * joins the container's namespaces and gets the container's process environment, kubernetes/cri-api ExecRequest): here
 * the container's own environment (env, envFrom and valueFrom as the kubelet resolved them at its start, PATH of its
 * image, HOME), its working folder, its mounts as the container's process has them (each mount path in the command
 * is rewritten to the local folder, read-only claims and the Pod's /etc/hosts and /etc/resolv.conf bind-mounted the
 * same way in a private mount namespace). Like the container's paths, a path the command prints is the local one.
 * An executable that is not there never starts, with runc's words (the exec id is random, as containerd's is).
 */
function execInContainer(request: ExecRequest, container: { env: Record<string, string>; cwd: string; mapping: [string, string][]; readOnlyBinds: [string, string][] }): ExecProcess {
  const argv = request.command.map((a) => rewritePaths(a, container.mapping));
  const [name] = argv;
  if (name === undefined || !findExecutable(name, container.env.PATH ?? '', container.cwd)) {
    const id = randomBytes(32).toString('hex');
    const why = name === undefined ? 'exec: no command' : `exec: "${request.command[0]}": ${name.includes('/') ? 'stat ' + request.command[0] + ': no such file or directory' : 'executable file not found in $PATH'}`;
    const empty = () => { const stream = new PassThrough(); stream.end(); return stream; };
    return {
      stdin: undefined, stdout: empty(), stderr: empty(), kill: () => undefined,
      done: Promise.resolve({ startError: `failed to start exec "${id}": OCI runtime exec failed: exec failed: unable to start container process: ${why}: unknown` }),
    };
  }
  const [file, ...args] = container.readOnlyBinds.length === 0 ? argv
    : ['unshare', '-m', '--propagation', 'private', 'sh', '-c', BIND_PRELUDE, 'kubelet-mounts', ...container.readOnlyBinds.flat(), '--', ...argv];
  const child = spawn(file!, args, { env: container.env, cwd: container.cwd, stdio: [request.stdin ? 'pipe' : 'ignore', 'pipe', 'pipe'], detached: true });
  const done = new Promise<{ exitCode: number } | { startError: string }>((resolve) => {
    child.on('error', (error) => resolve({ startError: error.message }));
    // a process a signal ended: the shell's 128 + the signal's number, as runc reports it
    child.on('close', (code, signal) => resolve({ exitCode: code ?? 128 + (signal ? osConstants.signals[signal] : 9) }));
  });
  return {
    stdin: child.stdin ?? undefined, stdout: child.stdout!, stderr: child.stderr!, done,
    kill: () => {
      try {
        if (child.pid) process.kill(-child.pid, 'SIGKILL');
      } catch {
        child.kill('SIGKILL');
      }
    },
  };
}
