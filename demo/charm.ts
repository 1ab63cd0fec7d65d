// The packed charm, run as Juju would: built, zipped into a .charm with its own Node 24, unzipped with file modes, and
// its real ./dispatch run per event with the fake hook tools; the Juju state is carried from one event to the next.
import { statSync } from 'node:fs';
import { join } from 'node:path';
import { buildCharm } from '../scripts/build.ts';
import { packCharm } from '../scripts/pack.ts';
import { runDispatch, unitStatus, type DispatchOutcome } from '../tests/support/juju/harness.ts';
import { s3Relation, S3_RELATION_ID } from '../tests/support/juju/scenarios.ts';
import { emptyState, type FakeJujuState } from '../tests/support/juju/state.ts';
import { unpackCharm } from '../tests/support/juju/unpack.ts';
import { demoS3Databag } from './s3.ts';

export interface PackedCharm {
  file: string;
  bytes: number;
  dir: string;
}

export async function packAndUnpack(work: string): Promise<PackedCharm> {
  const built = await buildCharm({ outDir: join(work, 'charm-build') });
  // The runtime is stored uncompressed: a bigger file, but packing takes a second instead of half a minute.
  const file = await packCharm({ charmDir: built, output: join(work, 'kubeflow-upgrader.charm'), storeRuntime: true });
  const dir = join(work, 'charm');
  await unpackCharm(file, dir);
  return { file, bytes: statSync(file).size, dir };
}

export class DeployedCharm {
  private state: FakeJujuState;

  constructor(private readonly charm: PackedCharm, s3: { endpoint: string; accessKeyId: string; secretAccessKey: string }, bucket: string) {
    this.state = emptyState({ relations: [s3Relation(demoS3Databag(s3, bucket))] });
  }

  /** what `juju config` would set; the next hook sees it */
  configure(config: Record<string, unknown>): void {
    this.state = { ...this.state, config: { ...this.state.config, ...config } };
  }

  /** a hook; the state it leaves is the next event's input. `env` adds to Juju's (where the workload container is) */
  async hook(event: string, kubeconfig: string, relation?: string, env: Record<string, string> = {}): Promise<DispatchOutcome> {
    const outcome = await runDispatch(this.charm.dir, this.fresh(), { event, env: { KUBECONFIG: kubeconfig, ...env }, ...(relation ? { relation } : {}) });
    this.state = outcome.state;
    return outcome;
  }

  relationChanged(kubeconfig: string): Promise<DispatchOutcome> {
    return this.hook('s3-credentials-relation-changed', kubeconfig, S3_RELATION_ID);
  }

  async action(name: string, params: Record<string, unknown>, kubeconfig: string): Promise<DispatchOutcome> {
    const outcome = await runDispatch(this.charm.dir, { ...this.fresh(), actionParams: params }, { event: `actions/${name}`, env: { KUBECONFIG: kubeconfig } });
    this.state = { ...outcome.state, actionParams: undefined };
    return outcome;
  }

  status(): { status: string; message: string } | undefined {
    return unitStatus(this.state);
  }

  /** what the charm did in the last event only */
  private fresh(): FakeJujuState {
    const { actionParams: _params, ...rest } = this.state;
    return { ...rest, actionFailure: undefined, actionResults: {}, actionLogs: [], logs: [], calls: [], relationSets: [], statusHistory: this.state.statusHistory.slice(-1) } as FakeJujuState;
  }
}
