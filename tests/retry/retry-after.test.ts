import { expect } from 'chai';
import fc from 'fast-check';
import { parseRetryAfter } from '../../src/retry/retry-after.ts';

describe('Retry-After', () => {
  const now = Date.parse('2025-01-01T00:00:00Z');
  it('reads delta-seconds', () => {
    expect(parseRetryAfter('7', now)).to.equal(7000);
    expect(parseRetryAfter(' 0 ', now)).to.equal(0);
  });
  it('reads an HTTP date relative to now, never negative', () => {
    expect(parseRetryAfter('Wed, 01 Jan 2025 00:00:30 GMT', now)).to.equal(30_000);
    expect(parseRetryAfter('Tue, 31 Dec 2024 23:00:00 GMT', now)).to.equal(0);
  });
  it('ignores what it cannot read', () => {
    for (const value of [undefined, null, '', 'soon', '-5', '1.5']) expect(parseRetryAfter(value, now)).to.equal(undefined);
  });
  it('never throws and never returns a negative wait', () => {
    fc.assert(
      fc.property(fc.string(), (value) => {
        const ms = parseRetryAfter(value, now);
        return ms === undefined || ms >= 0;
      }),
      { numRuns: 1000 },
    );
  });
});
