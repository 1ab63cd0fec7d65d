// The restore's wait for admission webhooks the API server cannot call yet, on writes that fail with kube-apiserver's
// own sentence (validating/dispatcher.go under failurePolicy Fail) until the webhook's operator is "ready": the writes
// of one webhook wait together and go on once it answers, each waiting write lends its slot, and when the wait ends
// the objects are named once per webhook.
import { expect } from 'chai';
import { KubeApiError } from '../../src/kube/errors.ts';
import { WebhookUnreachableError, WebhookWait } from '../../src/restore/webhook-wait.ts';

const refused = (webhook: string) => new KubeApiError(500, 'InternalError',
  `Internal error occurred: failed calling webhook "${webhook}": failed to call webhook: Post "https://katib-controller.kubeflow.svc:443/validate-experiment?timeout=10s": dial tcp 10.152.183.7:443: connect: connection refused`,
  undefined, { verb: 'create', resource: 'experiments', namespace: 'alice', name: 'e' });

describe('waiting for admission webhooks', () => {
  it('retries the writes of a webhook together once it answers, and lends each waiting write\'s slot meanwhile', async () => {
    let ready = false;
    let lent = 0;
    let mostLent = 0;
    const lines: string[] = [];
    const wait = new WebhookWait(30_000, (line) => {
      lines.push(line);
      // the sign: the wait is announced once all three writes wait; only then does the operator become ready
      if (line.startsWith('waiting for admission webhook "v.katib"')) ready = true;
    }, undefined, (waiting) => { lent += waiting ? 1 : -1; mostLent = Math.max(mostLent, lent); });
    let calls = 0;
    const write = (name: string) => wait.write(name, async () => {
      calls++;
      if (!ready) throw refused('v.katib');
      return name;
    });
    expect(await Promise.all([write('Experiment/alice/a'), write('Experiment/alice/b'), write('Experiment/alice/c')])).to.deep.equal(['Experiment/alice/a', 'Experiment/alice/b', 'Experiment/alice/c']);
    expect(lines[0]).to.equal('admission webhook "v.katib" cannot be called yet (Post "https://katib-controller.kubeflow.svc:443/validate-experiment?timeout=10s": dial tcp 10.152.183.7:443: connect: connection refused): waiting for it (30 s left of the 30 s the restore waits for webhooks), its objects retried meanwhile');
    expect(lines[1]).to.match(/^waiting for admission webhook "v\.katib": 3 object\(s\) wait on it, \d+ s so far \(\d+ s of at most 30 s for all webhooks\)$/);
    expect(calls).to.equal(6);
    expect(mostLent).to.equal(3);
    expect(lent).to.equal(0);
    expect(wait.waitedMs).to.be.greaterThan(0);
    expect(wait.finish()).to.deep.equal([]);
  });

  it('passes any other error through as it is', async () => {
    const wait = new WebhookWait(30_000, () => undefined);
    const denied = new KubeApiError(400, 'Forbidden', 'experiments.kubeflow.org "e" is forbidden: admission webhook "v.katib" denied the request: spec: Required value', undefined, { verb: 'create', resource: 'experiments' });
    let thrown: unknown;
    try {
      await wait.write('Experiment/alice/e', () => Promise.reject(denied));
    } catch (error) {
      thrown = error;
    }
    expect(thrown).to.equal(denied);
  });

  it('without a wait (a dry run) fails each write at once and names them all in one warning per webhook', async () => {
    const wait = new WebhookWait(0, () => undefined, undefined, undefined, true);
    const outcomes = await Promise.allSettled(['Experiment/alice/a', 'Experiment/bob/b'].map((name) => wait.write(name, () => Promise.reject(refused('v.katib')))));
    expect(outcomes.map((o) => (o as PromiseRejectedResult).reason)).to.satisfy((errors: unknown[]) => errors.every((e) => e instanceof WebhookUnreachableError));
    expect((outcomes[0] as PromiseRejectedResult).reason.message).to.equal('Experiment/alice/a: not checked, because the API server could not call admission webhook "v.katib" (see the warning)');
    expect(wait.finish()).to.deep.equal([
      'admission webhook "v.katib" could not be called (a dry run does not wait): Post "https://katib-controller.kubeflow.svc:443/validate-experiment?timeout=10s": dial tcp 10.152.183.7:443: connect: connection refused. 2 object(s) it must admit were not checked: Experiment/alice/a, Experiment/bob/b. Its operator is likely still starting; a restore waits for it, for at most the wait timeout.',
    ]);
  });

  it('gives up when the wait ends, and a write that meets the webhook afterwards fails at once', async () => {
    const wait = new WebhookWait(1_500, () => undefined);
    const started = Date.now();
    let error: unknown;
    try {
      await wait.write('InferenceService/alice/iris', () => Promise.reject(refused('d.kserve')));
    } catch (e) {
      error = e;
    }
    expect(error).to.be.instanceOf(WebhookUnreachableError);
    expect(Date.now() - started).to.be.at.least(1_400);
    const later = Date.now();
    await wait.write('InferenceService/bob/iris', () => Promise.reject(refused('d.kserve'))).catch((e: unknown) => { error = e; });
    expect(Date.now() - later).to.be.lessThan(500);
    // the wait timeout bounds the waiting of the whole run: another webhook met afterwards is not waited for either
    const other = Date.now();
    await wait.write('Experiment/alice/e', () => Promise.reject(refused('v.katib'))).catch(() => undefined);
    expect(Date.now() - other).to.be.lessThan(500);
    const [warning, katib] = wait.finish();
    expect(katib).to.match(/^admission webhook "v\.katib" could not be called within the wait timeout \(2 s\): .* 1 object\(s\) it must admit were not restored: Experiment\/alice\/e\./);
    expect(warning).to.match(/^admission webhook "d\.kserve" could not be called within the wait timeout \(2 s\): .* 2 object\(s\) it must admit were not restored: InferenceService\/alice\/iris, InferenceService\/bob\/iris\. .* \(or raise the wait timeout\)\.$/);
  });
});
