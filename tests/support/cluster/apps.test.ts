// apps/v1 updates the API server refuses (kubernetes/kubernetes pkg/registry/apps/*/strategy.go ValidateUpdate;
// pkg/apis/apps/validation/validation.go ValidateStatefulSetUpdate, whose cases validation_test.go lists).
import { expect } from 'chai';
import { Cluster } from './cluster.ts';
import type { KubeObject } from '../../../src/kube/types.ts';

function refused(f: () => unknown): string {
  try {
    f();
  } catch (e) {
    return (e as Error).message;
  }
  throw new Error('expected the server to refuse');
}

const STS_MESSAGE = "spec: Forbidden: updates to statefulset spec for fields other than 'replicas', 'ordinals', 'template', 'updateStrategy', 'revisionHistoryLimit', 'persistentVolumeClaimRetentionPolicy' and 'minReadySeconds' are forbidden";

function workload(kind: string, labels: Record<string, string>, extra: Record<string, unknown> = {}): KubeObject {
  return {
    apiVersion: 'apps/v1', kind, metadata: { name: 'w', namespace: 'a' },
    spec: { selector: { matchLabels: labels }, template: { metadata: { labels }, spec: { containers: [{ name: 'c', image: 'busybox' }] } }, ...extra },
  } as KubeObject;
}

describe('embedded API server: apps/v1 updates', () => {
  let cluster: Cluster;
  beforeEach(() => {
    cluster = new Cluster();
    cluster.create({ group: '', resource: 'namespaces' }, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'a' } });
  });

  for (const [kind, resource] of [['Deployment', 'deployments'], ['ReplicaSet', 'replicasets'], ['DaemonSet', 'daemonsets']] as const) {
    it(`refuses a change of a ${kind}'s selector with the real sentence, and takes a change of its template`, () => {
      const ref = { group: 'apps', resource };
      const made = cluster.create(ref, workload(kind, { app: 'x' }));
      const moved = workload(kind, { app: 'y', tier: 'web' });
      expect(refused(() => cluster.update(ref, { ...made, spec: moved.spec } as KubeObject))).to.equal(
        `${kind}.apps "w" is invalid: spec.selector: Invalid value: v1.LabelSelector{MatchLabels:map[string]string{"app":"y", "tier":"web"}, MatchExpressions:[]v1.LabelSelectorRequirement(nil)}: field is immutable`);
      const image = structuredClone(made.spec) as { template: { spec: { containers: Array<{ image: string }> } } };
      image.template.spec.containers[0]!.image = 'busybox:2';
      expect(cluster.update(ref, { ...made, spec: image } as KubeObject).spec).to.deep.equal(image);
    });
  }

  it('refuses a change of a StatefulSet\'s selector, serviceName, claim templates or pod management policy', () => {
    const ref = { group: 'apps', resource: 'statefulsets' };
    const claim = { metadata: { name: 'data' }, spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } } };
    const made = cluster.create(ref, workload('StatefulSet', { app: 'x' }, { serviceName: 'svc', volumeClaimTemplates: [claim] }));
    const spec = made.spec as Record<string, unknown>;
    const changes: Array<Record<string, unknown>> = [
      // the template's labels follow, so that only the immutability is refused (a real server also says the selector
      // does not select the template)
      { selector: { matchLabels: { app: 'x', more: 'y' } }, template: { ...(spec.template as object), metadata: { labels: { app: 'x', more: 'y' } } } },
      { serviceName: 'other' },
      { volumeClaimTemplates: [{ ...claim, spec: { ...claim.spec, resources: { requests: { storage: '2Gi' } } } }] },
      { podManagementPolicy: 'Parallel' },
    ];
    for (const change of changes)
      expect(refused(() => cluster.update(ref, { ...made, spec: { ...spec, ...change } } as KubeObject))).to.equal(`StatefulSet.apps "w" is invalid: ${STS_MESSAGE}`);
  });

  it('answers a StatefulSet selector change that no longer selects the template with both errors, the spec\'s first (ValidateStatefulSetUpdate)', () => {
    const ref = { group: 'apps', resource: 'statefulsets' };
    const made = cluster.create(ref, workload('StatefulSet', { app: 'x' }, { serviceName: 'svc' }));
    const spec = { ...(made.spec as Record<string, unknown>), selector: { matchLabels: { app: 'x', more: 'y' } } };
    expect(refused(() => cluster.update(ref, { ...made, spec } as KubeObject))).to.equal(
      `StatefulSet.apps "w" is invalid: [spec.template.metadata.labels: Invalid value: map[string]string{"app":"x"}: \`selector\` does not match template \`labels\`, ${STS_MESSAGE}]`);
  });

  it('takes a StatefulSet update of replicas, template, strategy and retention, and of fields spelled out at their defaults', () => {
    const ref = { group: 'apps', resource: 'statefulsets' };
    const claim = { metadata: { name: 'data' }, spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } } };
    const made = cluster.create(ref, workload('StatefulSet', { app: 'x' }, { serviceName: 'svc', volumeClaimTemplates: [claim] }));
    const spec = made.spec as Record<string, unknown>;
    const next = {
      ...spec, replicas: 3, minReadySeconds: 5, revisionHistoryLimit: 2, updateStrategy: { type: 'OnDelete' },
      persistentVolumeClaimRetentionPolicy: { whenDeleted: 'Delete', whenScaled: 'Retain' }, podManagementPolicy: 'OrderedReady',
      volumeClaimTemplates: [{ apiVersion: 'v1', kind: 'PersistentVolumeClaim', ...claim, spec: { ...claim.spec, volumeMode: 'Filesystem' }, status: { phase: 'Pending' } }],
    };
    expect((cluster.update(ref, { ...made, spec: next } as KubeObject).spec as { replicas: number }).replicas).to.equal(3);
  });
});
