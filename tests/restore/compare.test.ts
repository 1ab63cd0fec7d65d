// The state comparison with the restore's named skips: expected absences are reported as such, never as losses.
import { expect } from 'chai';
import { compareStates, describeDifferences, isDifference, parseNamedSkips } from '../../src/restore/compare.ts';
import type { KubeObject } from '../../src/kube/types.ts';

const job = (name: string): KubeObject => ({ apiVersion: 'batch/v1', kind: 'Job', metadata: { name, namespace: 'alice' }, spec: { template: {} } });

describe('compareStates with the restore\'s named skips', () => {
  it('parses namespaced and cluster-scoped lines, and ignores the "and N more" of a capped list', () => {
    expect(parseNamedSkips(['Job/alice/done: not restored: finished', 'Profile/bob: refused: x', 'and 3 more'])).to.deep.equal([
      { kind: 'Job', namespace: 'alice', name: 'done', reason: 'not restored: finished' },
      { kind: 'Profile', namespace: '', name: 'bob', reason: 'refused: x' },
    ]);
  });

  it('reports a named object that is absent as skipped with its reason, and one not named as missing', () => {
    const differences = compareStates([job('done'), job('lost')], [], parseNamedSkips(['Job/alice/done: not restored: finished']));
    expect(describeDifferences(differences)).to.deep.equal(['batch/Job/alice/done: skipped by the restore: not restored: finished', 'batch/Job/alice/lost: missing']);
    expect(differences.filter(isDifference).map((d) => d.object)).to.deep.equal(['batch/Job/alice/lost']);
  });

  it('compares a named object that is there after all like any other', () => {
    const changed = { ...job('done'), spec: { template: { x: 1 } } };
    const differences = compareStates([job('done')], [changed], parseNamedSkips(['Job/alice/done: not restored: finished']));
    expect(differences).to.deep.equal([{ object: 'batch/Job/alice/done', problem: 'different', fields: ['spec.template.x'] }]);
  });
});
