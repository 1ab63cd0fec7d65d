// Which failures say that the API server could not call an admission webhook: the sentences below are the ones
// kube-apiserver writes (staging/src/k8s.io/apiserver/pkg/admission/plugin/webhook/validating/dispatcher.go and
// mutating/dispatcher.go: NewInternalError of util/webhook/error.go ErrCallingWebhook; errors/statuserror.go for a
// refusal), as seen from MicroK8s (ClusterIP, refused), k3s (endpoint routing) and a webhook that timed out.
import { expect } from 'chai';
import { classifyKubeError, KubeApiError, unreachableWebhook } from '../../src/kube/errors.ts';

const subject = { verb: 'create', resource: 'experiments', namespace: 'alice', name: 'e' };
const internal = (message: string) => new KubeApiError(500, 'InternalError', message, { causes: [{ message: message.replace(/^Internal error occurred: /, '') }] }, subject);

describe('unreachable admission webhooks', () => {
  it('names the webhook and the reason of a call that failed under failurePolicy Fail', () => {
    expect(unreachableWebhook(internal('Internal error occurred: failed calling webhook "validator.experiment.katib.kubeflow.org": failed to call webhook: Post "https://katib-controller.kubeflow.svc:443/validate-experiment?timeout=10s": dial tcp 10.152.183.20:443: connect: connection refused')))
      .to.deep.equal({ name: 'validator.experiment.katib.kubeflow.org', why: 'Post "https://katib-controller.kubeflow.svc:443/validate-experiment?timeout=10s": dial tcp 10.152.183.20:443: connect: connection refused' });
    expect(unreachableWebhook(internal('Internal error occurred: failed calling webhook "inferenceservice.kserve-webhook-server.defaulter": failed to call webhook: Post "https://kserve-webhook-server-service.kubeflow.svc:443/mutate-serving-kserve-io-v1beta1-inferenceservice?timeout=10s": no endpoints available for service "kserve-webhook-server-service"'))?.name)
      .to.equal('inferenceservice.kserve-webhook-server.defaulter');
    expect(unreachableWebhook(internal('Internal error occurred: failed calling webhook "validator.pytorchjob.training-operator.kubeflow.org": failed to call webhook: Post "https://training-operator-workload.kubeflow.svc:443/validate-kubeflow-org-v1-pytorchjob?timeout=10s": context deadline exceeded'))?.why)
      .to.equal('Post "https://training-operator-workload.kubeflow.svc:443/validate-kubeflow-org-v1-pytorchjob?timeout=10s": context deadline exceeded');
    expect(unreachableWebhook(internal('Internal error occurred: failed calling webhook "x.example.com"; no further details available')))
      .to.deep.equal({ name: 'x.example.com', why: 'no further details' });
  });

  it('leaves out a webhook that answered and refused, and other server errors', () => {
    const denied = new KubeApiError(400, 'Forbidden', 'experiments.kubeflow.org "e" is forbidden: admission webhook "validator.experiment.katib.kubeflow.org" denied the request: spec.maxTrialCount: Invalid value: 0: must be greater than 0', undefined, subject);
    expect(unreachableWebhook(denied)).to.equal(undefined);
    const deniedWith500 = internal('Internal error occurred: admission webhook "validator.experiment.katib.kubeflow.org" denied the request: boom');
    expect(unreachableWebhook(deniedWith500)).to.equal(undefined);
    expect(unreachableWebhook(internal('Internal error occurred: etcdserver: request timed out'))).to.equal(undefined);
    expect(unreachableWebhook(new Error('failed calling webhook "x"'))).to.equal(undefined);
  });

  it('is not retried by the client on its own (the restore waits per webhook), while other 500s still are', () => {
    expect(classifyKubeError(internal('Internal error occurred: failed calling webhook "a.b": failed to call webhook: Post "https://a.b.svc:443/?timeout=10s": dial tcp 10.0.0.1:443: connect: connection refused')))
      .to.include({ retryable: false, notActedOn: true });
    expect(classifyKubeError(internal('Internal error occurred: etcdserver: request timed out'))).to.include({ retryable: true });
  });
});
