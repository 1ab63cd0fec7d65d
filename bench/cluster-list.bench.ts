// Raw paginated LIST throughput of the embedded API server (objects/s), the cluster in its own process so the
// numbers are the server's, not shared with the client's event loop.
import { execa } from 'execa';
import { readFile } from 'node:fs/promises';
import { Agent, request } from 'node:https';
import { join } from 'node:path';
import { parse } from 'yaml';
import type { BenchRow } from './types.ts';


interface Kubeconfig {
  clusters: { cluster: { server: string; 'certificate-authority-data': string } }[];
  users: { user: { token: string } }[];
}

const agent = new Agent({ keepAlive: true, maxSockets: 1 });

function get(url: string, ca: string, token: string): Promise<{ items: unknown[]; metadata: { continue?: string } }> {
  return new Promise((resolve, reject) => {
    const req = request(url, { ca, agent, headers: { Authorization: `Bearer ${token}`, Accept: 'application/json' } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        if (res.statusCode !== 200) return reject(new Error(`LIST ${url} answered ${res.statusCode}`));
        resolve(JSON.parse(Buffer.concat(chunks).toString('utf8')));
      });
    });
    req.on('error', reject);
    req.end();
  });
}

const LISTED = ['/api/v1/configmaps', '/api/v1/secrets', '/api/v1/serviceaccounts', '/apis/rbac.authorization.k8s.io/v1/rolebindings', '/apis/kubeflow.org/v1/notebooks', '/api/v1/pods'];

export default async function clusterListBench(opts: { profiles: number; json: boolean; quick: boolean; workDir: string }): Promise<BenchRow[]> {
  const profiles = opts.quick ? Math.min(opts.profiles, 50) : opts.profiles;
  const kubeconfigPath = join(opts.workDir, 'cluster-list-bench.kubeconfig');
  const node = join(process.cwd(), 'node_modules/.bin/node');
  const child = execa(node, ['--import', 'tsx', 'tests/support/cluster/main.ts', '--kubeconfig', kubeconfigPath, '--profiles', String(profiles), '--seed', '1'], { stdout: 'pipe', stderr: 'inherit', reject: false });
  try {
    await new Promise<void>((resolve, reject) => {
      child.stdout?.on('data', (d: Buffer) => {
        if (d.toString().includes('cluster ready')) resolve();
      });
      void child.then((r) => reject(new Error(`the cluster exited before it was ready (exit ${r.exitCode})`)));
    });
    const kc = parse(await readFile(kubeconfigPath, 'utf8')) as Kubeconfig;
    const server = kc.clusters[0]!.cluster.server;
    const ca = Buffer.from(kc.clusters[0]!.cluster['certificate-authority-data'], 'base64').toString('utf8');
    const token = kc.users[0]!.user.token;
    const rss = await execa('ps', ['-o', 'rss=', '-p', String(child.pid)]);
    let objects = 0;
    let pages = 0;
    const started = process.hrtime.bigint();
    for (const path of LISTED) {
      let next: string | undefined;
      do {
        const page = await get(`${server}${path}?limit=500${next ? `&continue=${encodeURIComponent(next)}` : ''}`, ca, token);
        objects += page.items.length;
        pages++;
        next = page.metadata.continue;
      } while (next);
    }
    const seconds = Number(process.hrtime.bigint() - started) / 1e9;
    const rate = Math.round(objects / seconds);
    return [
      { bench: 'cluster-list', metric: 'list-throughput', value: rate, unit: 'objects/s', target: '>= 20000', verdict: rate >= 20000 ? 'met' : 'missed', note: `P=${profiles}: ${objects} objects in ${pages} pages of 500 over ${LISTED.length} kinds` },
      { bench: 'cluster-list', metric: 'server-rss', value: Math.round(Number(rss.stdout.trim()) / 1024), unit: 'MiB', note: `cluster process after the dataset of P=${profiles}` },
    ];
  } finally {
    agent.destroy();
    child.kill('SIGTERM');
    await child;
  }
}

// run directly: npx tsx bench/cluster-list.bench.ts [profiles]
if (import.meta.url === `file://${process.argv[1]}`) {
  const { mkdtemp } = await import('node:fs/promises');
  const { tmpdir } = await import('node:os');
  const rows = await clusterListBench({ profiles: Number(process.argv[2] ?? 100), json: false, quick: false, workDir: await mkdtemp(join(tmpdir(), 'bench-')) });
  console.log(rows);
}
