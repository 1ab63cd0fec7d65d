// The restore-changes table, row by row: each case is an archived object and what a restore writes for it, written
// out by hand from the Velero RestoreItemAction or Kubernetes source the row names.
import { expect } from 'chai';
import type { KubeObject } from '../../src/kube/types.ts';
import { replacementFor, restoreChanges } from '../../src/kubeflow/restore-changes.ts';
import { finishedJobReason, jobOutcome } from '../../src/kubeflow/finished-jobs.ts';
import { restorable, restorableView } from '../../src/restore/normalize.ts';

const meta = (name: string, extra: Record<string, unknown> = {}) => ({ name, namespace: 'alice', uid: `uid-${name}`, resourceVersion: '9', creationTimestamp: '2026-01-01T00:00:00Z', ...extra });
const OLD_UID = '0f0f0f0f-1111-4222-8333-444444444444';

interface Case { row: string; what: string; archived: KubeObject; restored: KubeObject }

const cases: Case[] = [
  {
    row: '/Service', what: 'a ClusterIP Service loses its address',
    archived: { apiVersion: 'v1', kind: 'Service', metadata: meta('web'), spec: { type: 'ClusterIP', clusterIP: '10.152.183.77', clusterIPs: ['10.152.183.77'], ipFamilies: ['IPv4'], selector: { app: 'web' }, ports: [{ port: 80, protocol: 'TCP' }] }, status: { loadBalancer: {} } },
    restored: { apiVersion: 'v1', kind: 'Service', metadata: { name: 'web', namespace: 'alice' }, spec: { type: 'ClusterIP', ipFamilies: ['IPv4'], selector: { app: 'web' }, ports: [{ port: 80, protocol: 'TCP' }] } },
  },
  {
    row: '/Service', what: 'a headless Service keeps clusterIP None',
    archived: { apiVersion: 'v1', kind: 'Service', metadata: meta('db'), spec: { clusterIP: 'None', clusterIPs: ['None'], selector: { app: 'db' }, ports: [{ port: 5432 }] } },
    restored: { apiVersion: 'v1', kind: 'Service', metadata: { name: 'db', namespace: 'alice' }, spec: { clusterIP: 'None', clusterIPs: ['None'], selector: { app: 'db' }, ports: [{ port: 5432 }] } },
  },
  {
    row: '/Service', what: 'a NodePort Service loses its allocated node ports and keeps the one kubectl apply asked for',
    archived: {
      apiVersion: 'v1', kind: 'Service',
      metadata: meta('np', { annotations: { 'kubectl.kubernetes.io/last-applied-configuration': JSON.stringify({ spec: { type: 'NodePort', ports: [{ name: 'http', port: 80 }, { name: 'admin', port: 81, nodePort: 30081 }] } }) } }),
      spec: { type: 'NodePort', clusterIP: '10.152.183.9', clusterIPs: ['10.152.183.9'], ports: [{ name: 'http', port: 80, nodePort: 31234 }, { name: 'admin', port: 81, nodePort: 30081 }] },
    },
    restored: {
      apiVersion: 'v1', kind: 'Service',
      metadata: { name: 'np', namespace: 'alice', annotations: { 'kubectl.kubernetes.io/last-applied-configuration': JSON.stringify({ spec: { type: 'NodePort', ports: [{ name: 'http', port: 80 }, { name: 'admin', port: 81, nodePort: 30081 }] } }) } },
      spec: { type: 'NodePort', ports: [{ name: 'http', port: 80 }, { name: 'admin', port: 81, nodePort: 30081 }] },
    },
  },
  {
    row: '/Service', what: 'a NodePort Service keeps a node port a field manager owns (server-side apply) and loses the rest',
    archived: {
      apiVersion: 'v1', kind: 'Service',
      metadata: meta('ssa', { managedFields: [{ manager: 'kubectl', operation: 'Apply', fieldsType: 'FieldsV1', fieldsV1: { 'f:spec': { 'f:ports': { 'k:{"port":81,"protocol":"TCP"}': { 'f:nodePort': {}, 'f:port': {} }, 'k:{"port":80,"protocol":"TCP"}': { 'f:port': {} } } } } }] }),
      spec: { type: 'NodePort', clusterIP: '10.152.183.10', ports: [{ port: 80, protocol: 'TCP', nodePort: 31000 }, { port: 81, protocol: 'TCP', nodePort: 30081 }] },
    },
    restored: { apiVersion: 'v1', kind: 'Service', metadata: { name: 'ssa', namespace: 'alice' }, spec: { type: 'NodePort', ports: [{ port: 80, protocol: 'TCP' }, { port: 81, protocol: 'TCP', nodePort: 30081 }] } },
  },
  {
    row: '/Service', what: 'a LoadBalancer Service with externalTrafficPolicy Local loses its allocated healthCheckNodePort',
    archived: { apiVersion: 'v1', kind: 'Service', metadata: meta('lb'), spec: { type: 'LoadBalancer', externalTrafficPolicy: 'Local', healthCheckNodePort: 32000, clusterIP: '10.152.183.11', ports: [{ port: 443, nodePort: 31443 }] } },
    restored: { apiVersion: 'v1', kind: 'Service', metadata: { name: 'lb', namespace: 'alice' }, spec: { type: 'LoadBalancer', externalTrafficPolicy: 'Local', ports: [{ port: 443 }] } },
  },
  {
    row: 'batch/Job', what: 'a Job loses the source\'s controller-uid from its selector and its pod template, and keeps job-name',
    archived: {
      apiVersion: 'batch/v1', kind: 'Job', metadata: meta('export', { labels: { team: 'a' } }),
      spec: {
        backoffLimit: 2,
        selector: { matchLabels: { 'batch.kubernetes.io/controller-uid': OLD_UID } },
        template: { metadata: { labels: { app: 'export', 'controller-uid': OLD_UID, 'batch.kubernetes.io/controller-uid': OLD_UID, 'job-name': 'export', 'batch.kubernetes.io/job-name': 'export' } }, spec: { restartPolicy: 'Never', containers: [{ name: 'c', image: 'export:1' }] } },
      },
      status: { active: 1, startTime: '2026-01-01T00:00:01Z' },
    },
    restored: {
      apiVersion: 'batch/v1', kind: 'Job', metadata: { name: 'export', namespace: 'alice', labels: { team: 'a' } },
      spec: {
        backoffLimit: 2,
        template: { metadata: { labels: { app: 'export', 'job-name': 'export', 'batch.kubernetes.io/job-name': 'export' } }, spec: { restartPolicy: 'Never', containers: [{ name: 'c', image: 'export:1' }] } },
      },
    },
  },
  {
    row: 'batch/Job', what: 'a Job with manualSelector keeps its own selector and labels',
    archived: { apiVersion: 'batch/v1', kind: 'Job', metadata: meta('manual'), spec: { manualSelector: true, selector: { matchLabels: { 'controller-uid': 'mine' } }, template: { metadata: { labels: { 'controller-uid': 'mine' } }, spec: { restartPolicy: 'Never', containers: [] } } } },
    restored: { apiVersion: 'batch/v1', kind: 'Job', metadata: { name: 'manual', namespace: 'alice' }, spec: { manualSelector: true, selector: { matchLabels: { 'controller-uid': 'mine' } }, template: { metadata: { labels: { 'controller-uid': 'mine' } }, spec: { restartPolicy: 'Never', containers: [] } } } },
  },
  {
    row: '/Secret', what: 'a service-account-token Secret loses its data and the source ServiceAccount\'s uid',
    archived: { apiVersion: 'v1', kind: 'Secret', type: 'kubernetes.io/service-account-token', metadata: meta('ci-token', { annotations: { 'kubernetes.io/service-account.name': 'ci', 'kubernetes.io/service-account.uid': 'sa-uid' } }), data: { token: 'ZXlK' } },
    restored: { apiVersion: 'v1', kind: 'Secret', type: 'kubernetes.io/service-account-token', metadata: { name: 'ci-token', namespace: 'alice', annotations: { 'kubernetes.io/service-account.name': 'ci' } } },
  },
  {
    row: '/Secret', what: 'an Opaque Secret is written as it is',
    archived: { apiVersion: 'v1', kind: 'Secret', type: 'Opaque', metadata: meta('creds'), data: { key: 'dmFsdWU=' } },
    restored: { apiVersion: 'v1', kind: 'Secret', type: 'Opaque', metadata: { name: 'creds', namespace: 'alice' }, data: { key: 'dmFsdWU=' } },
  },
  {
    row: '/PersistentVolumeClaim', what: 'a PVC loses its volume and its binding annotations',
    archived: { apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata: meta('data', { annotations: { 'pv.kubernetes.io/bind-completed': 'yes', 'volume.kubernetes.io/selected-node': 'n1', owner: 'me' } }), spec: { volumeName: 'pvc-123', resources: { requests: { storage: '1Gi' } } }, status: { phase: 'Bound' } },
    restored: { apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata: { name: 'data', namespace: 'alice', annotations: { owner: 'me' } }, spec: { resources: { requests: { storage: '1Gi' } } } },
  },
  {
    row: '/PersistentVolumeClaim', what: 'a PVC a hand-over filled loses the selector label that reserved it, and keeps the user\'s own',
    archived: { apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata: meta('data'), spec: { volumeName: 'pvc-9', selector: { matchLabels: { 'kubeflow-upgrader/handover': 'abc', tier: 'gold' } }, resources: { requests: { storage: '1Gi' } } } },
    restored: { apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata: { name: 'data', namespace: 'alice' }, spec: { selector: { matchLabels: { tier: 'gold' } }, resources: { requests: { storage: '1Gi' } } } },
  },
  {
    row: '/PersistentVolumeClaim', what: 'a PVC a hand-over filled, with no selector of its own, goes in without one',
    archived: { apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata: meta('data'), spec: { volumeName: 'pvc-9', selector: { matchLabels: { 'kubeflow-upgrader/handover': 'abc' } }, resources: { requests: { storage: '1Gi' } } } },
    restored: { apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata: { name: 'data', namespace: 'alice' }, spec: { resources: { requests: { storage: '1Gi' } } } },
  },
  {
    row: '/ServiceAccount', what: 'a ServiceAccount loses its source token Secret from secrets and keeps the others',
    archived: { apiVersion: 'v1', kind: 'ServiceAccount', metadata: meta('ci'), secrets: [{ name: 'ci-token-abcde' }, { name: 'registry-creds' }] } as KubeObject,
    restored: { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'ci', namespace: 'alice' }, secrets: [{ name: 'registry-creds' }] } as KubeObject,
  },
  {
    row: '*/*', what: 'any other kind loses only what the server owns',
    archived: { apiVersion: 'kubeflow.org/v1', kind: 'Notebook', metadata: meta('nb', { generation: 3, managedFields: [{ manager: 'x' }] }), spec: { template: { spec: { containers: [{ name: 'nb', image: 'jupyter' }] } } }, status: { readyReplicas: 1 } },
    restored: { apiVersion: 'kubeflow.org/v1', kind: 'Notebook', metadata: { name: 'nb', namespace: 'alice' }, spec: { template: { spec: { containers: [{ name: 'nb', image: 'jupyter' }] } } } },
  },
];

