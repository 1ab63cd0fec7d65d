// batch/v1 Jobs on the embedded API server, through the real client, with the real server's answers
// (kubernetes pkg/registry/batch/job/strategy.go, pkg/apis/batch/validation/validation.go).
import { expect } from 'chai';
import * as k8s from '@kubernetes/client-node';
import { startCluster, type RunningCluster } from './index.ts';

function statusOf(e: unknown): { code: number; reason: string; message: string } {
  const body = (e as k8s.ApiException<string>).body;
  return typeof body === 'string' ? JSON.parse(body) : (body as never);
}

async function refusal(p: Promise<unknown>): Promise<{ code: number; reason: string; message: string }> {
  try {
    await p;
  } catch (e) {
    return statusOf(e);
  }
  throw new Error('expected the API server to refuse the request');
}

const template = (labels?: Record<string, string>): k8s.V1PodTemplateSpec => ({
  metadata: labels ? { labels } : undefined,
  spec: { restartPolicy: 'Never', containers: [{ name: 'c', image: 'busybox' }] },
});

describe('embedded API server: Job selectors', function () {
  let c: RunningCluster;
  let batch: k8s.BatchV1Api;

  before(async () => {
    c = await startCluster({ kubeflowCrds: false });
    const kc = new k8s.KubeConfig();
    kc.loadFromFile(c.kubeconfigPath);
    batch = kc.makeApiClient(k8s.BatchV1Api);
    await kc.makeApiClient(k8s.CoreV1Api).createNamespace({ body: { metadata: { name: 'jobs' } } });
  });
  after(async () => c.stop());

  it('generates the selector and the template labels from the new Job\'s uid and name', async () => {
    const job = await batch.createNamespacedJob({ namespace: 'jobs', body: { metadata: { name: 'plain' }, spec: { template: template({ app: 'x' }) } } });
    const uid = job.metadata!.uid!;
    expect(job.spec?.selector).to.deep.equal({ matchLabels: { 'batch.kubernetes.io/controller-uid': uid } });
    expect(job.spec?.template.metadata?.labels).to.deep.equal({
      app: 'x', 'controller-uid': uid, 'batch.kubernetes.io/controller-uid': uid, 'job-name': 'plain', 'batch.kubernetes.io/job-name': 'plain',
    });
  });

  it('refuses a Job carrying another Job\'s controller-uid selector and labels, with the real message', async () => {
    const foreign = 'a1b2c3d4-0000-4000-8000-000000000000';
    const labels = { 'controller-uid': foreign, 'batch.kubernetes.io/controller-uid': foreign, 'job-name': 'copied', 'batch.kubernetes.io/job-name': 'copied' };
    const s = await refusal(batch.createNamespacedJob({
      namespace: 'jobs',
      body: { metadata: { name: 'copied' }, spec: { selector: { matchLabels: { 'batch.kubernetes.io/controller-uid': foreign } }, template: template(labels) } },
    }));
    expect(s.code).to.equal(422);
    expect(s.reason).to.equal('Invalid');
    expect(s.message).to.match(/^Job\.batch "copied" is invalid: \[/);
    expect(s.message).to.match(/spec\.template\.metadata\.labels\[controller-uid\]: Invalid value: map\[string\]string\{.*\}: must be '[0-9a-f-]{36}'/);
    expect(s.message).to.contain(`spec.selector: Invalid value: v1.LabelSelector{MatchLabels:map[string]string{"batch.kubernetes.io/controller-uid":"${foreign}"}, MatchExpressions:[]v1.LabelSelectorRequirement(nil)}: \`selector\` not auto-generated`);
    expect((await batch.listNamespacedJob({ namespace: 'jobs', fieldSelector: 'metadata.name=copied' })).items).to.have.length(0);
  });

  it('takes a selector of the user\'s own with manualSelector, and refuses one that does not select the template', async () => {
    const made = await batch.createNamespacedJob({
      namespace: 'jobs',
      body: { metadata: { name: 'manual' }, spec: { manualSelector: true, selector: { matchLabels: { app: 'm' } }, template: template({ app: 'm' }) } },
    });
    expect(made.spec?.selector).to.deep.equal({ matchLabels: { app: 'm' } });
    expect(made.spec?.template.metadata?.labels).to.deep.equal({ app: 'm' });
    const s = await refusal(batch.createNamespacedJob({
      namespace: 'jobs',
      body: { metadata: { name: 'manual-bad' }, spec: { manualSelector: true, selector: { matchLabels: { app: 'n' } }, template: template({ app: 'm' }) } },
    }));
    expect(s.message).to.equal('Job.batch "manual-bad" is invalid: spec.template.metadata.labels: Invalid value: map[string]string{"app":"m"}: `selector` does not match template `labels`');
  });

  it('refuses a pod template whose restartPolicy is (or defaults to) Always', async () => {
    const s = await refusal(batch.createNamespacedJob({
      namespace: 'jobs', body: { metadata: { name: 'always' }, spec: { template: { spec: { containers: [{ name: 'c', image: 'busybox' }] } } } },
    }));
    expect(s.message).to.equal('Job.batch "always" is invalid: spec.template.spec.restartPolicy: Unsupported value: "Always": supported values: "OnFailure", "Never"');
  });

  it('refuses a change to the template or the selector of a Job, and takes a change of its labels', async () => {
    const job = await batch.createNamespacedJob({ namespace: 'jobs', body: { metadata: { name: 'fixed' }, spec: { template: template() } } });
    const changed: k8s.V1Job = { ...job, spec: { ...job.spec!, template: { ...job.spec!.template, spec: { ...job.spec!.template.spec!, containers: [{ name: 'c', image: 'alpine' }] } } } };
    const s = await refusal(batch.replaceNamespacedJob({ name: 'fixed', namespace: 'jobs', body: changed }));
    expect(s.code).to.equal(422);
    expect(s.message).to.match(/^Job\.batch "fixed" is invalid: spec\.template: Invalid value: .*: field is immutable$/);
    const noSelector: k8s.V1Job = { ...job, spec: { ...job.spec!, selector: undefined } };
    expect((await refusal(batch.replaceNamespacedJob({ name: 'fixed', namespace: 'jobs', body: noSelector }))).message).to.contain('spec.selector: Invalid value: v1.LabelSelector{MatchLabels:map[string]string(nil), MatchExpressions:[]v1.LabelSelectorRequirement(nil)}: field is immutable');
    const relabelled = await batch.replaceNamespacedJob({ name: 'fixed', namespace: 'jobs', body: { ...job, metadata: { ...job.metadata, labels: { team: 'a' } } } });
    expect(relabelled.metadata?.labels).to.deep.equal({ team: 'a' });
  });
});
