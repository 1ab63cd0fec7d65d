import { expect } from 'chai';
import fc from 'fast-check';
import {
  assertBackupId, backupIdTime, backupKeys, backupNameOfFolder, isBackupId, newBackupId, normalizePrefix, VELERO_TOP_LEVEL_FOLDERS,
} from '../../src/store/layout.ts';

describe('store/layout', () => {
  it('makes ids kf-YYYYMMDD-HHMMSS-<6 hex> in UTC that validate and carry their time', () => {
    const at = new Date(Date.UTC(2025, 0, 31, 14, 25, 0));
    const id = newBackupId(at, () => Buffer.from([0xa1, 0xb2, 0xc3]));
    expect(id).to.equal('kf-20250131-142500-a1b2c3');
    expect(isBackupId(id)).to.equal(true);
    expect(backupIdTime(id)?.toISOString()).to.equal(at.toISOString());
  });

  it('every generated id is a valid Kubernetes name and round-trips its time', () => {
    fc.assert(fc.property(fc.date({ min: new Date('2000-01-01'), max: new Date('2999-12-31'), noInvalidDate: true }), (d) => {
      const id = newBackupId(d);
      expect(id).to.match(/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/);
      expect(id.length).to.be.at.most(63);
      expect(backupIdTime(id)?.getTime()).to.equal(Math.floor(d.getTime() / 1000) * 1000);
    }));
  });

  it('refuses ids with impossible dates, wrong case or extra text, in one sentence', () => {
    for (const bad of ['kf-20250231-000000-abcdef', 'kf-20250131-250000-abcdef', 'kf-20250131-142500-ABCDEF', 'kf-20250131-142500-abcdef/..', 'latest', '']) {
      expect(isBackupId(bad), bad).to.equal(false);
    }
    expect(() => assertBackupId('../etc')).to.throw(/"\.\.\/etc" is not a backup id; ids look like kf-/);
  });

  it('lays out every file under backups/<id>/, the only Velero-valid top level it uses', () => {
    const id = 'kf-20250131-142500-a1b2c3';
    const k = backupKeys(id);
    expect(k.tarball).to.equal(`backups/${id}/${id}.tar.gz`);
    expect(k.resourceList).to.equal(`backups/${id}/${id}-resource-list.json.gz`);
    expect(k.logs).to.equal(`backups/${id}/${id}-logs.gz`);
    expect(k.results).to.equal(`backups/${id}/${id}-results.gz`);
    expect(k.manifest).to.equal(`backups/${id}/kubeflow-upgrader.json`);
    expect(k.marker).to.equal(`backups/${id}/velero-backup.json`);
    expect(k.volume('alice', 'workspace')).to.equal(`backups/${id}/volumes/alice/workspace/`);
    expect(k.controlPlane('kfp-db', 'dump/mlpipeline.sql.gz')).to.equal(`backups/${id}/control-plane/kfp-db/dump/mlpipeline.sql.gz`);
    const tops = new Set(Object.values(k).filter((v) => typeof v === 'string').map((v) => (v as string).split('/')[0]));
    expect([...tops].every((t) => (VELERO_TOP_LEVEL_FOLDERS as readonly string[]).includes(t!))).to.equal(true);
    expect(backupNameOfFolder(k.folder)).to.equal(id);
  });

  it('refuses key segments that would escape their folder', () => {
    const k = backupKeys('kf-20250131-142500-a1b2c3');
    expect(() => k.volume('..', 'x')).to.throw(/Namespace "\.\." cannot be used/);
    expect(() => k.volume('alice', 'a/b')).to.throw(/PVC name "a\/b"/);
    expect(() => k.controlPlane('kfp-db', 'a/../b')).to.throw(/File name "\.\."/);
    expect(() => backupKeys('../x')).to.throw();
  });

  it('normalises path prefixes and refuses dot segments', () => {
    expect(normalizePrefix('/kubeflow//prod/')).to.equal('kubeflow/prod');
    expect(normalizePrefix(undefined)).to.equal('');
    expect(() => normalizePrefix('a/../b')).to.throw(/Path prefix segment "\.\."/);
  });
});
