// npm run soak -- --runs 20 --fault-rate 0.1: backups of the embedded cluster through the S3 fault proxy with the
// API server's faults on, each checked against a clean run: same item checksums, or a failure with no marker. Every
// PVC of the source holds files (the simulated kubelet runs the volume movers), so each backup copies volume data too.
// After each backup, that backup (or the clean run's, when the backup failed) is restored into a fresh embedded cluster
// under the same fault rates (API faults on the target, S3 faults through the proxy) by the CLI in its own process,
// SIGKILLed as soon as the volume fill begins (on every other run its mover Jobs are deleted too), then rerun until it
// succeeds (at most 3 more tries); convergence (user state equal to the source's), objects lost and every PVC's files
// (sha256 per file) are compared.
// Prints the statistics docs/reliability-log.md quotes. Exits non-zero if any run broke the promise.
import { parseArgs } from 'node:util';
import { startCluster } from '../support/cluster/index.ts';
import { startS3Server } from '../support/s3/server.ts';
import { FaultProxy } from '../support/s3/fault-proxy.ts';
import { runBackup } from '../../src/backup/engine.ts';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { simulatedKubelet } from '../support/kubelet/index.ts';
import { volumeBackupStep } from '../../src/volumes/steps.ts';
import { differingVolumes, restoreKilledDuringFill, seedVolumes, SOAK_MOVERS } from './volumes.ts';
import { collectUserState, compareStates, describeDifferences } from '../../src/restore/compare.ts';
import { backupRequest, bucketState, entryChecksums, kubeAt, s3Settings, storeAt } from '../reliability/support.ts';
import { requireSystemTools } from '../../scripts/system-tools.ts';
import { backupStore } from '../support/backup-store.ts';

const { values } = parseArgs({ options: { runs: { type: 'string', default: '20' }, 'fault-rate': { type: 'string', default: '0.1' }, profiles: { type: 'string', default: '10' }, seed: { type: 'string', default: '1' } } });
requireSystemTools('soak');
const runs = Number(values.runs);
const rate = Number(values['fault-rate']);
const seed0 = Number(values.seed);
if (!Number.isInteger(runs) || runs < 1 || !(rate >= 0 && rate <= 1)) {
  console.error('--runs must be a whole number of at least 1 and --fault-rate between 0 and 1.');
  process.exit(2);
}

