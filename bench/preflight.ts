// The restore's preflight on its own: the part of a restore that runs before its first write, with the cluster idle
// (docs/performance.md). One process: an embedded cluster of P profiles, one backup of it into the in-memory backup
// store, then the preflight run again and again against that backup, each run's CPU per archived object printed (the
// first run cold, as in a restore: a fresh process reads its backup once).
//   node --import tsx bench/preflight.ts [--profiles 1000] [--runs 5]
// Run with the engines' node flags (src/node-flags.ts) to measure what a restore runs with, e.g.
//   node --max-semi-space-size=4 --heap-growing-percent=50 --import tsx bench/preflight.ts --profiles 5000
import { parseArgs } from 'node:util';
import { runPreflight } from '../src/restore/preflight.ts';
import { backedUpCluster } from './support/memory-backup.ts';

const { values } = parseArgs({ options: { profiles: { type: 'string', default: '1000' }, runs: { type: 'string', default: '5' } } });
const profiles = Number(values.profiles);
const runs = Number(values.runs);
if (!Number.isInteger(profiles) || profiles < 1 || !Number.isInteger(runs) || runs < 1) {
  process.stderr.write('--profiles and --runs must be positive whole numbers.\n');
  process.exit(2);
}

const { kube, store, backupId, stop } = await backedUpCluster(profiles);
try {
  const cpu: number[] = [];
  for (let run = 0; run < runs; run++) {
    const before = process.cpuUsage();
    const started = performance.now();
    const preflight = await runPreflight(kube, store, { backupId });
    const spent = process.cpuUsage(before);
    const ms = (spent.user + spent.system) / 1000;
    cpu.push(ms);
    process.stdout.write(`run ${run + 1}${run === 0 ? ' (cold)' : ''}: ${preflight.objectsChecked} objects, ${Math.round(performance.now() - started)} ms, CPU ${Math.round(ms)} ms, ${((ms * 1000) / preflight.objectsChecked).toFixed(1)} µs per object\n`);
    await preflight.spool.remove();
  }
  const warm = cpu.slice(1).sort((a, b) => a - b);
  if (warm.length) process.stdout.write(`warm runs: median CPU ${Math.round(warm[Math.floor(warm.length / 2)]!)} ms\n`);
} finally {
  await stop();
}
