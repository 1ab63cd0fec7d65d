// A restore into fresh clusters whose Katib, KServe and training-operator webhooks are configured but not ready yet
// (tests/support/cluster/kubeflow/webhook-operators.ts: the operator Pods are not Ready, so kube-apiserver answers every
// matching write with its 500 "failed calling webhook"). The source runs the same webhooks, ready, so its Experiment,
// InferenceService and PyTorchJob went through them as users' objects do.
// - waits: the operators become Ready only once the restore says it is waiting for their webhook (the sign), and the
//   restore goes on and restores everything in the one run;
// - reports: with a wait shorter than the operators take, the restore fails those objects with one sentence each and
//   one warning per webhook naming them; once the Pods are Ready, a rerun restores them and leaves the rest as it is.
import { expect } from 'chai';
import { S3Client } from '@aws-sdk/client-s3';
import { backupStore } from '../support/backup-store.ts';
import { startCluster, type RunningCluster } from '../support/cluster/index.ts';
import type { WebhookOperator } from '../support/cluster/kubeflow/webhook-operators.ts';
import { startS3Server, type S3ServerHandle } from '../support/s3/server.ts';
import { KubeClient } from '../../src/kube/client.ts';
import { ObjectStore } from '../../src/store/objects.ts';
import { runBackup } from '../../src/backup/engine.ts';
import { runRestore, type RestoreOutcome } from '../../src/restore/engine.ts';
import { collectUserState, compareStates, describeDifferences, isDifference, parseNamedSkips } from '../../src/restore/compare.ts';

const PROFILES = { group: 'kubeflow.org', resource: 'profiles' };
const EXPERIMENTS = { group: 'kubeflow.org', resource: 'experiments' };
const ISVCS = { group: 'serving.kserve.io', resource: 'inferenceservices' };
const PYTORCHJOBS = { group: 'kubeflow.org', resource: 'pytorchjobs' };

/** which operator serves a webhook, by the names the charms give them */
function operatorOf(webhook: string): WebhookOperator {
  if (webhook.endsWith('.katib.kubeflow.org')) return 'katib-controller';
  if (webhook.startsWith('inferenceservice.kserve-webhook-server.')) return 'kserve-controller';
  if (webhook.endsWith('.training-operator.kubeflow.org')) return 'training-operator';
  throw new Error(`no simulated operator serves ${webhook}`);
}

