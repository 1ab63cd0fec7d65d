// Runs a copy Job's container on this machine the way a kubelet would: its `command` verbatim, env resolved from
// the per-run Secret's stringData, and the termination message read back from a file. Only until the shared
// simulated kubelet (tests/support/kubelet/) lands; the scripts run unchanged under either.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa } from 'execa';
import type { KubeObject } from '../../src/kube/types.ts';

interface EnvVar { name: string; value?: string; valueFrom?: { secretKeyRef?: { name: string; key: string } } }

export interface LocalRun {
  exitCode: number;
  terminationMessage: string;
  stderr: string;
  /** the container's argv, to check no secret is on a command line */
  argv: string[];
}

export function containerOf(job: KubeObject): { command: string[]; env: EnvVar[] } {
  const container = (job.spec as { template: { spec: { containers: { command: string[]; env: EnvVar[] }[] } } }).template.spec.containers[0];
  if (!container) throw new Error('Job has no container');
  return container;
}

export async function runJobLocally(job: KubeObject, secrets: KubeObject[]): Promise<LocalRun> {
  const { command, env } = containerOf(job);
  const resolved: Record<string, string> = {};
  for (const variable of env) {
    if (variable.value !== undefined) resolved[variable.name] = variable.value;
    const ref = variable.valueFrom?.secretKeyRef;
    if (ref) {
      const secret = secrets.find((s) => s.metadata.name === ref.name);
      const value = (secret?.stringData as Record<string, string> | undefined)?.[ref.key];
      if (value === undefined) throw new Error(`Secret ${ref.name} has no key ${ref.key}`);
      resolved[variable.name] = value;
    }
  }
  const dir = mkdtempSync(join(tmpdir(), 'job-'));
  const terminationLog = join(dir, 'termination-log');
  try {
    // A container starts with only its own environment: no AWS_CA_BUNDLE (rclone refuses it over plain HTTP).
    const result = await execa(command[0]!, command.slice(1), {
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: dir, TMPDIR: dir, TERMINATION_LOG: terminationLog, ...resolved },
      extendEnv: false,
      reject: false,
    });
    let terminationMessage = '';
    try {
      terminationMessage = readFileSync(terminationLog, 'utf8');
    } catch {
      // no message written: the engine treats that as a failure
    }
    return { exitCode: result.exitCode ?? -1, terminationMessage, stderr: String(result.stderr), argv: command };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
