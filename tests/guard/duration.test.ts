import { expect } from 'chai';
import { formatAge, parseDuration } from '../../src/guard/duration.ts';

describe('guard durations', () => {
  it('reads max-backup-age the way operators write it', () => {
    expect(parseDuration('24h')).to.equal(86_400_000);
    expect(parseDuration('30m')).to.equal(1_800_000);
    expect(parseDuration('7d')).to.equal(604_800_000);
    expect(parseDuration(' 1h30m ')).to.equal(5_400_000);
  });

  it('refuses anything else in one sentence', () => {
    for (const bad of ['', '24', 'h', '1.5h', '24 hours', '0h', '-1h', '1h 30m']) {
      expect(() => parseDuration(bad), bad).to.throw(`max-backup-age "${bad}" is not a duration like 30m, 24h or 7d.`);
    }
  });

  it('formats ages with their two largest units', () => {
    expect(formatAge(30 * 3_600_000)).to.equal('1d6h');
    expect(formatAge(3 * 3_600_000 + 12 * 60_000 + 5_000)).to.equal('3h12m');
    expect(formatAge(45_000)).to.equal('45s');
    expect(formatAge(0)).to.equal('0s');
  });
});
