// startCluster: the embedded Kubeflow cluster in this process — HTTPS API server, built-in kinds, Kubeflow CRDs,
// simulated controllers and, on request, the generated dataset.
import { randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:https';
import { mkdtemp } from 'node:fs/promises';
import type { AddressInfo, Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { KubeObject } from '../../../src/kube/types.ts';
import { stopOnExit } from '../cleanup.ts';
import { startBackgroundControllers } from './background.ts';
import { Cluster, CRD_REF, NS_REF } from './cluster.ts';
import type { Controller, InProcessApi } from './contract.ts';
import { Faults, seededRandom } from './faults.ts';
import { execUpgradeHandler } from './exec.ts';
import { createHandler } from './http.ts';
import { kubeconfigYaml, writeKubeconfig } from './kubeconfig.ts';
import { makeCertificates } from './tls.ts';
import { DEFAULT_NETWORK, DUAL_STACK_IPV6_RANGE, type ServiceNetwork } from './services.ts';
import { claimClusterDns } from '../net/cluster-dns.ts';
import { TokenAuthenticator, type UserSpec } from './rbac/authentication.ts';
import { installRbac } from './rbac/install.ts';
import type { RbacAuthorizer } from './rbac/authorizer.ts';

export interface ClusterOptions {
  /** where to write the kubeconfig; a fresh temporary file when absent */
  kubeconfigPath?: string;
  /** 0 or absent: any free port */
  port?: number;
  /** apply the generated dataset with this many profiles (default 0) */
  profiles?: number;
  seed?: number;
  /**
   * how the dataset goes in: 'in-process' (default; the same Cluster semantics and controllers, without HTTP, so
   * P=5000 takes minutes, not hours) or 'http' (through @kubernetes/client-node, as users would)
   */
  datasetVia?: 'in-process' | 'http';
  /** run the Kubeflow CRDs' simulated controllers (default true) */
  controllers?: boolean;
  /** install the Kubeflow CRDs (default true) */
  kubeflowCrds?: boolean;
  /** serve the Kubeflow kinds of this Charmed Kubeflow release (kubeflow/releases.ts) instead of the permissive set */
  kubeflowRelease?: import('./kubeflow/releases.ts').Release;
  /**
   * the Kubernetes version the server plays, e.g. '1.29' (default: a release's newest supported version up to 1.31,
   * kubeflow/releases.ts KUBERNETES_MINORS; else 1.31): `/version`, and CRD validation ratcheting only from 1.30
   */
  kubernetesVersion?: string;
  /** serve the CRDs of the YAML files in this directory instead (real CRD files, e.g. a release's) */
  crdDir?: string;
  /** extra CRDs to install at start (tests) */
  crds?: KubeObject[];
  /**
   * the Service IP range and nodePort range (services.ts). Default: the cluster's own loopback network
   * (net/cluster-network.ts: a Service /16 and a Pod /16 in 127.0.0.0/8, with its DNS server, net/cluster-dns.ts), so
   * that the simulated kubelet's Pods reach Services by name and ClusterIP; where this process may not bind the DNS
   * port (not root), DEFAULT_NETWORK (a /16 holding MicroK8s' /24) without a network. A range given here has no
   * network either.
   */
  serviceNetwork?: ServiceNetwork;
  /**
   * a dual-stack cluster: an IPv6 Service range (DUAL_STACK_IPV6_RANGE) beside the IPv4 one, IPv4 primary, as
   * `--service-cluster-ip-range=<v4>,<v6>` makes it (services.ts). Default: single-stack IPv4. The IPv6 addresses are
   * allocated and kept, not reached: the loopback network, DNS and kube-proxy serve the primary address only.
   */
  dualStack?: boolean;
  /** how the simulated controllers behave where a real deployment's settings differ */
  kubeflow?: import('./kubeflow/controllers.ts').KubeflowControllerOptions;
  /**
   * run Katib's, KServe's and the training operator's admission webhooks as their charms ship them
   * (kubeflow/webhook-operators.ts); `ready: false` is a fresh cluster whose operators are not Ready yet
   */
  kubeflowWebhooks?: import('./kubeflow/webhook-operators.ts').KubeflowWebhookOptions;
  /**
   * the cluster has CSI volume snapshots: external-snapshotter's snapshot.storage.k8s.io v1 CRDs (stored as fixtures,
   * kubelet/snapshots/crds) and its snapshot controller (kubelet/snapshots/common-controller.ts). The driver that takes
   * them is the simulated kubelet's (its `snapshots` option). Default off.
   */
  volumeSnapshots?: boolean;
}

export interface RunningCluster {
  kubeconfigPath: string;
  server: string;
  /** the admin's token: kubernetes-admin in system:masters, what kubeadm's admin.conf holds and `juju deploy --trust` hands a charm */
  token: string;
  caCert: string;
  /**
   * a bearer token the server authenticates as `user` (system:authenticated added), whose every request RBAC then
   * decides: e.g. `issueToken({ username: 'alice@example.com' })` for the owner of a Profile
   */
  issueToken(user: UserSpec): string;
  /** a kubeconfig (YAML) for `user` with a token of its own, for @kubernetes/client-node's loadFromString or kubectl */
  kubeconfigFor(user: UserSpec, namespace?: string): string;
  /** the RBAC authorizer the server asks (rbac/authorizer.ts) */
  rbac: RbacAuthorizer;
  /** the Kubeflow operators' webhooks, when `kubeflowWebhooks` asked for them */
  kubeflowWebhooks?: import('./kubeflow/webhook-operators.ts').KubeflowWebhooks;
  api: InProcessApi;
  cluster: Cluster;
  faults: Faults;
  /** make outstanding list continue tokens and old watch positions expire, as etcd compaction does */
  compact(): void;
  /**
   * Resolves once no object has changed for `quietMs`: the simulated controllers have answered the dataset. Upstream
   * they answer late too (a new Katib Experiment's Trials come only after its Suggestion's algorithm service is up,
   * kubeflow/katib pkg/controller.v1beta1/suggestion/suggestion_controller.go), so a test that compares a reference
   * backup with later ones takes the reference after this, or the two capture different moments of the same objects.
   */
  settled(quietMs?: number, timeoutMs?: number): Promise<void>;
  stop(): Promise<void>;
}

const DEFAULT_NAMESPACES = ['default', 'kube-system', 'kube-public', 'kube-node-lease', 'kubeflow'];

export async function startCluster(options: ClusterOptions = {}): Promise<RunningCluster> {
  const seed = options.seed ?? 1;
  const dns = options.serviceNetwork ? undefined : await claimClusterDns().catch(() => undefined);
  const singleStack = options.serviceNetwork ?? (dns ? { ...DEFAULT_NETWORK, serviceCidr: dns.network.serviceCidr } : undefined);
  const serviceNetwork = options.dualStack ? { ...(singleStack ?? DEFAULT_NETWORK), secondaryServiceCidr: DUAL_STACK_IPV6_RANGE } : singleStack;
  const cluster = new Cluster({ random: seededRandom(seed ^ 0x5eed), serviceNetwork, allocationSeed: seed, kubernetesVersion: await kubernetesVersionOf(options) });
  if (dns) {
    cluster.network = dns.network;
    dns.attach(cluster);
  }
  const faults = new Faults(seed);
  for (const name of DEFAULT_NAMESPACES) cluster.create(NS_REF, { apiVersion: 'v1', kind: 'Namespace', metadata: { name } });
  // the API server's own Service, on the first address of the range (kubernetes pkg/controlplane/controller/
  // kubernetesservice: the "kubernetes" Service in "default")
  cluster.create({ group: '', resource: 'services' }, {
    apiVersion: 'v1', kind: 'Service',
    metadata: { name: 'kubernetes', namespace: 'default', labels: { component: 'apiserver', provider: 'kubernetes' } },
    spec: { clusterIP: cluster.services.firstIp, ports: [{ name: 'https', port: 443, protocol: 'TCP', targetPort: 16443 }] },
  });
  const crds = [...(options.kubeflowCrds === false ? [] : await loadKubeflowCrds(options)), ...(options.crds ?? []),
    ...(options.volumeSnapshots ? await (await import('../kubelet/snapshots/refs.ts')).snapshotCrds() : [])];
  for (const crd of crds) cluster.create(CRD_REF, crd);
  if (options.kubeflowCrds !== false) {
    // the aggregated ClusterRoles the Kubeflow charms install (which ones an owner may bind is read from them)
    const { kubeflowClusterRoles } = await import('./kubeflow/cluster-roles.ts');
    for (const role of kubeflowClusterRoles()) cluster.create({ group: 'rbac.authorization.k8s.io', resource: 'clusterroles' }, role);
  }

  // RBAC as a new kube-apiserver has it: bootstrap roles and bindings, escalation checks, the aggregation controller
  const rbac = installRbac(cluster);
  const stops: (() => void)[] = [startBackgroundControllers(cluster), rbac.stop, () => { void dns?.stop(); }];
  if (options.controllers !== false && options.kubeflowCrds !== false) {
    for (const c of await loadKubeflowControllers(options.kubeflow)) stops.push(c.start(cluster));
    const { installPodDefaultWebhook } = await import('./kubeflow/poddefault-webhook.ts');
    stops.push(installPodDefaultWebhook(cluster));
  }
  if (options.volumeSnapshots) {
    const { snapshotController } = await import('../kubelet/snapshots/common-controller.ts');
    stops.push(snapshotController().start(cluster));
  }
  let kubeflowWebhooks: import('./kubeflow/webhook-operators.ts').KubeflowWebhooks | undefined;
  if (options.kubeflowWebhooks) {
    const { installKubeflowWebhooks } = await import('./kubeflow/webhook-operators.ts');
    kubeflowWebhooks = installKubeflowWebhooks(cluster, { release: options.kubeflowRelease, ...options.kubeflowWebhooks });
    stops.push(kubeflowWebhooks.stop);
  }

  const stopControllers = stopOnExit('the embedded cluster\'s controllers', () => { for (const s of stops) s(); });
  const authenticator = new TokenAuthenticator(cluster.store);
  // kubeadm's admin.conf user (cmd/kubeadm/app/phases/kubeconfig: kubernetes-admin, organisation system:masters)
  const token = authenticator.issue({ username: 'kubernetes-admin', groups: ['system:masters'] }, randomBytes(24).toString('base64url'));
  const certs = await makeCertificates();
  let serverUrl = '';
  const server: Server = createServer({ cert: certs.cert, key: certs.key }, createHandler({ cluster, authenticator, authorizer: rbac.authorizer, faults, serverUrl: () => serverUrl }));
  // pods/exec over WebSocket (exec.ts): the only upgrade the server answers
  server.on('upgrade', execUpgradeHandler({ cluster, authenticator, authorizer: rbac.authorizer }));
  const sockets = new Set<Socket>();
  server.on('connection', (s: Socket) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  const stopServer = stopOnExit('the embedded API server', () => new Promise<void>((resolve) => {
    server.close(() => resolve());
    for (const s of sockets) s.destroy();
  }));
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, '127.0.0.1', () => resolve());
  });
  serverUrl = `https://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const kubeconfigPath = options.kubeconfigPath ?? join(await mkdtemp(join(tmpdir(), 'kf-cluster-')), 'kubeconfig');
  await writeKubeconfig(kubeconfigPath, kubeconfigYaml(serverUrl, certs.caCert, token));

  const running: RunningCluster = {
    kubeconfigPath,
    server: serverUrl,
    token,
    caCert: certs.caCert,
    issueToken: (user) => authenticator.issue(user),
    kubeconfigFor: (user, namespace = 'default') => kubeconfigYaml(serverUrl, certs.caCert, authenticator.issue(user), 'embedded', user.username, namespace),
    rbac: rbac.authorizer,
    ...(kubeflowWebhooks ? { kubeflowWebhooks } : {}),
    api: cluster,
    cluster,
    faults,
    compact: () => cluster.store.compact(),
    settled: (quietMs = 1000, timeoutMs = 30_000) => untilQuiet(() => cluster.store.currentRv(), quietMs, timeoutMs),
    stop: async () => {
      await stopControllers();
      await stopServer();
    },
  };
  if ((options.profiles ?? 0) > 0) {
    try {
      if (options.datasetVia === 'http') {
        const { applyDataset } = await import('./kubeflow/dataset.ts');
        await applyDataset(kubeconfigPath, { profiles: options.profiles!, seed });
      } else {
        const { applyDatasetInProcess } = await import('./kubeflow/apply-in-process.ts');
        await applyDatasetInProcess(cluster, { profiles: options.profiles!, seed });
      }
    } catch (e) {
      await running.stop();
      throw e;
    }
  }
  return running;
}

async function loadKubeflowCrds(options: ClusterOptions): Promise<KubeObject[]> {
  if (options.crdDir) {
    const { readCrdDir } = await import('./crd-files.ts');
    return readCrdDir(options.crdDir);
  }
  if (options.kubeflowRelease) {
    const { releaseCrds } = await import('./kubeflow/releases.ts');
    return releaseCrds(options.kubeflowRelease);
  }
  const { kubeflowCrds } = await import('./kubeflow/crds.ts');
  return kubeflowCrds();
}

async function loadKubeflowControllers(options: import('./kubeflow/controllers.ts').KubeflowControllerOptions = {}): Promise<Controller[]> {
  const { kubeflowControllers } = await import('./kubeflow/controllers.ts');
  return kubeflowControllers(options);
}

/** polls a revision until it stays the same for `quietMs`, or fails after `timeoutMs` with the revision it reached */
async function untilQuiet(revision: () => number, quietMs: number, timeoutMs: number): Promise<void> {
  const started = Date.now();
  let last = revision();
  let since = Date.now();
  while (Date.now() - since < quietMs) {
    if (Date.now() - started > timeoutMs) throw new Error(`the embedded cluster kept changing for ${timeoutMs} ms (at resourceVersion ${last})`);
    await new Promise((resolve) => setTimeout(resolve, 50));
    const now = revision();
    if (now !== last) {
      last = now;
      since = Date.now();
    }
  }
}

/** the version asked for, else the newest a release supports that this server's built-in kinds reach (1.31) */
async function kubernetesVersionOf(options: ClusterOptions): Promise<string | undefined> {
  if (options.kubernetesVersion || !options.kubeflowRelease) return options.kubernetesVersion;
  const { KUBERNETES_MINORS } = await import('./kubeflow/releases.ts');
  const { SERVER_VERSION } = await import('./resources.ts');
  const reachable = (KUBERNETES_MINORS[options.kubeflowRelease] ?? []).filter((m) => m <= Number(SERVER_VERSION.minor));
  return reachable.length ? `1.${Math.max(...reachable)}` : undefined;
}
