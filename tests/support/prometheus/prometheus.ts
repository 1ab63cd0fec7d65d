// Runs the real Prometheus server (Debian's prometheus package, upstream prometheus/prometheus) scraping one target,
// with rule files loaded, for tests that check what Prometheus itself makes of the service's metrics. Not a simulation.
import { execa, type ResultPromise } from 'execa';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { stopOnExit } from '../cleanup.ts';
import { freePort } from '../pebble/pebble.ts';

export interface RunningPrometheus {
  url: string;
  /** an instant query (GET /api/v1/query); `at` evaluates it at that time instead of now */
  query(expr: string, at?: Date): Promise<Array<{ metric: Record<string, string>; value: [number, string] }>>;
  stop(): Promise<void>;
}

export async function startPrometheus(options: { target: string; jobName: string; labels?: Record<string, string>; ruleFiles?: Record<string, unknown> }): Promise<RunningPrometheus> {
  const dir = mkdtempSync(join(tmpdir(), 'prometheus-'));
  const port = await freePort();
  const rules = Object.entries(options.ruleFiles ?? {}).map(([name, content]) => {
    writeFileSync(join(dir, name), JSON.stringify(content));
    return join(dir, name);
  });
  writeFileSync(join(dir, 'prometheus.yml'), stringify({
    global: { scrape_interval: '1s', evaluation_interval: '1s' },
    rule_files: rules,
    scrape_configs: [{ job_name: options.jobName, static_configs: [{ targets: [options.target], labels: options.labels ?? {} }] }],
  }));
  let text = '';
  const child: ResultPromise = execa('prometheus', [
    `--config.file=${join(dir, 'prometheus.yml')}`, `--storage.tsdb.path=${join(dir, 'data')}`, `--web.listen-address=127.0.0.1:${port}`,
  ], { reject: false, all: true, buffer: false });
  const stop = stopOnExit(`prometheus :${port}`, async () => {
    child.kill('SIGTERM');
    await child;
    rmSync(dir, { recursive: true, force: true });
  });
  // its own sign (cmd/prometheus/main.go): "Server is ready to receive web requests."
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`Prometheus did not get ready:\n${text.slice(-3000)}`)), 30_000);
    child.all?.on('data', (chunk: Buffer) => {
      text += chunk.toString('utf8');
      if (text.includes('Server is ready to receive web requests.')) {
        clearTimeout(timer);
        resolve();
      }
    });
    void child.then(() => reject(new Error(`Prometheus exited:\n${text.slice(-3000)}`)));
  }).catch(async (error: unknown) => {
    await stop();
    throw error;
  });
  const url = `http://127.0.0.1:${port}`;
  return {
    url,
    async query(expr, at) {
      const params = new URLSearchParams({ query: expr, ...(at ? { time: String(at.getTime() / 1000) } : {}) });
      const reply = (await (await fetch(`${url}/api/v1/query?${params}`)).json()) as { status: string; error?: string; data: { result: Array<{ metric: Record<string, string>; value: [number, string] }> } };
      if (reply.status !== 'success') throw new Error(`Prometheus refused ${expr}: ${reply.error}`);
      return reply.data.result;
    },
    stop,
  };
}
