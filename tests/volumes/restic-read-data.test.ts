// read-data as restic 0.14's `check` takes it (restic/restic cmd/restic/cmd_check.go at v0.14.0, checkFlags): a table,
// one row per value, with the flag restic gets or the refusal.
import { expect } from 'chai';
import { parseReadData, readDataFlag } from '../../src/volumes/restic/read-data.ts';

const rows: Array<[string, string | undefined | 'refused']> = [
  ['none', undefined],
  ['', undefined],
  ['full', '--read-data'],
  ['10%', '--read-data-subset=10%'],
  ['2.5%', '--read-data-subset=2.5%'],
  ['100%', '--read-data-subset=100%'],
  ['1/5', '--read-data-subset=1/5'],
  ['256/256', '--read-data-subset=256/256'],
  ['500M', '--read-data-subset=500M'],
  ['2g', '--read-data-subset=2g'],
  ['4096', '--read-data-subset=4096'],
  // restic refuses these (checkFlags): 0%, above 100%, n = 0, n > t, t > 256, a size of 0
  ['0%', 'refused'],
  ['100.5%', 'refused'],
  ['0/5', 'refused'],
  ['6/5', 'refused'],
  ['1/257', 'refused'],
  ['0M', 'refused'],
  // and anything that is none of the forms
  ['all', 'refused'],
  ['10 %', 'refused'],
  ['-1/2', 'refused'],
  ['1/2; rm -rf /', 'refused'],
  ['5X', 'refused'],
];

describe('volumes: restic read-data values', () => {
  for (const [value, expected] of rows) {
    it(`${JSON.stringify(value)} → ${expected ?? 'a plain check'}`, () => {
      const parsed = parseReadData(value);
      if (expected === 'refused') expect(parsed).to.equal(undefined);
      else expect(readDataFlag(parsed!)).to.equal(expected);
    });
  }
});
