// runEvent (in process) must decide exactly what the packed charm's real ./dispatch decides, or fast charm tests
// would prove something about a different program. Each case runs both ways over the same state and compares what
// Juju would keep: statuses, relation data, unit state, action results and failure, logs, and the tool calls made.
// The hook tools on both sides answer by the rules of hook-tool.ts, which cite the juju/juju and canonical/operator
// files they follow.
import { expect } from 'chai';
import { ensureCharmBuilt } from './charm-build.ts';
import { runDispatch, type DispatchEvent } from './harness.ts';
import { runEvent } from './run-event.ts';
import { S3_RELATION_ID, s3Relation, track1Data } from './scenarios.ts';
import { emptyState, type FakeJujuState } from './state.ts';
import { startS3Server, type S3ServerHandle } from '../s3/server.ts';

const BUCKET = 'kubeflow-backups';

/** What Juju keeps of a dispatch, without what differs by nature between the two (times, the bundle's version). */
function kept(state: FakeJujuState) {
  return {
    statuses: state.statusHistory.map(({ status, message }) => ({ status, message })),
    relations: state.relations.map((r) => ({ id: r.id, localAppData: r.localAppData, localUnitData: r.localUnitData })),
    unitState: state.unitState,
    actionResults: state.actionResults,
    actionFailure: state.actionFailure,
    actionLogs: state.actionLogs,
    logs: state.logs.filter((l) => l.level !== 'DEBUG'),
    // As a sorted list: the charm makes some calls concurrently, and their order differs from run to run either way.
    calls: state.calls.map((c) => [c.tool, ...c.args.filter((a) => !/^\d+\.\d+\.\d+$|^dev$/.test(a))].join(' ')).sort(),
  };
}

describe('runEvent: the charm in process decides what the real dispatch decides', function () {
  this.timeout(120_000);
  let charmDir: string;
  let s3: S3ServerHandle;

  before(async function () {
    [charmDir, s3] = await Promise.all([ensureCharmBuilt(), startS3Server({ buckets: [BUCKET] })]);
  });
  after(async () => s3?.stop());

  const cases: { name: string; state: () => FakeJujuState; event: DispatchEvent }[] = [
    { name: 'install without a relation', state: () => emptyState(), event: { event: 'install' } },
    { name: 'relation-joined on the leader', state: () => emptyState({ relations: [s3Relation()] }), event: { event: 's3-credentials-relation-joined', relation: S3_RELATION_ID } },
    { name: 'relation-joined on a follower', state: () => emptyState({ leader: false, relations: [s3Relation()] }), event: { event: 's3-credentials-relation-joined', relation: S3_RELATION_ID } },
    { name: 'relation-changed with track-1 data and a reachable bucket', state: () => emptyState({ relations: [s3Relation(track1Data(s3, BUCKET))] }), event: { event: 's3-credentials-relation-changed', relation: S3_RELATION_ID } },
    { name: 'a bad config value', state: () => emptyState({ config: { 'max-backup-age': 'forever' }, relations: [s3Relation(track1Data(s3, BUCKET))] }), event: { event: 'config-changed' } },
    // (a param the action does not declare never reaches the charm: Juju refuses it, and so does runEvent, consistency.test.ts)
    { name: 'an action with a param value the charm refuses', state: () => emptyState({ actionParams: { namespaces: 'Team A,../etc' } }), event: { event: 'actions/backup-state' } },
    { name: 'a hook the charm does not handle', state: () => emptyState(), event: { event: 'pre-series-upgrade' } },
  ];

  for (const { name, state, event } of cases) {
    it(name, async function () {
      const inProcess = await runEvent(state(), event);
      const dispatched = await runDispatch(charmDir, state(), event);
      expect(inProcess.exitCode).to.equal(dispatched.exitCode);
      expect(inProcess.stdout).to.equal(dispatched.stdout);
      expect(kept(inProcess.state)).to.deep.equal(kept(dispatched.state));
    });
  }
});
