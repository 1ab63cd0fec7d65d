// The demo's story (demo/main.ts parses the flags first, so a wrong flag answers at once): the whole story on one machine — two embedded Kubeflow clusters and an S3
// server; the PACKED charm's real dispatch backs up cluster A and restores into the fresh cluster B; then the two
// clusters' user state and volume files are compared. Exits 0 only when they are the same.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { KubeClient } from '../src/kube/client.ts';
import { collectUserState, compareStates, describeDifferences, isDifference, parseNamedSkips } from '../src/restore/compare.ts';
import { formatBytes, table } from '../src/cli/output.ts';
import { startS3Server, type S3ServerHandle } from '../tests/support/s3/server.ts';
import type { Release } from '../tests/support/cluster/kubeflow/releases.ts';
import { fillClusterA, startDemoCluster, volumeHashes, type DemoCluster } from './clusters.ts';
import { DeployedCharm, packAndUnpack } from './charm.ts';
import { S3_PREFIX } from './s3.ts';
import { bold, dim, green, red, Steps, whileRunning } from './view.ts';

const BUCKET = 'kubeflow-backups';

export interface DemoOptions {
  quick: boolean;
  keep: boolean;
  profiles: number;
  /** the CKF releases whose CRDs clusters A and B serve (absent: the permissive CRDs) */
  releases?: { a: Release; b: Release };
  /** a last step: the workload container under the real Pebble backs A up every minute and serves its metrics */
  schedule?: boolean;
}

