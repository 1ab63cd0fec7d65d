// CPU seconds a process has used, from /proc/<pid>/stat (Linux, where the simulated kubelet runs its containers): its
// own, and that of its children it has reaped. A bench that runs the kubelet in its own process finds the mover
// containers' CPU (sh, rclone) under `children` once each container has exited, apart from the S3 server's process.
import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';

export interface CpuSeconds {
  own: number;
  children: number;
}

let ticksPerSecond: number | undefined;

function clockTicks(): number {
  ticksPerSecond ??= Number(spawnSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).stdout.trim()) || 100;
  return ticksPerSecond;
}

export function cpuSeconds(pid: number | 'self'): CpuSeconds {
  // the command name (field 2) may hold spaces; the fields after its closing parenthesis start at field 3 (state)
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ').map(Number);
  const at = (field: number) => fields[field - 3]!;
  const ticks = clockTicks();
  return { own: (at(14) + at(15)) / ticks, children: (at(16) + at(17)) / ticks };
}

/** CPU seconds used between two readings. */
export function cpuSpent(before: CpuSeconds, after: CpuSeconds): CpuSeconds {
  return { own: after.own - before.own, children: after.children - before.children };
}

/** CPU seconds of a process and every live descendant (a launcher may run the real server as its child). */
export function treeCpuSeconds(pid: number): number {
  let total = 0;
  const seen = new Set<number>();
  const visit = (p: number) => {
    if (seen.has(p)) return;
    seen.add(p);
    try {
      total += cpuSeconds(p).own;
      for (const task of readdirSync(`/proc/${p}/task`)) {
        const children = readFileSync(`/proc/${p}/task/${task}/children`, 'utf8').trim();
        for (const child of children ? children.split(' ') : []) visit(Number(child));
      }
    } catch {
      // the process ended meanwhile: its CPU is gone with it
    }
  };
  visit(pid);
  return total;
}
