// Runs a copy Job's containers on this machine the way a kubelet would: init containers one after another, then the
// Pod's container, each with its `command` verbatim, env resolved from the per-run Secret's data, emptyDir
// volumes as one folder shared by all of them, and the termination message read back from a file. The scripts run
// unchanged here and under the simulated kubelet (tests/support/kubelet/), which the charm tests use.
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa } from 'execa';
import type { KubeObject } from '../../src/kube/types.ts';

interface EnvVar { name: string; value?: string; valueFrom?: { secretKeyRef?: { name: string; key: string } } }
interface Container { name: string; command: string[]; env: EnvVar[]; volumeMounts?: { name: string; mountPath: string }[] }

export interface LocalRun {
  exitCode: number;
  /** the message of the first container that failed, else the Pod's container's */
  terminationMessage: string;
  stderr: string;
  /** every container's argv, to check no secret is on a command line */
  argv: string[];
  /** names of the containers that ran, in order */
  ran: string[];
}

export function containersOf(job: KubeObject): Container[] {
  const spec = (job.spec as { template: { spec: { initContainers?: Container[]; containers: Container[] } } }).template.spec;
  return [...(spec.initContainers ?? []), ...spec.containers];
}

function resolve(container: Container, secrets: KubeObject[], mounts: Map<string, string>): Record<string, string> {
  const resolved: Record<string, string> = {};
  for (const variable of container.env) {
    if (variable.value !== undefined) {
      // A mount path, or a path under one, points into the folder that stands for that volume here.
      const under = [...mounts.keys()].find((path) => variable.value!.startsWith(`${path}/`));
      resolved[variable.name] = mounts.get(variable.value) ?? (under ? `${mounts.get(under)}${variable.value.slice(under.length)}` : variable.value);
    }
    const ref = variable.valueFrom?.secretKeyRef;
    if (ref) {
      const secret = secrets.find((s) => s.metadata.name === ref.name);
      const encoded = (secret?.data as Record<string, string> | undefined)?.[ref.key];
      const value = encoded === undefined ? undefined : Buffer.from(encoded, 'base64').toString('utf8');
      if (value === undefined) throw new Error(`Secret ${ref.name} has no key ${ref.key}`);
      resolved[variable.name] = value;
    }
  }
  return resolved;
}

/**
 * `claims`: volume name → a folder standing for that PersistentVolumeClaim, mounted as it is (the other volumes are
 * emptyDirs made for the run).
 */
export async function runJobLocally(job: KubeObject, secrets: KubeObject[], claims: Record<string, string> = {}): Promise<LocalRun> {
  const dir = mkdtempSync(join(tmpdir(), 'job-'));
  const run: LocalRun = { exitCode: 0, terminationMessage: '', stderr: '', argv: [], ran: [] };
  try {
    for (const container of containersOf(job)) {
      // emptyDir volumes: one folder per volume name for the whole Pod
      const mounts = new Map<string, string>();
      for (const mount of container.volumeMounts ?? []) {
        const local = claims[mount.name] ?? join(dir, 'volumes', mount.name);
        mkdirSync(local, { recursive: true });
        mounts.set(mount.mountPath, local);
      }
      const home = join(dir, `home-${container.name}`);
      mkdirSync(home);
      const terminationLog = join(home, 'termination-log');
      // A container starts with only its own environment: no AWS_CA_BUNDLE (rclone refuses it over plain HTTP).
      const result = await execa(container.command[0]!, container.command.slice(1), {
        env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: home, TMPDIR: home, TERMINATION_LOG: terminationLog, ...resolve(container, secrets, mounts) },
        extendEnv: false,
        reject: false,
      });
      run.ran.push(container.name);
      run.argv.push(...container.command);
      run.stderr += String(result.stderr);
      run.exitCode = result.exitCode ?? -1;
      try {
        run.terminationMessage = readFileSync(terminationLog, 'utf8');
      } catch {
        run.terminationMessage = ''; // no message written: the engine treats that as a failure
      }
      if (run.exitCode !== 0) break;
    }
    return run;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
