// How much listPages costs over the bare minimum: every listable resource of the embedded cluster, listed once with
// KubeClient.listPages and once with plain https.request + JSON.parse, same page size, same run, best of rounds.
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import https from 'node:https';
import http from 'node:http';
import { join } from 'node:path';
import { KubeConfig } from '@kubernetes/client-node';
import { KubeClient } from '../src/kube/client.ts';
import { resourcePath } from '../src/kube/paths.ts';
import type { ApiResource } from '../src/kube/types.ts';
import type { BenchRow } from './types.ts';


const pageSize = 500;

async function startClusterProcess(workDir: string, profiles: number): Promise<{ kubeconfigPath: string; stop: () => void }> {
  const kubeconfigPath = join(workDir, 'kube-list-bench.kubeconfig');
  const child = spawn(join(process.cwd(), 'node_modules/.bin/node'), ['--import', 'tsx', 'tests/support/cluster/main.ts', '--kubeconfig', kubeconfigPath, '--profiles', String(profiles)], { stdio: ['ignore', 'ignore', 'inherit'] });
  const stop = () => {
    if (child.exitCode === null) child.kill('SIGTERM');
  };
  const deadline = Date.now() + 300_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`The embedded cluster exited with code ${child.exitCode} before it was ready.`);
    if (existsSync(kubeconfigPath)) {
      try {
        const client = await KubeClient.load({ kubeconfig: kubeconfigPath, retry: { maxAttempts: 1 } });
        await client.discover();
        client.close();
        return { kubeconfigPath, stop };
      } catch {
        // not serving yet
      }
    }
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  stop();
  throw new Error('The embedded cluster did not become ready within 300s.');
}

/** The baseline: what any client must do at least — request each page, read it, parse it. */
async function rawList(config: KubeConfig, resources: ApiResource[]): Promise<number> {
  const options: https.RequestOptions = {};
  await config.applyToHTTPSOptions(options);
  const base = new URL(config.getCurrentCluster()!.server);
  const secure = base.protocol === 'https:';
  const agent = secure ? new https.Agent({ keepAlive: true, ca: options.ca, cert: options.cert, key: options.key, rejectUnauthorized: options.rejectUnauthorized ?? true }) : new http.Agent({ keepAlive: true });
  (options.agent as http.Agent | undefined)?.destroy?.();
  const headers = { Accept: 'application/json', ...(options.headers as Record<string, string>) };
  const get = (path: string) =>
    new Promise<{ items?: unknown[]; metadata?: { continue?: string } }>((resolve, reject) => {
      const request = (secure ? https : http).request({ hostname: base.hostname, port: base.port, path, headers, agent }, (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (c: Buffer) => chunks.push(c));
        response.on('end', () => (response.statusCode === 200 ? resolve(JSON.parse(Buffer.concat(chunks).toString('utf8'))) : reject(new Error(`${path}: ${response.statusCode}`))));
        response.on('error', reject);
      });
      request.on('error', reject);
      request.end();
    });
  let objects = 0;
  for (const resource of resources) {
    let token: string | undefined;
    do {
      const page = await get(`${resourcePath(resource)}?limit=${pageSize}${token ? `&continue=${encodeURIComponent(token)}` : ''}`);
      objects += page.items?.length ?? 0;
      token = page.metadata?.continue || undefined;
    } while (token);
  }
  agent.destroy();
  return objects;
}

async function clientList(client: KubeClient, resources: ApiResource[]): Promise<number> {
  let objects = 0;
  for (const resource of resources) for await (const page of client.listPages(resource, { limit: pageSize })) objects += page.length;
  return objects;
}

async function timed(run: () => Promise<number>): Promise<{ objects: number; seconds: number }> {
  const started = process.hrtime.bigint();
  const objects = await run();
  return { objects, seconds: Number(process.hrtime.bigint() - started) / 1e9 };
}

export default async function kubeListBench(opts: { profiles: number; json: boolean; quick: boolean; workDir: string }): Promise<BenchRow[]> {
  const cluster = await startClusterProcess(opts.workDir, opts.profiles);
  const client = await KubeClient.load({ kubeconfig: cluster.kubeconfigPath, pageSize });
  try {
    const config = new KubeConfig();
    config.loadFromFile(cluster.kubeconfigPath);
    const resources = (await client.discover()).filter((r) => r.verbs.includes('list'));
    const rounds = opts.quick ? 1 : 3;
    // Throughput of each path from its own count: the simulated controllers may still be settling between passes.
    let bestRaw = 0;
    let bestClient = 0;
    let objects = 0;
    await rawList(config, resources); // warm both paths: JIT, TLS sessions, server caches
    await clientList(client, resources);
    for (let round = 0; round < rounds; round++) {
      const raw = await timed(() => rawList(config, resources));
      const ours = await timed(() => clientList(client, resources));
      objects = ours.objects;
      bestRaw = Math.max(bestRaw, raw.objects / raw.seconds);
      bestClient = Math.max(bestClient, ours.objects / ours.seconds);
    }
    const ratio = bestClient / bestRaw;
    const note = `P=${opts.profiles}, ${resources.length} resources, ${objects} objects, page ${pageSize}, best of ${rounds}`;
    return [
      { bench: 'kube-list', metric: 'raw LIST throughput', value: Math.round(bestRaw), unit: 'objects/s', note },
      { bench: 'kube-list', metric: 'listPages throughput', value: Math.round(bestClient), unit: 'objects/s', note },
      { bench: 'kube-list', metric: 'listPages / raw LIST throughput', value: Number(ratio.toFixed(3)), unit: 'ratio', target: '>= 0.90', verdict: ratio >= 0.9 ? 'met' : 'missed', note },
    ];
  } finally {
    client.close();
    cluster.stop();
  }
}