describe('restore changes per kind (src/kubeflow/restore-changes.ts)', () => {
  for (const c of cases) {
    it(`${c.row}: ${c.what}`, () => {
      const before = structuredClone(c.archived);
      expect(restorable(c.archived)).to.deep.equal(c.restored);
      expect(restorableView(c.archived)).to.deep.equal(c.restored);
      expect(c.archived, 'the archived object is left as it was').to.deep.equal(before);
    });
  }

  it('every row names an upstream file and says what it changes; every kind with a case has a row', () => {
    for (const row of restoreChanges) {
      expect(row.source, `${row.group}/${row.kind}`).to.match(/(vmware-tanzu\/velero|kubernetes) \S+\/\S+/);
      expect(row.changes.length, `${row.group}/${row.kind}`).to.be.greaterThan(20);
    }
    const rows = new Set(restoreChanges.map((r) => `${r.group}/${r.kind}`));
    for (const c of cases) expect(rows.has(c.row), c.row).to.equal(true);
    for (const kind of ['Pod', 'PersistentVolume']) expect(rows.has(`/${kind}`), kind).to.equal(true);
  });
});

describe('what an update keeps from the live object (restore-changes.ts, keepOnUpdate)', () => {
  const NEW_UID = '9e9e9e9e-5555-4666-8777-888888888888';
  const rows: Array<{ what: string; wanted: KubeObject; live: KubeObject; replacement: KubeObject }> = [
    {
      what: 'batch/Job: the target\'s generated selector and controller-uid labels',
      wanted: { apiVersion: 'batch/v1', kind: 'Job', metadata: { name: 'j', namespace: 'alice' }, spec: { backoffLimit: 0, template: { metadata: { labels: { app: 'x', 'job-name': 'j' } }, spec: { restartPolicy: 'Never', containers: [] } } } },
      live: {
        apiVersion: 'batch/v1', kind: 'Job', metadata: { name: 'j', namespace: 'alice', uid: NEW_UID },
        spec: { backoffLimit: 3, selector: { matchLabels: { 'batch.kubernetes.io/controller-uid': NEW_UID } }, template: { metadata: { labels: { app: 'x', 'job-name': 'j', 'controller-uid': NEW_UID, 'batch.kubernetes.io/controller-uid': NEW_UID } }, spec: { restartPolicy: 'Never', containers: [] } } },
      },
      replacement: {
        apiVersion: 'batch/v1', kind: 'Job', metadata: { name: 'j', namespace: 'alice' },
        spec: { backoffLimit: 0, selector: { matchLabels: { 'batch.kubernetes.io/controller-uid': NEW_UID } }, template: { metadata: { labels: { app: 'x', 'job-name': 'j', 'controller-uid': NEW_UID, 'batch.kubernetes.io/controller-uid': NEW_UID } }, spec: { restartPolicy: 'Never', containers: [] } } },
      },
    },
    {
      what: '/PersistentVolumeClaim: the volume the target bound it to and the class it defaulted',
      wanted: { apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata: { name: 'd', namespace: 'alice', labels: { tier: 'gold' } }, spec: { resources: { requests: { storage: '1Gi' } } } },
      live: { apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata: { name: 'd', namespace: 'alice' }, spec: { volumeName: 'pv-9', storageClassName: 'standard', resources: { requests: { storage: '1Gi' } } } },
      replacement: { apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata: { name: 'd', namespace: 'alice', labels: { tier: 'gold' } }, spec: { volumeName: 'pv-9', storageClassName: 'standard', resources: { requests: { storage: '1Gi' } } } },
    },
    {
      // the server refuses any change of a claim's spec but volumeName set once (ValidatePersistentVolumeClaimUpdate)
      what: '/PersistentVolumeClaim: the selector a restore by hand-over reserved it with',
      wanted: { apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata: { name: 'd', namespace: 'alice' }, spec: { resources: { requests: { storage: '1Gi' } } } },
      live: { apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata: { name: 'd', namespace: 'alice' }, spec: { volumeName: 'pv-9', selector: { matchLabels: { 'kubeflow-upgrader/handover': 'abc' } }, resources: { requests: { storage: '1Gi' } } } },
      replacement: { apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata: { name: 'd', namespace: 'alice' }, spec: { volumeName: 'pv-9', selector: { matchLabels: { 'kubeflow-upgrader/handover': 'abc' } }, resources: { requests: { storage: '1Gi' } } } },
    },
    {
      what: '/ConfigMap: nothing',
      wanted: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c', namespace: 'alice' }, data: { a: '1' } } as KubeObject,
      live: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c', namespace: 'alice' }, data: { a: '2' } } as KubeObject,
      replacement: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c', namespace: 'alice' }, data: { a: '1' } } as KubeObject,
    },
  ];
  for (const row of rows) {
    it(row.what, () => {
      const [wanted, live] = [structuredClone(row.wanted), structuredClone(row.live)];
      expect(replacementFor(row.wanted, row.live)).to.deep.equal(row.replacement);
      expect([row.wanted, row.live], 'inputs left as they were').to.deep.equal([wanted, live]);
    });
  }
});

