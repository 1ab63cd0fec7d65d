import { expect } from 'chai';
import { nextSlot, parseSchedule, previousSlot } from '../../src/schedule/cron.ts';

describe('backup-schedule: cron expressions', () => {
  it('takes five fields or a macro, and nothing for an empty text', () => {
    expect(parseSchedule('')).to.equal(undefined);
    expect(parseSchedule('   ')).to.equal(undefined);
    expect(parseSchedule(' 0  2 * * * ')).to.deep.equal({ ok: true, expression: '0 2 * * *' });
    expect(parseSchedule('@daily')).to.deep.equal({ ok: true, expression: '@daily' });
  });

  it('refuses what crontab refuses, in one clause', () => {
    expect(parseSchedule('* * *')).to.deep.equal({ ok: false, problem: 'must be a cron expression of five fields (minute hour day month weekday, e.g. "0 2 * * *"), not 3 fields' });
    // a seconds field: cron-parser would take it, crontab does not
    expect(parseSchedule('0 * * * * *')).to.deep.include({ ok: false });
    const bad = parseSchedule('61 * * * *');
    expect(bad).to.deep.include({ ok: false });
    expect(bad && !bad.ok && bad.problem).to.match(/^must be a cron expression like "0 2 \* \* \*": .*61/);
    expect(parseSchedule('0 0 30 2 *')).to.deep.include({ ok: false });
  });

  it('gives the slots around a time in UTC', () => {
    const at = new Date('2026-12-07T10:05:00Z');
    expect(nextSlot('*/5 * * * *', at).toISOString()).to.equal('2026-12-07T10:10:00.000Z');
    expect(previousSlot('*/5 * * * *', at)?.toISOString()).to.equal('2026-12-07T10:05:00.000Z');
    expect(previousSlot('*/5 * * * *', new Date('2026-12-07T10:04:59.999Z'))?.toISOString()).to.equal('2026-12-07T10:00:00.000Z');
    expect(nextSlot('0 2 * * *', at).toISOString()).to.equal('2026-12-08T02:00:00.000Z');
  });
});
