// decideStatus, the unit's status as a pure function of a dispatch's facts: one row per rule, read top to bottom in
// the order the rules apply (removal, config, the S3 relation, blocked notes, waiting, active with its notes).
import { expect } from 'chai';
import { decideStatus, type StatusFacts, type UnitStatus } from '../../src/charm/status.ts';

const ready = { state: 'ready', bucket: 'b', path: 'p' } as const;
const note = (level: 'blocked' | 'waiting' | 'active', text: string) => ({ level, text });
const RELATE = 'relate to s3-integrator: juju integrate kubeflow-upgrader s3-integrator';

const rows: { rule: string; facts: StatusFacts; status: UnitStatus }[] = [
  { rule: 'removal wins over everything', facts: { removing: true, configProblem: 'bad', s3: { state: 'no-relation' } }, status: { status: 'maintenance', message: 'removing' } },
  { rule: 'a config problem blocks before any S3 fact', facts: { configProblem: 'config option x is bad', s3: { state: 'no-relation' } }, status: { status: 'blocked', message: 'config option x is bad' } },
  { rule: 'no relation blocks with the command that relates', facts: { s3: { state: 'no-relation' }, notes: [note('active', 'CRDs guarded')] }, status: { status: 'blocked', message: RELATE } },
  { rule: 'invalid relation data blocks with its sentence', facts: { s3: { state: 'invalid', problem: 'the bucket name "A" is not valid' } }, status: { status: 'blocked', message: 'the bucket name "A" is not valid' } },
  { rule: 'an unusable bucket blocks with the fact and the charm\'s fix', facts: { s3: { state: 'unusable', problem: { kind: 'wrong-region', fact: 'bucket "b" is in region eu-west-1, not us-east-1', remedy: { setting: 'region', region: 'eu-west-1' } } } }, status: { status: 'blocked', message: 'bucket "b" is in region eu-west-1, not us-east-1; set region=eu-west-1 on s3-integrator' } },
  { rule: 'a problem that has no fix is the fact alone, on one line', facts: { s3: { state: 'unusable', problem: { kind: 'tls', fact: 'TLS failed\n  at x.js:1', remedy: { setting: 'none' } } } }, status: { status: 'blocked', message: 'TLS failed' } },
  { rule: 'a blocked note blocks a ready unit', facts: { s3: ready, notes: [note('active', 'CRDs guarded'), note('blocked', 'CRD guard not installed: forbidden')] }, status: { status: 'blocked', message: 'CRD guard not installed: forbidden' } },
  { rule: 'a blocked note blocks a waiting unit too', facts: { s3: { state: 'waiting', message: 'waiting for s3-integrator' }, notes: [note('blocked', 'guard missing')] }, status: { status: 'blocked', message: 'guard missing' } },
  { rule: 'the first blocked note is the one shown', facts: { s3: ready, notes: [note('blocked', 'first'), note('blocked', 'second')] }, status: { status: 'blocked', message: 'first' } },
  { rule: 'S3 waiting holds the unit in waiting', facts: { s3: { state: 'waiting', message: 'waiting for x' }, notes: [note('waiting', 'kfp-db request not written')] }, status: { status: 'waiting', message: 'waiting for x' } },
  { rule: 'a waiting note holds a ready unit in waiting', facts: { s3: ready, notes: [note('active', 'CRDs guarded'), note('waiting', 'kfp-db request not written')] }, status: { status: 'waiting', message: 'kfp-db request not written' } },
  { rule: 'active says where backups go, then every active note in order', facts: { s3: ready, notes: [note('active', 'guard active'), note('active', 'last backup 2h ago')] }, status: { status: 'active', message: 'backups to s3://b/p; guard active; last backup 2h ago' } },
  { rule: 'a bucket root has no trailing slash', facts: { s3: { state: 'ready', bucket: 'b', path: '' } }, status: { status: 'active', message: 'backups to s3://b' } },
  { rule: 'a long note is cut to one status line', facts: { s3: ready, notes: [note('blocked', 'x'.repeat(300))] }, status: { status: 'blocked', message: `${'x'.repeat(237)}...` } },
];

describe('charm/status: decideStatus', () => {
  for (const { rule, facts, status } of rows) it(rule, () => expect(decideStatus(facts)).to.deep.equal(status));
});