const BUCKET = 'soak';
const [cluster, s3] = await Promise.all([startCluster({ profiles: Number(values.profiles), seed: 3 }), startS3Server({ buckets: [BUCKET] })]);
const proxy = await FaultProxy.start({ target: s3.endpoint, latencyMs: 20 });
cluster.faults.retryAfterSeconds = 0;
cluster.faults.latencyMs = 20;
const kube = await kubeAt(cluster.kubeconfigPath);
const sourceData = mkdtempSync(join(tmpdir(), 'soak-source-volumes-'));
const sourceKubelet = simulatedKubelet({ dataDir: sourceData });
const stopSourceKubelet = sourceKubelet.start(cluster.api);
await sourceKubelet.idle();
const sourceVolumes = seedVolumes(cluster, sourceKubelet);
await cluster.settled();
/** the backup request with volume data copied by movers talking to `endpoint` */
const withVolumes = (endpoint: string, prefix: string) => backupRequest({ includeVolumes: true, volumes: volumeBackupStep(kube, s3Settings(endpoint, BUCKET, prefix), SOAK_MOVERS) });
let violations = 0;
try {
  const direct = storeAt(s3.endpoint, BUCKET, 'clean');
  const cleanRun = await runBackup(kube, backupStore(direct), withVolumes(s3.endpoint, 'clean'));
  const clean = await entryChecksums(direct, cleanRun.backupId);
  console.log(`clean run: ${cleanRun.objects} objects, ${Object.keys(clean).length} tar entries, ${cleanRun.volumes.copied} PVC(s) with ${[...sourceVolumes.values()].reduce((n, t) => n + t.size, 0)} files`);
  const sourceState = await collectUserState(kube);
  const restoreApi: Record<string, number> = {};
  const rows: Array<{ run: number; outcome: string; seconds: number; s3Faults: number; apiFaults: number }> = [];
  const restores: Array<{ run: number; tries: number; converged: boolean; lost: number; apiFaults: number; s3Faults: number; killed: boolean; jobsDeleted: number; volumesDiffer: number }> = [];
  for (let run = 1; run <= runs; run++) {
    const seed = seed0 * 1000 + run;
    proxy.setRate(rate, seed);
    const s3Before = { ...proxy.counts };
    const apiBefore = { ...cluster.faults.injected };
    cluster.faults.reseed(seed);
    for (const kind of ['throttle', 'error', 'unavailable', 'reset'] as const) cluster.faults.setRate(kind, rate / 4);
    const store = storeAt(proxy.endpoint, BUCKET, `run-${run}`);
    const started = performance.now();
    let outcome: string;
    let id: string | undefined;
    let failure = '';
    try {
      id = (await runBackup(kube, backupStore(store), withVolumes(proxy.endpoint, `run-${run}`))).backupId;
    } catch (error) {
      failure = error instanceof Error ? error.message : String(error);
    }
    const seconds = (performance.now() - started) / 1000;
    proxy.setRate(0);
    cluster.faults.clear();
    const state = await bucketState(storeAt(s3.endpoint, BUCKET, `run-${run}`));
    if (id) {
      const same = JSON.stringify(await entryChecksums(storeAt(s3.endpoint, BUCKET, `run-${run}`), id)) === JSON.stringify(clean);
      outcome = same && state.committed.length === 1 ? 'completed, same checksums' : 'VIOLATION: completed with different items';
    } else {
      outcome = state.committed.length === 0 ? `failed cleanly, no marker (${failure})` : 'VIOLATION: failed but a marker exists';
    }
    if (outcome.startsWith('VIOLATION')) violations++;
    const sum = (now: Record<string, number>, before: Record<string, number>, skip: string[]) => Object.keys(now).filter((k) => !skip.includes(k)).reduce((a, k) => a + (now[k]! - (before[k] ?? 0)), 0);
    rows.push({ run, outcome, seconds: Math.round(seconds * 10) / 10, s3Faults: sum(proxy.counts, s3Before, ['passed']), apiFaults: sum(cluster.faults.injected, apiBefore, []) });
    console.log(`run ${run}: ${outcome} in ${seconds.toFixed(1)}s; S3 faults ${rows.at(-1)!.s3Faults}, API faults ${rows.at(-1)!.apiFaults}`);

    // The restore of this backup (the clean one when it failed) into a fresh cluster, under the same fault rates, by the
    // CLI: killed as its volume fill begins, then rerun.
    const target = await startCluster({ seed: 3 });
    const targetData = mkdtempSync(join(tmpdir(), 'soak-target-volumes-'));
    const targetKubelet = simulatedKubelet({ dataDir: targetData });
    const stopTargetKubelet = targetKubelet.start(target.api);
    const targetKube = await kubeAt(target.kubeconfigPath);
    try {
      target.faults.retryAfterSeconds = 0;
      target.faults.latencyMs = 20;
      target.faults.reseed(seed + 500);
      for (const kind of ['throttle', 'error', 'unavailable', 'reset'] as const) target.faults.setRate(kind, rate / 4);
      proxy.setRate(rate, seed + 500);
      const s3RestoreBefore = { ...proxy.counts };
      const from = id ? { prefix: `run-${run}`, id } : { prefix: 'clean', id: cleanRun.backupId };
      const outcome = await restoreKilledDuringFill({ target, id: from.id, s3Url: `s3://${BUCKET}/${from.prefix}`, endpoint: proxy.endpoint, deleteJobs: run % 2 === 0, maxTries: 4 });
      proxy.setRate(0);
      const apiFaults = Object.values(target.faults.injected).reduce((a, n) => a + n, 0);
      for (const [k, n] of Object.entries(target.faults.injected)) restoreApi[k] = (restoreApi[k] ?? 0) + n;
      target.faults.clear();
      await targetKubelet.idle();
      const differences = compareStates(sourceState, await collectUserState(targetKube));
      const lost = differences.filter((d) => d.problem === 'missing').length;
      const volumesDiffer = differingVolumes(sourceVolumes, targetKubelet);
      const converged = differences.length === 0 && volumesDiffer.length === 0;
      if (!converged) violations++;
      const s3Faults = sum(proxy.counts, s3RestoreBefore, ['passed']);
      restores.push({ run, tries: outcome.tries, converged, lost, apiFaults, s3Faults, killed: outcome.killedDuringFill, jobsDeleted: outcome.jobsDeleted, volumesDiffer: volumesDiffer.length });
      const what = converged ? 'converged, every PVC file equal' : `VIOLATION: not converged (${[...describeDifferences(differences).slice(0, 3), ...volumesDiffer.slice(0, 3).map((v) => `volume ${v} differs`)].join('; ')})`;
      const kill = outcome.killedDuringFill ? `killed during the fill${outcome.jobsDeleted ? `, ${outcome.jobsDeleted} mover Job(s) deleted` : ', mover Jobs left to adopt'}` : 'ended before its fill began';
      console.log(`restore ${run}: ${what}; ${kill}; ${outcome.tries} ${outcome.tries === 1 ? 'try' : 'tries'}${outcome.done ? '' : ` (last failure: ${outcome.lastError})`}; lost ${lost}; S3 faults ${s3Faults}, API faults ${apiFaults}`);
    } finally {
      targetKube.close();
      stopTargetKubelet();
      await targetKubelet.idle();
      await target.stop();
      rmSync(targetData, { recursive: true, force: true });
    }
  }
  const completed = rows.filter((r) => r.outcome.startsWith('completed')).length;
  const failedClean = rows.filter((r) => r.outcome.startsWith('failed cleanly')).length;
  const secs = rows.map((r) => r.seconds).sort((a, b) => a - b);
  console.log('\nsummary');
  console.log(`runs ${runs}, fault rate ${rate} (S3 requests) + ${rate} (API requests), ${values.profiles} profiles, ${cleanRun.objects} objects per backup`);
  console.log(`completed with clean checksums: ${completed}; failed with no marker: ${failedClean}; violations: ${violations}`);
  console.log(`S3 requests (backups and restores): ${proxy.seen.length}; S3 faults injected: ${JSON.stringify(Object.fromEntries(Object.entries(proxy.counts).filter(([k]) => k !== 'passed')))}`);
  console.log(`API faults injected on the source (backups): ${JSON.stringify(cluster.faults.injected)}`);
  const converged = restores.filter((r) => r.converged).length;
  const triesHist = [1, 2, 3, 4].map((n) => `${n}: ${restores.filter((r) => r.tries === n).length}`).join(', ');
  console.log(`restores converged to the source's user state and volume files: ${converged} / ${restores.length}; objects lost: ${restores.reduce((a, r) => a + r.lost, 0)}; PVCs with differing files: ${restores.reduce((a, r) => a + r.volumesDiffer, 0)}; tries (the killed one included) ${triesHist}`);
  const killed = restores.filter((r) => r.killed);
  console.log(`restores killed during the fill: ${killed.length} (mover Jobs deleted after ${killed.filter((r) => r.jobsDeleted > 0).length}, left to adopt after ${killed.filter((r) => r.jobsDeleted === 0).length})`);
  console.log(`restore faults injected: S3 ${restores.reduce((a, r) => a + r.s3Faults, 0)}, API ${restores.reduce((a, r) => a + r.apiFaults, 0)} ${JSON.stringify(restoreApi)}`);
  console.log(`backup run time (s): median ${secs[Math.floor(secs.length / 2)]}, max ${secs.at(-1)}`);
} finally {
  kube.close();
  stopSourceKubelet();
  await sourceKubelet.idle();
  rmSync(sourceData, { recursive: true, force: true });
  await proxy.stop();
  await Promise.all([cluster.stop(), s3.stop()]);
}
process.exit(violations === 0 ? 0 : 1);
