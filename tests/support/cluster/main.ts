// npm run cluster -- --kubeconfig <path> [--port N] [--profiles N] [--seed N] [--fault-rate R] [--fault-kinds k,k]
//                     [--kubelet --data-dir DIR] [--kubeflow 1.8|1.9|1.10|1.11 | --crds DIR]
// Runs the embedded Kubeflow cluster in the foreground until SIGTERM or SIGINT. With --kubelet, the simulated kubelet
// runs its Jobs on this machine (so the volume movers work), a default StorageClass binds PVCs at once, and each PVC's
// files live in DIR/<namespace>/<pvc>. The kubeconfig it writes is the one kubectl and client-go read (upstream:
// kubernetes/client-go tools/clientcmd/api/v1), with the cluster's own CA and a bearer token. --kubeflow serves the
// Kubeflow kinds of one Charmed Kubeflow release (kubeflow/releases.ts); --crds serves the CRD files of a directory.
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { FAULT_KINDS, type FaultKind } from './faults.ts';
import { startCluster } from './index.ts';
import { isRelease, RELEASES } from './kubeflow/releases.ts';

function fail(message: string): never {
  process.stderr.write(`${message}\n`);
  process.exit(2);
}

function integer(name: string, value: string | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0) fail(`--${name} must be a non-negative integer, got "${value}".`);
  return n;
}

const { values } = parseArgs({
  options: {
    kubeconfig: { type: 'string' },
    port: { type: 'string' },
    profiles: { type: 'string' },
    seed: { type: 'string' },
    'fault-rate': { type: 'string' },
    'fault-kinds': { type: 'string' },
    'fault-latency-ms': { type: 'string' },
    kubelet: { type: 'boolean' },
    'data-dir': { type: 'string' },
    kubeflow: { type: 'string' },
    crds: { type: 'string' },
  },
  strict: true,
});
if (!values.kubeconfig) fail('--kubeconfig <path> is required: the cluster writes its kubeconfig there.');
const rate = values['fault-rate'] === undefined ? 0 : Number(values['fault-rate']);
if (!(rate >= 0 && rate <= 1)) fail(`--fault-rate must be between 0 and 1, got "${values['fault-rate']}".`);
const kinds = (values['fault-kinds'] ?? 'throttle,error,unavailable').split(',').map((k) => k.trim()) as FaultKind[];
for (const k of kinds) if (!FAULT_KINDS.includes(k)) fail(`--fault-kinds: unknown fault "${k}"; known: ${FAULT_KINDS.join(', ')}.`);

if (values.kubelet && !values['data-dir']) fail('--kubelet needs --data-dir <dir>: each PVC\'s files live in <dir>/<namespace>/<pvc>.');
if (values['data-dir'] && !values.kubelet) fail('--data-dir is only used with --kubelet.');

const release = values.kubeflow;
if (release !== undefined && !isRelease(release)) fail(`--kubeflow must be one of ${RELEASES.join(', ')}, got "${release}".`);
if (release !== undefined && values.crds) fail('--kubeflow and --crds both choose the CRDs: give one.');

const cluster = await startCluster({
  ...(release ? { kubeflowRelease: release } : {}),
  ...(values.crds ? { crdDir: resolve(values.crds) } : {}),
  kubeconfigPath: values.kubeconfig,
  port: integer('port', values.port, 0),
  profiles: integer('profiles', values.profiles, 0),
  seed: integer('seed', values.seed, 1),
});
let stopKubelet: (() => void) | undefined;
if (values.kubelet) {
  const { simulatedKubelet, storageClass } = await import('../kubelet/index.ts');
  const dataDir = resolve(values['data-dir']!);
  cluster.api.create({ group: 'storage.k8s.io', resource: 'storageclasses' }, storageClass('standard', { volumeBindingMode: 'Immediate', isDefault: true }));
  stopKubelet = simulatedKubelet({ dataDir }).start(cluster.api);
  process.stdout.write(`simulated kubelet running Jobs; PVC files in ${dataDir}/<namespace>/<pvc>\n`);
}
// faults start after the dataset is in, so the dataset itself is never the thing that fails
for (const k of kinds) if (rate > 0) cluster.faults.setRate(k, rate / kinds.length);
if (values['fault-latency-ms']) cluster.faults.latencyMs = integer('fault-latency-ms', values['fault-latency-ms'], 200);
process.stdout.write(`cluster ready at ${cluster.server}; kubeconfig ${cluster.kubeconfigPath}; ${cluster.cluster.store.totalObjects()} objects\n`);
const shutdown = () => {
  stopKubelet?.();
  void cluster.stop().then(() => process.exit(0));
};
process.on('SIGTERM', shutdown);
process.on('SIGINT', shutdown);