export async function runDemo(args: DemoOptions): Promise<number> {
  const { quick, profiles } = args;
  // ---- cleanup: every process and folder the demo made goes away, on success, failure and Ctrl-C alike
  const work = mkdtempSync(join(tmpdir(), 'kubeflow-upgrader-demo-'));
  const cleanups: Array<() => Promise<void> | void> = [() => rmSync(work, { recursive: true, force: true })];
  let cleaning: Promise<void> | undefined;
  function cleanup(): Promise<void> {
    cleaning ??= (async () => {
      for (const step of cleanups.reverse()) await Promise.resolve().then(step).catch(() => undefined);
    })();
    return cleaning;
  }
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.on(signal, () => {
      process.stdout.write(`\n${dim(`${signal}: stopping the clusters and the S3 server, removing ${work}`)}\n`);
      void cleanup().then(() => process.exit(130));
    });
  }

  const started = performance.now();
  const steps = new Steps(args.schedule ? 9 : 8);
  process.stdout.write(`${bold('kubeflow-upgrader demo')} — back up Kubeflow on cluster A, restore it into a fresh cluster B, prove they match\n`);
  process.stdout.write(dim(`${quick ? 'quick mode: ' : ''}${profiles} profiles; work folder ${work}\n`));

  async function main(): Promise<number> {
    steps.begin('Start an S3 server (s3rver) with the bucket kubeflow-backups');
    const s3: S3ServerHandle = await startS3Server({ buckets: [BUCKET] });
    cleanups.push(() => s3.stop());
    steps.end(`S3 at ${s3.endpoint}`);

    steps.begin(`Start cluster A with Kubeflow's controllers and ${profiles} user profiles`);
    const a: DemoCluster = await startDemoCluster('a', work, args.releases?.a);
    cleanups.push(() => a.stop());
    steps.progress('creating Profiles, notebooks, volumes, contributors, an InferenceService, an experiment …');
    const facts = await fillClusterA(a, { profiles, quick });
    steps.say(`${facts.profiles} Profiles, ${facts.objects} objects created as users would (controllers made the rest)`);
    steps.say(`${facts.pvcs} workspace volumes holding ${facts.files} files, ${formatBytes(facts.bytes)}`);
    steps.end(`cluster A at ${a.running.server}`);

    steps.begin('Start cluster B: the fresh cluster a blue/green upgrade restores into');
    const b: DemoCluster = await startDemoCluster('b', work, args.releases?.b);
    cleanups.push(() => b.stop());
    steps.end(`cluster B at ${b.running.server}, no profiles`);

    steps.begin('Pack the charm and unpack it the way Juju does');
    const packed = await whileRunning(steps, 'building the bundle, zipping it with Node 24 …', packAndUnpack(work));
    steps.end(`kubeflow-upgrader.charm, ${formatBytes(packed.bytes)}, unpacked with its file modes`);

    steps.begin('Deploy on A: install, relate to s3-integrator (track-1 data)');
    const charm = new DeployedCharm(packed, s3, BUCKET);
    const install = await charm.hook('install', a.kubeconfigPath);
    if (install.exitCode !== 0) throw new Error(`the install hook failed: ${install.stderr.trim().split('\n').at(-1)}`);
    const related = await charm.relationChanged(a.kubeconfigPath);
    if (related.exitCode !== 0) throw new Error(`the relation hook failed: ${related.stderr.trim().split('\n').at(-1)}`);
    const status = charm.status();
    steps.say(`unit status: ${status?.status ?? 'unknown'} "${status?.message ?? ''}"`);
    if (status?.status !== 'active') throw new Error(`the charm is ${status?.status}, not active: ${status?.message}`);
    steps.end('kubeflow-upgrader/0 is active');

    steps.begin('juju run kubeflow-upgrader/0 backup-state   (on cluster A)');
    const backup = await whileRunning(steps, 'backing up Profiles, user objects and volume data …', charm.action('backup-state', { description: 'before the upgrade' }, a.kubeconfigPath));
    for (const line of backup.state.actionLogs) steps.say(dim(`log: ${line}`));
    if (backup.exitCode !== 0 || backup.state.actionFailure) throw new Error(`backup-state failed: ${backup.state.actionFailure ?? backup.stderr.trim().split('\n').at(-1)}`);
    const results = backup.state.actionResults;
    const backupId = results['backup-id']!;
    const backupBytes = Number(results.bytes ?? 0) + Number(results['volume-bytes'] ?? 0);
    steps.say(`backup-id: ${backupId}`);
    steps.say(`location:  ${results.location}`);
    steps.say(`objects: ${results.objects}, volumes: ${results.volumes} (${formatBytes(Number(results['volume-bytes'] ?? 0))}), skipped: ${results.skipped} controller-made objects`);
    steps.end(`backup committed, ${formatBytes(backupBytes)} in S3`);

    steps.begin('juju run kubeflow-upgrader/0 restore-state backup-id=latest   (into cluster B)');
    const restored = await restoreIntoB(charm, b, backupId);
    steps.end(restored.summary);

    steps.begin('Compare the user state of A and B');
    const [kubeA, kubeB] = await Promise.all([KubeClient.load({ kubeconfig: a.kubeconfigPath }), KubeClient.load({ kubeconfig: b.kubeconfigPath })]);
    const [stateA, stateB] = await Promise.all([collectUserState(kubeA), collectUserState(kubeB)]);
    kubeA.close();
    kubeB.close();
    // what the restore named as skipped (a finished Job, …) is expected to be absent from B, and said so below
    const compared = compareStates(stateA, stateB, parseNamedSkips(restored.skippedObjects));
    const expectedAbsent = describeDifferences(compared.filter((d) => !isDifference(d)));
    const differences = describeDifferences(compared.filter(isDifference));
    const filesA = volumeHashes(a);
    const filesB = volumeHashes(b);
    for (const [path, hash] of filesA) {
      const other = filesB.get(path);
      if (other === undefined) differences.push(`volume file ${path}: missing on B`);
      else if (other !== hash) differences.push(`volume file ${path}: different content`);
    }
    for (const path of filesB.keys()) if (!filesA.has(path)) differences.push(`volume file ${path}: extra on B`);
    for (const line of expectedAbsent) steps.say(`absent from B as the restore said: ${line}`);
    steps.end(`${stateA.length} objects and ${filesA.size} volume files on A compared with B${expectedAbsent.length ? `, ${expectedAbsent.length} skipped by the restore with its reason` : ''}`);

    if (args.schedule) await scheduledBackups(charm, a);
    printSummary(stateA, stateB, filesA.size, filesB.size, backupBytes);
    process.stdout.write(dim(`\ntotal ${((performance.now() - started) / 1000).toFixed(1)}s\n`));
    if (differences.length > 0) {
      process.stdout.write(`\n${red(`A and B differ in ${differences.length} place(s):`)}\n`);
      for (const d of differences.slice(0, 100)) process.stdout.write(`  ${d}\n`);
      return 1;
    }
    if (args.keep) await keepRunning(a, b, s3);
    process.stdout.write(`\n${green(bold('A and B hold the same user state'))}\n`);
    return 0;
  }

  /** The schedule: Pebble runs the service the charm pushes, which backs A up at the next minute and serves metrics. */
  async function scheduledBackups(charm: DeployedCharm, a: DemoCluster): Promise<void> {
    steps.begin('juju config kubeflow-upgrader backup-schedule="* * * * *"   (the workload container under the real Pebble)');
    const [{ startPebble, freePort }, { dirname }] = await Promise.all([import('../tests/support/pebble/pebble.ts'), import('node:path')]);
    const port = await freePort();
    // the official Node.js image has node on PATH; here, this machine's Node.js 24 stands in for it
    const pebble = await startPebble({ PATH: `${dirname(process.execPath)}:/usr/bin:/bin`, KUBEFLOW_UPGRADER_METRICS_PORT: String(port) });
    cleanups.push(() => pebble.stop());
    const env = { KUBEFLOW_UPGRADER_PEBBLE_SOCKET: pebble.socket, KUBEFLOW_UPGRADER_WORKLOAD_ROOT: join(pebble.root, 'srv'), KUBEFLOW_UPGRADER_METRICS_PORT: String(port) };
    charm.configure({ 'backup-schedule': '* * * * *', 'backup-retention': 2 });
    await charm.hook('upgrader-pebble-ready', a.kubeconfigPath, undefined, env);
    steps.say('pushed lib/service.mjs and its 0600 settings into the container, added the layer, replanned');
    await whileRunning(steps, 'waiting for the next slot (at most a minute) …', pebble.waitFor(/scheduled backup kf-\S+ succeeded/, 150_000));
    for (const line of pebble.output().split('\n').filter((l) => /kubeflow-upgrader\]|scheduled backup|backup-schedule/.test(l)).slice(-4)) steps.say(dim(line.trim()));
    const metrics = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
    for (const line of metrics.split('\n').filter((l) => /^kubeflow_upgrader_(backup_(last_success|attempts_total|objects|duration)|schedule_next_run|prune_)/.test(l))) steps.say(line);
    await charm.hook('update-status', a.kubeconfigPath, undefined, env);
    const status = charm.status();
    steps.end(`unit status: ${status?.status ?? 'unknown'} "${status?.message ?? ''}"`);
  }

  /** The charm's restore-state into the fresh cluster: the restore a blue/green upgrade runs. */
  async function restoreIntoB(charm: DeployedCharm, b: DemoCluster, backupId: string): Promise<{ summary: string; skippedObjects: string[] }> {
    const outcome = await whileRunning(steps, 'verifying the archive, restoring Profiles, waiting for namespaces, restoring objects and volumes …',
      charm.action('restore-state', { 'backup-id': 'latest' }, b.kubeconfigPath));
    for (const line of outcome.state.actionLogs) steps.say(dim(`log: ${line}`));
    const failure = outcome.state.actionFailure;
    if (failure || outcome.exitCode !== 0) throw new Error(`restore-state failed: ${failure ?? outcome.stderr.trim().split('\n').at(-1)}`);
    const r = outcome.state.actionResults;
    // the results are flattened for Juju: skipped-objects.0, skipped-objects.1, …
    const skippedObjects = Object.keys(r).filter((k) => /^skipped-objects\.\d+$/.test(k))
      .sort((x, y) => Number(x.split('.')[1]) - Number(y.split('.')[1])).map((k) => r[k]!);
    return {
      summary: `restored ${backupId}: ${r.created ?? 0} created, ${r.updated ?? 0} updated, ${r.unchanged ?? 0} unchanged, ${r.skipped ?? 0} skipped, ${r.failed ?? 0} failed`,
      skippedObjects,
    };
  }

  function printSummary(stateA: Array<{ kind: string }>, stateB: Array<{ kind: string }>, filesA: number, filesB: number, backupBytes: number): void {
    const count = (objects: Array<{ kind: string }>) => objects.reduce((m, o) => m.set(o.kind, (m.get(o.kind) ?? 0) + 1), new Map<string, number>());
    const byA = count(stateA);
    const byB = count(stateB);
    const kinds = [...new Set([...byA.keys(), ...byB.keys()])].sort();
    process.stdout.write(`\n${bold('Summary')}\n`);
    const rows: Array<Array<string | number>> = [['KIND', 'ON A', 'ON B'], ...kinds.map((k) => [k, byA.get(k) ?? 0, byB.get(k) ?? 0]), ['volume files', filesA, filesB], ['all objects', stateA.length, stateB.length]];
    for (const line of table(rows)) process.stdout.write(`  ${line}\n`);
    process.stdout.write(`\n  backup size in S3: ${formatBytes(backupBytes)}\n`);
    for (const line of table([['STEP', 'SECONDS'], ...steps.timings.map((t) => [t.title.replace(/\s+\(.*$|\s{2,}.*$/, ''), Number(t.seconds.toFixed(1))])])) process.stdout.write(`  ${line}\n`);
  }

  async function keepRunning(a: DemoCluster, b: DemoCluster, s3: S3ServerHandle): Promise<void> {
    process.stdout.write([
      '',
      bold('--keep: clusters A and B and the S3 server stay up until Ctrl-C.'),
      `  export AWS_ACCESS_KEY_ID=${s3.accessKeyId} AWS_SECRET_ACCESS_KEY=<s3rver's fixed secret, the same word> AWS_ENDPOINT_URL=${s3.endpoint}`,
      `  npx kubeflow-upgrader list --s3-url s3://${BUCKET}/${S3_PREFIX} --path-style`,
      `  npx kubeflow-upgrader verify latest --s3-url s3://${BUCKET}/${S3_PREFIX} --path-style`,
      `  npx kubeflow-upgrader restore latest --s3-url s3://${BUCKET}/${S3_PREFIX} --path-style --kubeconfig ${b.kubeconfigPath} --dry-run`,
      `  kubectl --kubeconfig ${a.kubeconfigPath} get profiles,notebooks -A`,
      `  kubectl --kubeconfig ${b.kubeconfigPath} get profiles,notebooks -A`,
      '',
    ].join('\n'));
    await new Promise<never>(() => undefined);
  }

  let code: number;
  try {
    code = await main();
  } catch (error) {
    process.stdout.write(`\n${red(`demo failed: ${error instanceof Error ? error.message : String(error)}`)}\n`);
    code = 1;
  }
  await cleanup();
  return code;
}
