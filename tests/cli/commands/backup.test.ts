// The backup command's text output names every object the backup left out that no controller makes.
import { expect } from 'chai';
import { backupLines } from '../../../src/cli/commands/backup.ts';
import type { BackupOutcome } from '../../../src/backup/engine.ts';

describe('cli backup output', () => {
  it('names each left-out object with its reason, after the left-out namespaces', () => {
    const outcome = {
      backupId: 'kf-20261201-120000-abcdef', location: 's3://b/p/', objects: 3, bytes: 100, skipped: 5, skippedBy: { generated: 4, refused: 1 },
      leftOutNamespaces: [{ namespace: 'old-team', reason: 'it has no Profile' }],
      leftOutObjects: [{ object: 'RoleBinding/alice/ops-root', reason: 'refused: RoleBinding/alice/ops-root binds ClusterRole cluster-admin' }],
      counts: { 'configmaps': 3 }, namespaces: 1, profiles: 1, contributors: 0,
      volumes: { copied: 0, bytes: 0, uploaded: 0, reused: 0 }, sealedSecrets: 0, clearSecrets: 0, durationSeconds: 1,
    } as unknown as BackupOutcome;
    const lines = backupLines(outcome);
    expect(lines).to.include('left out: namespace old-team: it has no Profile');
    expect(lines).to.include('left out: RoleBinding/alice/ops-root: refused: RoleBinding/alice/ops-root binds ClusterRole cluster-admin');
    expect(lines.indexOf('left out: namespace old-team: it has no Profile')).to.be.lessThan(lines.findIndex((l) => l.startsWith('left out: RoleBinding')));
  });
});
