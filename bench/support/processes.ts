// The processes a scale bench runs: the embedded cluster (tests/support/cluster/main.ts) and one measured client
// (bench/support/client.ts), each its own Node process, so timings and RSS are never shared with the runner.
import { execa, type ResultPromise } from 'execa';
import { join } from 'node:path';
import { ENGINE_ENV, ENGINE_NODE_FLAGS } from '../../src/node-flags.ts';
import { clientBundle } from './bundle.ts';
import type { ClientResult } from './client.ts';

const node = join(process.cwd(), 'node_modules/.bin/node');

export interface ClusterProcess {
  kubeconfigPath: string;
  pid: number;
  /** objects the cluster held when it said it was ready */
  objects: number;
  readySeconds: number;
  stop(): Promise<void>;
}

export async function startClusterProcess(kubeconfigPath: string, profiles: number, seed = 1): Promise<ClusterProcess> {
  const started = performance.now();
  // KFU_BENCH_CLUSTER_FLAGS: node flags for the embedded cluster's processes only (a CPU profile of the server), never
  // set for the figures the bench reports
  const flags = process.env.KFU_BENCH_CLUSTER_FLAGS?.split(' ').filter(Boolean) ?? [];
  const child: ResultPromise = execa(node, [...flags, '--import', 'tsx', 'tests/support/cluster/main.ts', '--kubeconfig', kubeconfigPath, '--profiles', String(profiles), '--seed', String(seed)], { stdout: 'pipe', stderr: 'inherit', reject: false });
  let exited = false;
  void child.then(() => (exited = true));
  const stop = async () => {
    if (!exited) child.kill('SIGTERM');
    await child;
  };
  try {
    const objects = await new Promise<number>((resolve, reject) => {
      let seen = '';
      child.stdout!.on('data', (d: Buffer) => {
        seen += d.toString();
        const ready = /cluster ready .*; (\d+) objects/.exec(seen);
        if (ready) resolve(Number(ready[1]));
      });
      void child.then((r) => reject(new Error(`the embedded cluster exited (code ${r.exitCode}) before it was ready`)));
    });
    return { kubeconfigPath, pid: child.pid!, objects, readySeconds: (performance.now() - started) / 1000, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}

/** Current RSS of a process, from ps. */
export async function rssMiB(pid: number): Promise<number> {
  const { stdout } = await execa('ps', ['-o', 'rss=', '-p', String(pid)]);
  return Math.round(Number(stdout.trim()) / 1024);
}

/** A client bundle other than this checkout's, with the V8 flags and environment of its own checkout. */
export interface ClientBuild {
  bundle: string;
  flags: readonly string[];
  env: Readonly<Record<string, string>>;
}

/** `build`: another checkout's client (bench/alternate.ts runs the code before a change beside this one) */
export async function runClient(mode: string, kubeconfigPath: string, s3File: string, backupId?: string, build?: ClientBuild): Promise<ClientResult> {
  // the client as an esbuild bundle like the shipped charm: tsx alone added ~130 MiB to every client's peak RSS
  // with the V8 flags the charm's dispatch and the CLI start the engines with, so RSS is the product's
  // KFU_BENCH_CLIENT_FLAGS adds node flags to the measured client only (e.g. `--cpu-prof --cpu-prof-dir=<dir>`, which
  // NODE_OPTIONS refuses), for finding where its time goes; never set for the figures the bench reports
  const extra = process.env.KFU_BENCH_CLIENT_FLAGS?.split(' ').filter(Boolean) ?? [];
  const flags = [...(build?.flags ?? ENGINE_NODE_FLAGS), ...extra];
  const bundle = build?.bundle ?? (await clientBundle());
  const { stdout } = await execa(node, [...flags, bundle, mode, kubeconfigPath, s3File, ...(backupId ? [backupId] : [])], { stderr: 'inherit', env: { ...(build?.env ?? ENGINE_ENV) } });
  const last = stdout.trim().split('\n').at(-1) ?? '';
  return JSON.parse(last) as ClientResult;
}
