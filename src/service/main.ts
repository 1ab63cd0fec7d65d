// The workload container's service (lib/service.mjs, pushed by the charm and run by Pebble): scheduled backups, the
// retention after them, and their metrics on :9464/metrics (and /status for the charm's unit status).
// Usage: node service.mjs <settings.json>
import { createServer } from 'node:http';
import { dirname } from 'node:path';
import { METRICS_PORT, workloadPaths } from '../workload/settings.ts';
import { serviceMetrics } from './metrics.ts';
import { Scheduler } from './scheduler.ts';
import { newestBackup, scheduledRun } from './run.ts';

const settingsPath = process.argv[2];
if (!settingsPath) {
  process.stderr.write('usage: service.mjs <settings.json>\n');
  process.exit(2);
}
// Pebble keeps each line with the service's name and time (pebble logs).
const log = (line: string) => process.stdout.write(`${line}\n`);
// the settings file lies in the workload root, beside the charm's record of its last restore
const metrics = serviceMetrics(workloadPaths(dirname(settingsPath)).lastRestore);
const scheduler = new Scheduler(settingsPath, {
  metrics,
  run: scheduledRun,
  newestBackup: async (settings) => {
    const { openBackupStore } = await import('../store/open.ts');
    return newestBackup(openBackupStore(settings.s3!), settings.encryptionKey);
  },
  log,
});
const port = Number(process.env.KUBEFLOW_UPGRADER_METRICS_PORT ?? METRICS_PORT);
const server = createServer((req, res) => {
  if (req.url === '/metrics') {
    metrics.registry.metrics().then(
      (text) => res.writeHead(200, { 'Content-Type': metrics.registry.contentType }).end(text),
      (error: Error) => res.writeHead(500).end(error.message),
    );
  } else if (req.url === '/status') {
    res.writeHead(200, { 'Content-Type': 'application/json' }).end(JSON.stringify(scheduler.status()));
  } else {
    res.writeHead(404).end();
  }
});
server.listen(port, () => log(`serving metrics on :${port}/metrics`));
for (const signal of ['SIGTERM', 'SIGINT'] as const) {
  process.on(signal, () => {
    scheduler.stop();
    server.close();
    log(`stopping on ${signal}`);
    process.exit(0);
  });
}
await scheduler.start();
