// The small pure parts of the charm: result flattening, progress rate limit, unexpected errors (the status decision
// has its table in status.test.ts, the params theirs in actions/params.test.ts).
import { expect } from 'chai';
import { rateLimitedProgress } from '../../src/charm/action-context.ts';
import { flattenResults } from '../../src/charm/results.ts';
import { describeUnexpected } from '../../src/charm/unexpected.ts';

describe('charm: results, progress', () => {
  it('flattens results into Juju keys', () => {
    expect(flattenResults({ backupId: 'kf-1', backups: [{ id: 'a', bytes: 3 }], ok: true, none: undefined, perKind: { 'Notebook.kubeflow.org': 2 } })).to.deep.equal({
      'backup-id': 'kf-1',
      'backups.0.id': 'a',
      'backups.0.bytes': '3',
      ok: 'true',
      'per-kind.notebook-kubeflow-org': '2',
    });
    expect(() => flattenResults({ stdout: 'x' })).to.throw(/reserved/);
    expect(() => flattenResults({ '---': 'x' })).to.throw(/cannot become an action result key/);
  });

  it('sends at most one progress line per interval and delivers the newest held back', async () => {
    let clock = 0;
    const sent: string[] = [];
    const channel = rateLimitedProgress(async (m) => void sent.push(m), 1000, () => clock);
    await channel.progress('1');
    clock = 500;
    await channel.progress('2');
    await channel.progress('3');
    clock = 1000;
    await channel.progress('4');
    clock = 1200;
    await channel.progress('5');
    await channel.flush();
    await channel.flush();
    expect(sent).to.deep.equal(['1', '4', '5']);
  });

  it('never sends a progress line it has sent before, however much later it comes', async () => {
    let clock = 0;
    const sent: string[] = [];
    const channel = rateLimitedProgress(async (m) => void sent.push(m), 1000, () => clock);
    for (const line of ['filling 2 PVC(s)', 'filling 2 PVC(s)', 'filled 1/2 PVC(s)', 'filling 2 PVC(s)', 'filled 1/2 PVC(s)']) {
      clock += 5000;
      await channel.progress(line);
    }
    await channel.progress('filled 1/2 PVC(s)');
    await channel.flush();
    expect(sent).to.deep.equal(['filling 2 PVC(s)', 'filled 1/2 PVC(s)']);
  });

  it('describes an unexpected error in one line', () => {
    expect(describeUnexpected(new TypeError('x is undefined\n    at y (z.js:1:1)'))).to.equal('TypeError: x is undefined');
    expect(describeUnexpected('str')).to.equal('unknown error');
  });
});
