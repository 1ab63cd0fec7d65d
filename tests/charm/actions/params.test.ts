// parseParams: every action's params as Juju hands them over, one row per rule. Good input is typed with the
// defaults actions.yaml declares; bad input is one sentence naming the parameter, and nothing runs.
import { expect } from 'chai';
import { parseParams, type ActionName } from '../../../src/charm/actions/params.ts';

type Row = { action: ActionName; raw: Record<string, unknown>; params?: Record<string, unknown>; problem?: RegExp };

const rows: Row[] = [
  { action: 'backup-state', raw: {}, params: { namespaces: [], 'include-volumes': true, 'include-control-plane': true, description: '' } },
  { action: 'backup-state', raw: { namespaces: ' alice, ,bob.team ' }, params: { namespaces: ['alice', 'bob.team'] } },
  { action: 'backup-state', raw: { namespaces: 'Alice' }, problem: /^Parameter "namespaces" of backup-state must be a comma-separated list of Kubernetes names\.$/ },
  { action: 'backup-state', raw: { description: 'x'.repeat(1025) }, problem: /^Parameter "description" of backup-state/ },
  { action: 'backup-state', raw: { 'include-volumes': 'yes' }, problem: /^Parameter "include-volumes" of backup-state/ },
  { action: 'restore-state', raw: { 'backup-id': 'latest' }, params: { 'backup-id': 'latest', 'conflict-policy': 'skip', 'dry-run': false, 'include-volumes': true, 'include-control-plane': false, 'skip-refused': false } },
  { action: 'restore-state', raw: { 'backup-id': 'velero-nightly.2025-01-31' }, params: { 'backup-id': 'velero-nightly.2025-01-31' } },
  { action: 'restore-state', raw: {}, problem: /^Parameter "backup-id" of restore-state/ },
  { action: 'restore-state', raw: { 'backup-id': '  ' }, problem: /^Parameter "backup-id" of restore-state is required\.$/ },
  { action: 'restore-state', raw: { 'backup-id': '../../etc' }, problem: /must be a backup id from list-backups, or "latest"\.$/ },
  { action: 'restore-state', raw: { 'backup-id': 'latest', 'conflict-policy': 'overwrite' }, problem: /^Parameter "conflict-policy" of restore-state/ },
  { action: 'restore-state', raw: { 'backup-id': 'latest', 'skip-refused': true }, params: { 'skip-refused': true } },
  { action: 'list-backups', raw: {}, params: { limit: 20 } },
  { action: 'list-backups', raw: { limit: 0 }, problem: /^Parameter "limit" of list-backups/ },
  { action: 'list-backups', raw: { limit: 2.5 }, problem: /^Parameter "limit" of list-backups/ },
  { action: 'migrate-stored-versions', raw: {}, params: { crd: 'all' } },
  { action: 'migrate-stored-versions', raw: { crd: 'notebooks.kubeflow.org' }, params: { crd: 'notebooks.kubeflow.org' } },
  { action: 'migrate-stored-versions', raw: { crd: 'Notebook' }, problem: /must be a CRD name like notebooks\.kubeflow\.org, or "all"\.$/ },
  { action: 'prune-backups', raw: {}, params: { 'dry-run': false } },
  { action: 'pre-upgrade-check', raw: { verbose: true }, problem: /^pre-upgrade-check has no parameter "verbose"\.$/ },
  { action: 'snapshot-profiles', raw: { profiles: 'alice', namespaces: 'x' }, problem: /^snapshot-profiles has no parameter "namespaces"\.$/ },
];

describe('charm/actions/params: parseParams', () => {
  for (const { action, raw, params, problem } of rows) {
    it(`${action} ${JSON.stringify(raw).slice(0, 60)} → ${params ? 'typed params' : 'one sentence'}`, () => {
      const parsed = parseParams(action, raw);
      if (params) {
        expect(parsed.ok, parsed.ok ? '' : parsed.problem).to.equal(true);
        expect(parsed.ok && parsed.params).to.deep.include(params);
      } else {
        expect(parsed.ok).to.equal(false);
        expect(!parsed.ok && parsed.problem).to.match(problem!);
        expect(!parsed.ok && parsed.problem.split('\n')).to.have.length(1);
      }
    });
  }
});
