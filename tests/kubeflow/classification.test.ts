// The backup's selection judged against a cluster where the simulated controllers ran over the generated dataset:
// every dataset object is kept, every controller-made object is left out, each with its reason.
import { expect } from 'chai';
import type { KubeObject } from '../../src/kube/types.ts';
import { backupDecision } from '../../src/kubeflow/backup-selection.ts';
import { restoreOrder } from '../../src/kubeflow/restore-order.ts';
import { runtimeKindOfObject } from '../../src/kubeflow/runtime-kinds.ts';
import { findProfileNamespaces } from '../../src/kubeflow/profile-namespaces.ts';
import { restoreRefusal } from '../../src/kubeflow/allow-list.ts';
import { kubeflowControllers } from '../support/cluster/kubeflow/controllers.ts';
import { generateDataset } from '../support/cluster/kubeflow/dataset.ts';
import { refs } from '../support/cluster/kubeflow/refs.ts';
import { inProcessCluster } from '../support/cluster/in-process.ts';
import type { ResourceRef } from '../support/cluster/contract.ts';

const identity = (o: KubeObject) => `${o.apiVersion.split('/').length > 1 ? o.apiVersion.split('/')[0] : ''}/${o.kind}/${o.metadata.namespace ?? ''}/${o.metadata.name}`;

async function settle(probe: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (!probe()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

describe('backup selection against the simulated cluster and the generated dataset', function () {
  const cluster = inProcessCluster();
  const api = cluster.api;
  const dataset = generateDataset({ profiles: 24, seed: 7 });
  const everything: KubeObject[] = [];
  let stops: Array<() => void> = [];

  before(async () => {
    stops = [cluster.stop, ...kubeflowControllers().map((controller) => controller.start(api))];
    const refOf = (o: KubeObject): ResourceRef => {
      const group = o.apiVersion.includes('/') ? o.apiVersion.split('/')[0]! : '';
      const kind = restoreOrder.find((k) => k.group === group && k.kind === o.kind);
      if (!kind) throw new Error(`the dataset holds ${o.kind}, which the restore order does not name`);
      return { group, resource: kind.resource };
    };
    for (const { profile } of dataset.profiles) api.create(refs.profiles, profile);
    await settle(() => dataset.profiles.every(({ profile }) => api.get(refs.namespaces, profile.metadata.name!)), 'profile namespaces');
    for (const { objects } of dataset.profiles) for (const object of objects) api.create(refOf(object), object);
    // the slowest children: KFP's secret in the last namespace, trials of every experiment, every notebook pod
    await settle(() => dataset.profiles.every(({ profile, objects }) =>
      api.get(refs.secrets, 'mlpipeline-minio-artifact', profile.metadata.name) &&
      objects.filter((o) => o.kind === 'Notebook').every((nb) => api.get(refs.pods, `${nb.metadata.name}-0`, profile.metadata.name)) &&
      objects.filter((o) => o.kind === 'Experiment').every(() => api.list(refs.trials, { namespace: profile.metadata.name }).length === 2)), 'controllers');
    const seen = new Set<string>();
    for (const ref of Object.values(refs)) {
      const key = `${ref.group}/${ref.resource}`;
      if (seen.has(key)) continue;
      seen.add(key);
      everything.push(...api.list(ref));
    }
    for (const kind of restoreOrder) if (!seen.has(`${kind.group}/${kind.resource}`)) everything.push(...api.list(kind));
  });
  after(() => stops.forEach((stop) => stop()));

  it('keeps every dataset object and leaves out every controller-made one', () => {
    const datasetIds = new Set(dataset.profiles.flatMap(({ profile, objects }) => [profile, ...objects]).map(identity));
    const namespaces = findProfileNamespaces(api.list(refs.namespaces), api.list(refs.profiles));
    expect(namespaces.size).to.equal(dataset.profiles.length);
    const scope = { namespaces: new Set(namespaces.keys()) };
    const kept: string[] = [];
    const generatedLeftOut: string[] = [];
    for (const object of everything) {
      const decision = backupDecision(object, scope);
      if (decision.keep) kept.push(identity(object));
      else if (decision.category === 'generated') generatedLeftOut.push(identity(object));
      else expect(decision.category, identity(object)).to.be.oneOf(['cluster-scoped', 'runtime', 'out-of-scope']);
    }
    expect(new Set(kept)).to.deep.equal(datasetIds);
    // in each profile namespace the controllers made at least: 2 SAs + 3 RoleBindings + 1 policy (profile controller),
    // SA default + 2 root-CA ConfigMaps, and KFP's 2 ConfigMaps, PodDefault, 2 policies and Secret — all of state kinds
    expect(generatedLeftOut.length).to.be.at.least(15 * dataset.profiles.length);
    for (const id of generatedLeftOut) expect(datasetIds.has(id), id).to.equal(false);
    const leftOutOfStateKinds = everything.filter((o) => !datasetIds.has(identity(o)) && o.metadata.namespace && namespaces.has(o.metadata.namespace)
      && !runtimeKindOfObject(o));
    for (const object of leftOutOfStateKinds) expect(backupDecision(object, scope).category, identity(object)).to.equal('generated');
  });

  it('lets every dataset object through the restore allow-list', () => {
    const namespaces = new Set(dataset.profiles.map(({ profile }) => profile.metadata.name!));
    for (const object of dataset.profiles.flatMap(({ profile, objects }) => [profile, ...objects])) {
      expect(restoreRefusal(object, namespaces), identity(object)).to.equal(undefined);
    }
  });

  it('explains leaving out a controller-made object by its owner', () => {
    const namespace = dataset.profiles[0]!.profile.metadata.name!;
    const admin = api.get(refs.roleBindings, 'namespaceAdmin', namespace)!;
    expect(backupDecision(admin, { namespaces: new Set([namespace]) }))
      .to.deep.equal({ keep: false, category: 'generated', reason: `generated: controller ownerReference to Profile/${namespace}` });
  });

  it('is deterministic by seed and holds roughly 30 objects per profile with the controllers', () => {
    expect(generateDataset({ profiles: 24, seed: 7 })).to.deep.equal(dataset);
    expect(generateDataset({ profiles: 3, seed: 8 })).to.not.deep.equal(generateDataset({ profiles: 3, seed: 7 }));
    const perProfile = everything.filter((o) => o.metadata.namespace !== 'kubeflow').length / dataset.profiles.length;
    expect(perProfile).to.be.within(25, 40);
  });
});
