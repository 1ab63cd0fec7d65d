import { expect } from 'chai';
import { ManualClock } from '../../src/retry/clock.ts';
import { classifyStatus, classifyNetworkError, type Classifier } from '../../src/retry/classification.ts';
import { RetryError, RetryPolicy, type CallDescription } from '../../src/retry/policy.ts';

class HttpFailure extends Error {
  constructor(readonly status: number, readonly retryAfterMs?: number) {
    super(`HTTP ${status}`);
  }
}
const classify: Classifier = (error) =>
  error instanceof HttpFailure ? classifyStatus(error.status, undefined, error.retryAfterMs) : classifyNetworkError(error) ?? { kind: 'unknown', retryable: false, notActedOn: false };

const read: CallDescription = { verb: 'get', target: 'notebooks alice/nb1', idempotent: true };
const create: CallDescription = { verb: 'create', target: 'notebooks alice/nb1', idempotent: false };

function failing(errors: unknown[], value = 'ok') {
  let calls = 0;
  const fn = async () => {
    const error = errors[calls++];
    if (error !== undefined) throw error;
    return value;
  };
  return { fn, calls: () => calls };
}

function reset(): Error {
  return Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' });
}

describe('retry policy', () => {
  it('retries a transient failure of a read and returns the result', async () => {
    const clock = new ManualClock();
    const policy = new RetryPolicy({ baseDelayMs: 100 }, clock, () => 0.5);
    const op = failing([new HttpFailure(503), reset(), new HttpFailure(500)]);
    expect(await policy.run(read, classify, op.fn)).to.equal('ok');
    expect(op.calls()).to.equal(4);
    // equal jitter with random 0.5: three quarters of each exponential step
    expect(clock.sleeps).to.deep.equal([75, 150, 300]);
  });

  it('keeps every backoff step between half the step and the cap', () => {
    for (const r of [0, 0.999]) {
      const policy = new RetryPolicy({ baseDelayMs: 100, maxDelayMs: 1000 }, new ManualClock(), () => r);
      const steps = [1, 2, 3, 4, 5, 6, 20].map((n) => policy.backoffMs(n));
      for (const [i, step] of steps.entries()) {
        const nominal = Math.min(1000, 100 * 2 ** ([1, 2, 3, 4, 5, 6, 20][i]! - 1));
        expect(step).to.be.within(nominal / 2, nominal);
      }
    }
  });

  it('waits at least what Retry-After asks, even beyond the backoff cap', async () => {
    const clock = new ManualClock();
    const policy = new RetryPolicy({ baseDelayMs: 10, maxDelayMs: 100 }, clock, () => 0);
    const op = failing([new HttpFailure(429, 3000)]);
    await policy.run(create, classify, op.fn);
    expect(clock.sleeps).to.deep.equal([3000]);
  });

  it('does not resend a non-idempotent call the server may have acted on', async () => {
    const policy = new RetryPolicy({}, new ManualClock(), () => 0);
    for (const error of [new HttpFailure(500), new HttpFailure(503), reset()]) {
      const op = failing([error]);
      const thrown = await policy.run(create, classify, op.fn).catch((e: unknown) => e);
      expect(op.calls()).to.equal(1);
      expect(thrown).to.be.instanceOf(RetryError);
      expect((thrown as RetryError).summary.stoppedBecause).to.equal('not safe to resend');
    }
  });

  it('resends a non-idempotent call the server refused before acting (429, connection refused)', async () => {
    const policy = new RetryPolicy({}, new ManualClock(), () => 0);
    const refused = Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' });
    const op = failing([new HttpFailure(429), refused]);
    expect(await policy.run(create, classify, op.fn)).to.equal('ok');
    expect(op.calls()).to.equal(3);
  });

  it('passes a client error through untouched, after one attempt', async () => {
    const policy = new RetryPolicy({}, new ManualClock(), () => 0);
    const notFound = new HttpFailure(404);
    const op = failing([notFound]);
    const thrown = await policy.run(read, classify, op.fn).catch((e: unknown) => e);
    expect(thrown).to.equal(notFound);
    expect(op.calls()).to.equal(1);
  });

  it('gives up at the deadline with one sentence naming verb, target, status and attempts', async () => {
    const clock = new ManualClock();
    const policy = new RetryPolicy({ baseDelayMs: 1000, maxDelayMs: 4000, deadlineMs: 10_000, maxAttempts: 100 }, clock, () => 0.999);
    const op = failing(Array.from({ length: 100 }, () => new HttpFailure(503)));
    const thrown = (await policy.run(read, classify, op.fn).catch((e: unknown) => e)) as RetryError;
    expect(thrown).to.be.instanceOf(RetryError);
    expect(thrown.summary.stoppedBecause).to.equal('deadline');
    expect(clock.now()).to.be.at.most(10_000);
    expect(thrown.message).to.match(/^get notebooks alice\/nb1 failed after \d+ attempts over [\d.]+s \(503 unavailable: HTTP 503\)\.$/);
    expect(thrown.status).to.equal(503);
    expect(thrown.attempts).to.equal(op.calls());
  });

  it('gives up when the server asks to wait past the deadline, without sleeping', async () => {
    const clock = new ManualClock();
    const policy = new RetryPolicy({ deadlineMs: 5000 }, clock, () => 0);
    const op = failing([new HttpFailure(429, 60_000)]);
    const thrown = (await policy.run(read, classify, op.fn).catch((e: unknown) => e)) as RetryError;
    expect(thrown.summary.stoppedBecause).to.equal('deadline');
    expect(clock.sleeps).to.deep.equal([]);
  });

  it('stops after maxAttempts and lets the caller shape the final error', async () => {
    const policy = new RetryPolicy({ maxAttempts: 3 }, new ManualClock(), () => 0);
    const op = failing(Array.from({ length: 10 }, () => reset()));
    const thrown = await policy
      .run(read, classify, op.fn, { giveUp: (_e, s) => new Error(`gave up: ${s.stoppedBecause} after ${s.attempts}`) })
      .catch((e: unknown) => (e as Error).message);
    expect(thrown).to.equal('gave up: attempts after 3');
    expect(op.calls()).to.equal(3);
  });

  it('reports each retry to the hook with the wait it will take', async () => {
    const seen: Array<[string, number]> = [];
    const policy = new RetryPolicy({ baseDelayMs: 10 }, new ManualClock(), () => 0);
    await policy.run(read, classify, failing([new HttpFailure(502), reset()]).fn, {
      onRetry: (_e, s, delay) => seen.push([s.classification.kind, delay]),
    });
    expect(seen).to.deep.equal([
      ['unavailable', 5],
      ['connection-reset', 10],
    ]);
  });

  it('stops retrying once the caller aborts', async () => {
    const controller = new AbortController();
    const policy = new RetryPolicy({}, new ManualClock(), () => 0);
    let calls = 0;
    const thrown = await policy
      .run(read, classify, async () => {
        calls++;
        controller.abort();
        throw new HttpFailure(503);
      }, { signal: controller.signal })
      .catch((e: unknown) => e as RetryError);
    expect(calls).to.equal(1);
    expect((thrown as RetryError).summary.stoppedBecause).to.equal('aborted');
  });
});