describe('restore into a fresh cluster whose Kubeflow webhooks are not ready yet', function () {
  this.timeout(180_000);
  let source: RunningCluster;
  let s3: S3ServerHandle;
  let kubeSource: KubeClient;
  let store: ObjectStore;
  let backupId: string;
  let namespace: string;
  const targets: RunningCluster[] = [];
  const clients: KubeClient[] = [];

  async function freshTarget(): Promise<{ target: RunningCluster; kube: KubeClient }> {
    const target = await startCluster({ seed: 31, kubeflowWebhooks: { ready: false } });
    targets.push(target);
    const kube = await KubeClient.load({ kubeconfig: target.kubeconfigPath, concurrency: 4 });
    clients.push(kube);
    return { target, kube };
  }

  async function sameAsSource(kube: KubeClient, outcome: RestoreOutcome): Promise<string[]> {
    const [before, after] = await Promise.all([collectUserState(kubeSource), collectUserState(kube)]);
    return describeDifferences(compareStates(before, after, parseNamedSkips(outcome.skippedObjects)).filter(isDifference));
  }

  before(async () => {
    [source, s3] = await Promise.all([
      startCluster({ profiles: 1, seed: 31, kubeflowWebhooks: { ready: true } }),
      startS3Server({ buckets: ['webhooks'] }),
    ]);
    kubeSource = await KubeClient.load({ kubeconfig: source.kubeconfigPath, concurrency: 4 });
    namespace = source.api.list(PROFILES)[0]!.metadata.name!;
    const client = new S3Client({ endpoint: s3.endpoint, region: 'us-east-1', forcePathStyle: true, credentials: { accessKeyId: s3.accessKeyId, secretAccessKey: s3.secretAccessKey } });
    store = new ObjectStore({ client, bucket: 'webhooks', prefix: 'kf' });
    const backup = await runBackup(kubeSource, backupStore(store), {
      kind: 'backup-state', includeVolumes: false, includeControlPlane: false, toolVersion: 'test', namespaces: [namespace],
      profileNamespaceSelector: 'app.kubernetes.io/part-of=kubeflow-profile', protectedCrdGroups: ['kubeflow.org'],
    });
    backupId = backup.backupId;
  });
  after(async () => {
    for (const kube of [kubeSource, ...clients]) kube?.close();
    await Promise.all([source?.stop(), s3?.stop(), ...targets.map((t) => t.stop())]);
  });

  it('the source holds what the webhooks admitted and defaulted: an Experiment, an InferenceService and a PyTorchJob', () => {
    const experiment = source.api.list(EXPERIMENTS, { namespace })[0]!;
    expect((experiment.spec as { resumePolicy?: string }).resumePolicy).to.equal('Never');
    expect(source.api.list(ISVCS, { namespace })).to.have.length.greaterThan(0);
    expect(source.api.list(PYTORCHJOBS, { namespace })).to.have.length.greaterThan(0);
  });

  it('waits for each webhook while the restore says so, and restores everything in one run once the operators are Ready', async () => {
    const { target, kube } = await freshTarget();
    const lines: string[] = [];
    const readied = new Set<WebhookOperator>();
    const outcome = await runRestore(kube, backupStore(store), {
      backupId, waitTimeoutMs: 60_000, progressIntervalMs: 100,
      progress: (line) => {
        lines.push(line);
        // the sign: the restore says it waits for a webhook; its operator's Pod then becomes Ready
        const waitingFor = /^admission webhook "([^"]+)" cannot be called yet/.exec(line)?.[1];
        if (!waitingFor) return;
        const operator = operatorOf(waitingFor);
        if (readied.has(operator)) return;
        readied.add(operator);
        target.kubeflowWebhooks!.setReady(operator, true);
      },
    });
    expect([...readied].sort()).to.deep.equal(['katib-controller', 'kserve-controller', 'training-operator']);
    expect(lines.filter((l) => /cannot be called yet \(Post "[^"]+": dial tcp [0-9.]+:443: connect: connection refused\)/.test(l))).to.have.length.greaterThanOrEqual(3);
    expect(outcome.failures).to.deep.equal([]);
    expect(outcome.totals.failed).to.equal(0);
    expect(outcome.warnings.filter((w) => w.includes('admission webhook'))).to.deep.equal([]);
    expect(outcome.waits.webhooksMs).to.be.greaterThan(0);
    expect(target.api.list(EXPERIMENTS, { namespace })).to.have.length(source.api.list(EXPERIMENTS, { namespace }).length);
    expect(await sameAsSource(kube, outcome)).to.deep.equal([]);
  });

  it('reports once per webhook what waits on it when the wait ends first, and a rerun converges once the operators are Ready', async () => {
    const { target, kube } = await freshTarget();
    const first = await runRestore(kube, backupStore(store), { backupId, waitTimeoutMs: 3_000 });
    const webhookWarnings = first.warnings.filter((w) => w.startsWith('admission webhook "'));
    // the mutating webhooks are called first, so they are the ones the server could not call
    expect(webhookWarnings.map((w) => /^admission webhook "([^"]+)"/.exec(w)![1]).sort()).to.deep.equal([
      'defaulter.experiment.katib.kubeflow.org', 'inferenceservice.kserve-webhook-server.defaulter', 'validator.pytorchjob.training-operator.kubeflow.org',
    ]);
    const katib = webhookWarnings.find((w) => w.includes('katib'))!;
    expect(katib).to.match(/^admission webhook "defaulter\.experiment\.katib\.kubeflow\.org" could not be called within the wait timeout \(3 s\): Post "https:\/\/katib-controller\.kubeflow\.svc:443\/mutate-experiment\?timeout=10s": dial tcp [0-9.]+:443: connect: connection refused\. 1 object\(s\) it must admit were not restored: Experiment\/[^/]+\/random-search\. /);
    expect(katib).to.include('once its Pod is Ready, run a restore again: it creates these and leaves what was restored as it is (or raise the wait timeout).');
    // one sentence per object, naming its webhook, instead of the server's 500 retried and repeated
    const failed = first.failures.filter((f) => f.includes('admission webhook'));
    expect(failed.length).to.equal(first.totals.failed);
    expect(failed.every((f) => /: not restored, because the API server could not call admission webhook "[^"]+" \(see the warning\)$/.test(f))).to.equal(true);
    expect(first.failures.join('\n')).to.not.include('Internal error occurred');
    expect(target.api.list(EXPERIMENTS, { namespace })).to.deep.equal([]);
    expect(first.totals.created).to.be.greaterThan(0);

    for (const operator of target.kubeflowWebhooks!.operators) target.kubeflowWebhooks!.setReady(operator, true);
    const rerun = await runRestore(kube, backupStore(store), { backupId, waitTimeoutMs: 3_000 });
    expect(rerun.failures).to.deep.equal([]);
    expect(rerun.totals.created).to.equal(first.totals.failed);
    expect(rerun.totals.updated).to.equal(0);
    expect(await sameAsSource(kube, rerun)).to.deep.equal([]);
  });

  it('a training job created suspended whose webhook stops answering before the resume is named as not resumed, and a rerun resumes it', async () => {
    const target = await startCluster({ seed: 31, kubeflowWebhooks: { ready: true } });
    targets.push(target);
    const kube = await KubeClient.load({ kubeconfig: target.kubeconfigPath, concurrency: 4 });
    clients.push(kube);
    // the sign: the restore's create of the PyTorchJob; right after it the training operator's Pod stops being Ready
    const unsubscribe = target.api.subscribe((event) => {
      if (event.type === 'ADDED' && event.ref.resource === 'pytorchjobs') queueMicrotask(() => target.kubeflowWebhooks!.setReady('training-operator', false));
    });
    const first = await runRestore(kube, backupStore(store), { backupId, waitTimeoutMs: 3_000 });
    unsubscribe();
    const job = source.api.list(PYTORCHJOBS, { namespace })[0]!.metadata.name!;
    expect(first.failures).to.deep.equal([`PyTorchJob/${namespace}/${job} was created suspended and is not resumed yet, because the API server could not call its admission webhook (see the warning); a rerun resumes it`]);
    const suspended = (o: ReturnType<typeof target.api.get>) => (o?.spec as { runPolicy?: { suspend?: boolean } } | undefined)?.runPolicy?.suspend;
    expect(suspended(target.api.get(PYTORCHJOBS, job, namespace))).to.equal(true);

    target.kubeflowWebhooks!.setReady('training-operator', true);
    const rerun = await runRestore(kube, backupStore(store), { backupId, waitTimeoutMs: 3_000 });
    expect(rerun.failures).to.deep.equal([]);
    expect(suspended(target.api.get(PYTORCHJOBS, job, namespace))).to.equal(suspended(source.api.get(PYTORCHJOBS, job, namespace)));
    expect(await sameAsSource(kube, rerun)).to.deep.equal([]);
  });

  it('a dry run does not wait: it names the webhooks it could not ask, once each', async () => {
    const { kube } = await freshTarget();
    const plan = await runRestore(kube, backupStore(store), { backupId, dryRun: true, waitTimeoutMs: 60_000 });
    expect(plan.waits.webhooksMs).to.equal(0);
    const webhookWarnings = plan.warnings.filter((w) => w.startsWith('admission webhook "'));
    expect(webhookWarnings).to.have.length(3);
    expect(webhookWarnings.every((w) => w.includes('(a dry run does not wait)') && w.includes('it must admit were not checked'))).to.equal(true);
    const unchecked = plan.failures.filter((f) => f.includes('admission webhook'));
    expect(unchecked).to.have.length(3);
    expect(unchecked.every((f) => /: not checked, because the API server could not call admission webhook "[^"]+" \(see the warning\)$/.test(f))).to.equal(true);
  });

  // Katib's validator refuses an Experiment in a namespace without its metrics-collector label (kubeflow/katib
  // pkg/webhook/v1beta1/experiment/validation_webhook.go): asked in `default`, its answer is about `default`.
  it('a dry run into a cluster without the profile asks the webhooks in a profile namespace, or says it could not', async () => {
    const bare = await startCluster({ seed: 31, kubeflowWebhooks: { ready: true } });
    const other = await startCluster({ profiles: 1, seed: 32, kubeflowWebhooks: { ready: true } });
    targets.push(bare, other);
    const otherNamespace = other.api.list(PROFILES)[0]!.metadata.name!;
    expect(otherNamespace).to.not.equal(namespace);
    const [kubeBare, kubeOther] = await Promise.all([bare, other].map((t) => KubeClient.load({ kubeconfig: t.kubeconfigPath, concurrency: 4 })));
    clients.push(kubeBare!, kubeOther!);
    const experimentsOf = (plan: RestoreOutcome) => plan.plan.filter((e) => e.namespace === namespace && e.kind === 'Experiment');

    const bareRun = await runRestore(kubeBare!, backupStore(store), { backupId, dryRun: true });
    expect(bareRun.failures.filter((f) => f.includes('Experiment'))).to.deep.equal([]);
    const [bareEntry] = experimentsOf(bareRun);
    expect(bareEntry?.create).to.equal(1);
    expect(bareEntry?.reasons.join(' ')).to.match(/not asked of admission webhook "validator\.experiment\.katib\.kubeflow\.org".*asked in default, it said: .*lacks label "katib\.kubeflow\.org\/metrics-collector-injection: enabled"/);

    const otherRun = await runRestore(kubeOther!, backupStore(store), { backupId, dryRun: true });
    const [otherEntry] = experimentsOf(otherRun);
    expect(otherEntry?.create).to.equal(1);
    expect(otherEntry?.reasons.join(' ') ?? '').to.not.include('not asked');
    expect(otherRun.failures).to.deep.equal([]);
  });
});
