// The write-behaviours table, case by case: an archived object and the behaviours the writer runs for it, written out
// from the upstream code each row names. A kind no row matches is created or compared, nothing more.
import { expect } from 'chai';
import type { KubeObject } from '../../src/kube/types.ts';
import { writeBehavioursOf, writeRows, type WriteBehaviour } from '../../src/kubeflow/write-behaviours.ts';

const at = (apiVersion: string, kind: string, name: string, extra: Partial<KubeObject> = {}): KubeObject =>
  ({ apiVersion, kind, metadata: { name, namespace: 'alice' }, ...extra }) as KubeObject;

const cases: Array<{ what: string; object: KubeObject; behaviours: WriteBehaviour[] }> = [
  { what: 'the profile controller\'s default-editor is merged into', object: at('v1', 'ServiceAccount', 'default-editor'), behaviours: ['merge-into-controller-object'] },
  { what: 'Kubernetes\' default ServiceAccount is merged into', object: at('v1', 'ServiceAccount', 'default'), behaviours: ['merge-into-controller-object'] },
  { what: 'a user\'s ServiceAccount is written as any object', object: at('v1', 'ServiceAccount', 'pipeline-runner'), behaviours: [] },
  { what: 'a PVC gets the class map and the fill mark', object: at('v1', 'PersistentVolumeClaim', 'data'), behaviours: ['map-storage-class', 'mark-for-fill'] },
  {
    what: 'a Service preferring dual-stack over two families may be narrowed',
    object: at('v1', 'Service', 'web', { spec: { ipFamilyPolicy: 'PreferDualStack', ipFamilies: ['IPv4', 'IPv6'], selector: { app: 'web' } } }),
    behaviours: ['adapt-ip-families'],
  },
  { what: 'a single-stack Service is written as archived', object: at('v1', 'Service', 'web', { spec: { ipFamilies: ['IPv4'] } }), behaviours: [] },
  { what: 'a training job is created suspended and gets its status back', object: at('kubeflow.org/v1', 'PyTorchJob', 'train'), behaviours: ['write-status', 'suspend-until-status'] },
  { what: 'MXJob, which no table names, is covered by its shape', object: at('kubeflow.org/v1', 'MXJob', 'mx'), behaviours: ['write-status', 'suspend-until-status'] },
  { what: 'a Katib Experiment gets its status back and the finished pin', object: at('kubeflow.org/v1beta1', 'Experiment', 'hp'), behaviours: ['write-status', 'pin-finished'] },
  { what: 'a RoleBinding is never updated into another role', object: at('rbac.authorization.k8s.io/v1', 'RoleBinding', 'ns-admin'), behaviours: ['keep-other-role'] },
  { what: 'a ConfigMap is created or compared, nothing more', object: at('v1', 'ConfigMap', 'settings'), behaviours: [] },
  { what: 'a Notebook is created or compared, nothing more', object: at('kubeflow.org/v1', 'Notebook', 'nb'), behaviours: [] },
];

describe('write behaviours per kind', () => {
  for (const c of cases) {
    it(c.what, () => {
      expect([...writeBehavioursOf(c.object)].sort()).to.deep.equal([...c.behaviours].sort());
    });
  }

  it('every row names the upstream code it follows and at least one behaviour', () => {
    for (const row of writeRows) {
      expect(row.source, row.kinds).to.match(/\.go\b/);
      expect(row.behaviours.length, row.kinds).to.be.greaterThan(0);
    }
  });
});
