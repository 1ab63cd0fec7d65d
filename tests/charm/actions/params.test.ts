import { expect } from 'chai';
import { ActionParams } from '../../../src/charm/actions/params.ts';

describe('action params: backup-id', () => {
  const parse = (id: string) => ActionParams['verify-backup'].safeParse({ 'backup-id': id }).success;

  it('takes our ids, latest, and any name Velero gives a backup, dots included', () => {
    for (const id of ['kf-20260101-000000-abcdef', 'latest', 'nightly-20260101', 'daily.2026-01-01', 'velero-kubeflow-20260101020000']) {
      expect(parse(id), id).to.equal(true);
    }
  });

  it('refuses what is not a backup name', () => {
    for (const id of ['../../etc/passwd', 'a/b', 'Upper', '.hidden', 'a..b', '']) expect(parse(id), id).to.equal(false);
  });
});