describe('finished batch Jobs (src/kubeflow/finished-jobs.ts)', () => {
  const job = (conditions?: Array<{ type: string; status: string }>): KubeObject => ({
    apiVersion: 'batch/v1', kind: 'Job', metadata: { name: 'j', namespace: 'alice' }, spec: {}, ...(conditions ? { status: { conditions } } : {}),
  });
  const rows: Array<{ what: string; object: KubeObject; outcome: 'Complete' | 'Failed' | undefined }> = [
    { what: 'a Job with Complete=True', object: job([{ type: 'SuccessCriteriaMet', status: 'True' }, { type: 'Complete', status: 'True' }]), outcome: 'Complete' },
    { what: 'a Job with Failed=True', object: job([{ type: 'FailureTarget', status: 'True' }, { type: 'Failed', status: 'True' }]), outcome: 'Failed' },
    { what: 'a running Job', object: job(), outcome: undefined },
    { what: 'a suspended Job (Suspended=True is not an end)', object: job([{ type: 'Suspended', status: 'True' }]), outcome: undefined },
    { what: 'a Job whose Complete condition is False', object: job([{ type: 'Complete', status: 'False' }]), outcome: undefined },
    { what: 'another kind with a Complete condition', object: { apiVersion: 'kubeflow.org/v1', kind: 'PyTorchJob', metadata: { name: 'p' }, status: { conditions: [{ type: 'Complete', status: 'True' }] } }, outcome: undefined },
  ];
  for (const row of rows) {
    it(`${row.what}: ${row.outcome ?? 'restored'}`, () => {
      expect(jobOutcome(row.object)).to.equal(row.outcome);
      const reason = finishedJobReason(row.object);
      if (row.outcome) expect(reason).to.contain(`finished (${row.outcome})`).and.to.contain('not restored');
      else expect(reason).to.equal(undefined);
    });
  }
});
