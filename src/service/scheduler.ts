// When the service backs up: at each slot of backup-schedule, one run at a time. A slot missed while the service was
// down (the pod moved, the process was killed) is run once when it starts, never once per missed slot: missed means
// that the newest backup in the bucket is older than the last slot. The settings file is read again at every wake-up,
// so a new schedule or key takes effect without a restart, and a run in flight keeps what it started with.
import { readdirSync, readFileSync, writeFileSync, rmSync, existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { nextSlot, previousSlot } from '../schedule/cron.ts';
import { BackupHandoffSchema, ServiceSettingsSchema, workloadPaths, type BackupHandoff, type ServiceSettings, type ServiceStatus } from '../workload/settings.ts';
import type { ServiceMetrics } from './metrics.ts';
import type { RunHooks, RunResult } from './run.ts';

/** the longest sleep between two readings of the settings file */
const WAKE_MS = 5_000;

export interface SchedulerDeps {
  metrics: ServiceMetrics;
  run(settings: ServiceSettings, hooks: RunHooks, handoff?: BackupHandoff): Promise<RunResult>;
  newestBackup(settings: ServiceSettings): Promise<Date | undefined>;
  log(line: string): void;
}

export class Scheduler {
  private handledSlot?: Date;
  private schedule?: string;
  private timer?: NodeJS.Timeout;
  private stopped = false;
  private running?: Promise<void>;
  private runStarted?: Date;
  private last?: ServiceStatus['last'];
  /** beside the settings: the id of the backup this service is writing, to take its lease over after a crash */
  private readonly runningFile: string;
  /** where backup-state wait=false leaves the backups it hands over */
  private readonly requestsDir: string;
  /**
   * the backup an earlier process of this service began and never finished (killed): its holder is gone, so its run
   * record, live until its lease runs out, holds nothing for this process's runs
   */
  private readonly abandoned = new Set<string>();

  constructor(private readonly settingsPath: string, private readonly deps: SchedulerDeps) {
    this.runningFile = join(dirname(settingsPath), 'running-backup');
    this.requestsDir = workloadPaths(dirname(settingsPath)).requests;
    if (existsSync(this.runningFile)) this.abandoned.add(readFileSync(this.runningFile, 'utf8').trim());
  }

  /** The oldest backup handed over and not yet taken, or undefined; one that cannot be read is dropped, said in the log. */
  private nextHandoff(): { file: string; handoff: BackupHandoff } | undefined {
    let names: string[];
    try {
      names = readdirSync(this.requestsDir).filter((name) => name.endsWith('.json')).sort();
    } catch {
      return undefined;
    }
    for (const name of names) {
      const file = join(this.requestsDir, name);
      try {
        return { file, handoff: BackupHandoffSchema.parse(JSON.parse(readFileSync(file, 'utf8'))) };
      } catch (error) {
        this.deps.log(`the handed-over backup ${name} cannot be read and is dropped: ${(error as Error).message.split('\n')[0]}`);
        rmSync(file, { force: true });
      }
    }
    return undefined;
  }

  readSettings(): ServiceSettings {
    return ServiceSettingsSchema.parse(JSON.parse(readFileSync(this.settingsPath, 'utf8')));
  }

  status(): ServiceStatus {
    const next = this.schedule && this.handledSlot ? nextSlot(this.schedule, this.handledSlot) : undefined;
    return {
      ...(this.schedule ? { schedule: this.schedule } : {}),
      ...(next ? { nextRun: next.toISOString() } : {}),
      ...(this.runStarted ? { running: { started: this.runStarted.toISOString() } } : {}),
      ...(this.last ? { last: this.last } : {}),
    };
  }

  /** Reads the bucket's newest backup for the metrics, runs a missed slot, then wakes for each slot. */
  async start(): Promise<void> {
    const settings = this.readSettings();
    let newest: Date | undefined;
    try {
      newest = settings.s3 ? await this.deps.newestBackup(settings) : undefined;
    } catch (error) {
      this.deps.log(`the bucket's newest backup could not be read: ${(error as Error).message}`);
    }
    this.deps.metrics.lastSuccess.set(newest ? newest.getTime() / 1000 : 0);
    this.adopt(settings.schedule);
    if (settings.schedule && this.handledSlot && (!newest || newest < this.handledSlot)) {
      this.deps.log(`the slot of ${this.handledSlot.toISOString()} was missed (newest backup: ${newest?.toISOString() ?? 'none'}): backing up now`);
      this.startRun(settings);
    }
    this.wake();
  }

  /** Takes up a schedule: slots from now on count, none before. */
  private adopt(schedule: string | undefined): void {
    if (schedule === this.schedule && this.handledSlot) return;
    this.schedule = schedule;
    const now = new Date();
    this.handledSlot = schedule ? (previousSlot(schedule, now) ?? now) : undefined;
    const metrics = this.deps.metrics;
    metrics.scheduleEnabled.set(schedule ? 1 : 0);
    if (schedule && this.handledSlot) {
      const next = nextSlot(schedule, this.handledSlot);
      metrics.scheduleInterval.set((nextSlot(schedule, next).getTime() - next.getTime()) / 1000);
      metrics.nextRun.set(next.getTime() / 1000);
      this.deps.log(`backup-schedule "${schedule}": next backup at ${next.toISOString()}`);
    } else {
      metrics.scheduleInterval.set(0);
      metrics.nextRun.set(0);
      this.deps.log('no backup-schedule: backups run only when asked');
    }
  }

  private wake(): void {
    if (this.stopped) return;
    let settings: ServiceSettings | undefined;
    try {
      settings = this.readSettings();
    } catch (error) {
      this.deps.log(`the settings file cannot be read: ${(error as Error).message}`);
    }
    if (settings) {
      const before = this.schedule;
      // a changed schedule counts from now: changing it never starts a backup by itself
      if (settings.schedule !== before) this.adopt(settings.schedule);
      const due = this.schedule && this.handledSlot ? nextSlot(this.schedule, this.handledSlot) : undefined;
      if (due && due.getTime() <= Date.now()) {
        this.handledSlot = previousSlot(this.schedule!, new Date()) ?? due;
        const next = nextSlot(this.schedule!, this.handledSlot);
        this.deps.metrics.nextRun.set(next.getTime() / 1000);
        if (this.running) this.deps.log(`the slot of ${due.toISOString()} came while a backup runs: it is not run again`);
        else this.startRun(settings);
      }
      // a backup backup-state wait=false handed over, when none runs
      const handed = this.running ? undefined : this.nextHandoff();
      if (handed) this.startRun(settings, handed);
    }
    const due = this.schedule && this.handledSlot ? nextSlot(this.schedule, this.handledSlot).getTime() - Date.now() : WAKE_MS;
    this.timer = setTimeout(() => this.wake(), Math.max(0, Math.min(WAKE_MS, due)));
  }

  private startRun(settings: ServiceSettings, handed?: { file: string; handoff: BackupHandoff }): void {
    this.running = this.runOnce(settings, handed).finally(() => {
      this.running = undefined;
      this.runStarted = undefined;
    });
  }

  private async runOnce(settings: ServiceSettings, handed?: { file: string; handoff: BackupHandoff }): Promise<void> {
    const what = handed ? 'handed-over backup' : 'scheduled backup';
    const metrics = this.deps.metrics;
    this.runStarted = new Date();
    let result: RunResult;
    try {
      result = await this.deps.run(settings, {
        abandoned: this.abandoned,
        onBegun: (id) => {
          writeFileSync(this.runningFile, id, { mode: 0o600 });
          this.deps.log(`backup ${id} started`);
        },
        log: this.deps.log,
      }, handed?.handoff);
    } catch (error) {
      result = { result: 'failed', sentence: (error as Error).message, moverFailed: false, durationSeconds: (Date.now() - this.runStarted.getTime()) / 1000 };
    }
    rmSync(this.runningFile, { force: true });
    const at = new Date();
    metrics.attempts.inc({ result: result.result });
    if (result.result === 'skipped') {
      this.last = { at: at.toISOString(), result: 'skipped', sentence: result.sentence };
      // a handed-over backup stays asked for: it starts once the lease is free
      this.deps.log(`${what} skipped: ${result.sentence}`);
      return;
    }
    if (handed) rmSync(handed.file, { force: true });
    metrics.lastAttempt.set(at.getTime() / 1000);
    metrics.duration.set(result.durationSeconds);
    if (result.result === 'failed') {
      metrics.lastAttemptSucceeded.set(0);
      if (result.moverFailed) metrics.moverFailures.inc();
      this.last = { at: at.toISOString(), result: 'failed', sentence: result.sentence };
      this.deps.log(`${what}${handed ? ` ${handed.handoff.backupId}` : ''} failed: ${result.sentence}`);
      return;
    }
    metrics.lastAttemptSucceeded.set(1);
    metrics.lastSuccess.set(this.runStarted.getTime() / 1000);
    metrics.objects.set(result.objects);
    metrics.bytes.set(result.bytes);
    metrics.volumeBytes.set(result.volumeBytes);
    metrics.volumeBytesUploaded.set(result.volumeBytesUploaded);
    // namespaces gone since the last backup leave the metric
    metrics.namespaceVolumeBytes.reset();
    for (const [namespace, bytes] of Object.entries(result.namespaceVolumeBytes)) metrics.namespaceVolumeBytes.set({ namespace }, bytes);
    metrics.pruneLast.set(at.getTime() / 1000);
    if (result.prune.ran) {
      metrics.pruneBlocked.set(0);
      metrics.pruneDeleted.inc(result.prune.deleted);
    } else {
      metrics.pruneBlocked.set(1);
      this.deps.log(`retention after backup ${result.backupId} did not run: ${result.prune.sentence}`);
    }
    this.last = { at: at.toISOString(), result: 'succeeded', backupId: result.backupId };
    this.deps.log(`${what} ${result.backupId} succeeded (${result.objects} objects); retention ${result.prune.ran ? `deleted ${result.prune.deleted}` : 'blocked'}`);
  }

  stop(): void {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
  }
}
