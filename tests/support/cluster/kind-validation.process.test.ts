// Probe tests: the type-specific validation of the built-in kinds a backup archive holds, over TLS, answered with the
// sentences kube-apiserver answers (422 Invalid, `<Kind>.<group> "<name>" is invalid: <field>: <detail>`). The expected
// sentences are written out here from the upstream sources (kubernetes/kubernetes pkg/apis/batch/validation,
// pkg/apis/apps/validation, pkg/apis/policy/validation, pkg/apis/networking/validation, pkg/apis/core/validation
// validation.go; staging/src/k8s.io/apimachinery/pkg/util/validation/field/errors.go for `Required value`,
// `Invalid value`, `Unsupported value`; robfig/cron v3 parser.go for the schedule's errors), not from the simulation.
import { expect } from 'chai';
import { request as httpsRequest } from 'node:https';
import { startCluster, type RunningCluster } from './index.ts';

interface Answer { status: number; body: { message?: string; reason?: string; details?: { causes?: { field?: string; reason?: string }[] } } & Record<string, unknown> }

describe('embedded API server: type-specific validation of built-in kinds', function () {
  let c: RunningCluster;

  before(async () => {
    c = await startCluster({ kubeflowCrds: false });
    await send('POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'probe' } });
  });
  after(async () => c?.stop());

  function send(method: string, path: string, body?: unknown): Promise<Answer> {
    return new Promise((resolve, reject) => {
      const req = httpsRequest(`${c.server}${path}`, {
        method, ca: c.caCert,
        headers: { Authorization: `Bearer ${c.token}`, 'Content-Type': method === 'PATCH' ? 'application/merge-patch+json' : 'application/json' },
      }, (res) => {
        let text = '';
        res.on('data', (d: Buffer) => (text += d.toString()));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text ? JSON.parse(text) : {} }));
      });
      req.on('error', reject);
      if (body !== undefined) req.write(JSON.stringify(body));
      req.end();
    });
  }

  async function refused(path: string, body: unknown, method = 'POST'): Promise<string> {
    const answer = await send(method, path, body);
    expect(answer.status, JSON.stringify(answer.body)).to.equal(422);
    expect(answer.body.reason).to.equal('Invalid');
    return answer.body.message ?? '';
  }

  async function accepted(path: string, body: unknown, method = 'POST'): Promise<Answer['body']> {
    const answer = await send(method, path, body);
    expect(answer.status, JSON.stringify(answer.body)).to.be.oneOf([200, 201]);
    return answer.body;
  }

  const container = [{ name: 'c', image: 'busybox' }];
  const JOBS = '/apis/batch/v1/namespaces/probe/jobs';
  const CRONJOBS = '/apis/batch/v1/namespaces/probe/cronjobs';
  const DEPLOYMENTS = '/apis/apps/v1/namespaces/probe/deployments';
  const STATEFULSETS = '/apis/apps/v1/namespaces/probe/statefulsets';
  const PDBS = '/apis/policy/v1/namespaces/probe/poddisruptionbudgets';
  const NETPOLS = '/apis/networking.k8s.io/v1/namespaces/probe/networkpolicies';
  const CLAIMS = '/api/v1/namespaces/probe/persistentvolumeclaims';
  const CONFIGMAPS = '/api/v1/namespaces/probe/configmaps';

  const job = (name: string, spec: Record<string, unknown>) => ({
    apiVersion: 'batch/v1', kind: 'Job', metadata: { name, namespace: 'probe' },
    spec: { template: { spec: { restartPolicy: 'Never', containers: container } }, ...spec },
  });

  describe('Jobs (ValidateJobSpec, ValidateJobUpdate)', () => {
    it('refuses negative parallelism, completions and backoffLimit, each with ValidateNonnegativeField\'s sentence', async () => {
      const message = await refused(JOBS, job('negative', { parallelism: -1, completions: -2, backoffLimit: -3 }));
      expect(message).to.equal('Job.batch "negative" is invalid: [spec.parallelism: Invalid value: -1: must be greater than or equal to 0, spec.completions: Invalid value: -2: must be greater than or equal to 0, spec.backoffLimit: Invalid value: -3: must be greater than or equal to 0]');
    });

    it('refuses an Indexed Job without completions and an unknown completionMode', async () => {
      expect(await refused(JOBS, job('indexed', { completionMode: 'Indexed' }))).to.equal('Job.batch "indexed" is invalid: spec.completions: Required value: when completion mode is Indexed');
      expect(await refused(JOBS, job('mode', { completionMode: 'Sometimes' }))).to.equal('Job.batch "mode" is invalid: spec.completionMode: Unsupported value: "Sometimes": supported values: "Indexed", "NonIndexed"');
    });

    it('refuses restartPolicy Always (the v1 default of a pod template)', async () => {
      const body = job('always', {});
      delete (body.spec.template.spec as { restartPolicy?: string }).restartPolicy;
      expect(await refused(JOBS, body)).to.equal('Job.batch "always" is invalid: spec.template.spec.restartPolicy: Unsupported value: "Always": supported values: "OnFailure", "Never"');
    });

    it('keeps completions of a NonIndexed Job, and lets an Indexed one change it only in tandem with parallelism', async () => {
      await accepted(JOBS, job('fixed', { completions: 2, parallelism: 2, suspend: true }));
      expect(await refused(`${JOBS}/fixed`, { spec: { completions: 3 } }, 'PATCH')).to.equal('Job.batch "fixed" is invalid: spec.completions: Invalid value: 3: field is immutable');
      await accepted(JOBS, job('elastic', { completions: 2, parallelism: 2, completionMode: 'Indexed', suspend: true }));
      expect(await refused(`${JOBS}/elastic`, { spec: { completions: 3 } }, 'PATCH')).to.equal('Job.batch "elastic" is invalid: spec.completions: Invalid value: 3: can only be modified in tandem with spec.parallelism');
      const changed = await accepted(`${JOBS}/elastic`, { spec: { completions: 3, parallelism: 3 } }, 'PATCH');
      expect(changed.spec).to.deep.include({ completions: 3, parallelism: 3 });
    });
  });

  describe('CronJobs (ValidateCronJobSpec)', () => {
    const cron = (name: string, spec: Record<string, unknown>, jobSpec: Record<string, unknown> = {}) => ({
      apiVersion: 'batch/v1', kind: 'CronJob', metadata: { name, namespace: 'probe' },
      spec: { schedule: '*/5 * * * *', jobTemplate: { spec: { template: { spec: { restartPolicy: 'OnFailure', containers: container } }, ...jobSpec } }, ...spec },
    });

    it('accepts a standard schedule and a descriptor', async () => {
      await accepted(CRONJOBS, cron('five', {}));
      await accepted(CRONJOBS, cron('daily', { schedule: '@daily' }));
    });

    it('refuses a schedule robfig/cron cannot parse, with the parser\'s own error', async () => {
      expect(await refused(CRONJOBS, cron('fields', { schedule: 'every day' }))).to.equal('CronJob.batch "fields" is invalid: spec.schedule: Invalid value: "every day": expected exactly 5 fields, found 2: [every day]');
      expect(await refused(CRONJOBS, cron('range', { schedule: '0 25 * * *' }))).to.equal('CronJob.batch "range" is invalid: spec.schedule: Invalid value: "0 25 * * *": end of range (25) above maximum (23): 25');
      expect(await refused(CRONJOBS, cron('word', { schedule: 'x * * * *' }))).to.equal('CronJob.batch "word" is invalid: spec.schedule: Invalid value: "x * * * *": failed to parse int from x: strconv.Atoi: parsing "x": invalid syntax');
      expect(await refused(CRONJOBS, cron('tz', { schedule: 'TZ=UTC 0 0 * * *' }))).to.equal('CronJob.batch "tz" is invalid: spec.schedule: Invalid value: "TZ=UTC 0 0 * * *": cannot use TZ or CRON_TZ in schedule, use timeZone field instead');
    });

    it('refuses an unknown concurrencyPolicy and a jobTemplate with a selector', async () => {
      expect(await refused(CRONJOBS, cron('policy', { concurrencyPolicy: 'Sometimes' }))).to.equal('CronJob.batch "policy" is invalid: spec.concurrencyPolicy: Unsupported value: "Sometimes": supported values: "Allow", "Forbid", "Replace"');
      expect(await refused(CRONJOBS, cron('selector', {}, { selector: { matchLabels: { a: 'b' } } }))).to.equal('CronJob.batch "selector" is invalid: spec.jobTemplate.spec.selector: Invalid value: v1.LabelSelector{MatchLabels:map[string]string{"a":"b"}, MatchExpressions:[]v1.LabelSelectorRequirement(nil)}: `selector` will be auto-generated');
      expect(await refused(CRONJOBS, cron('restart', {}, { template: { spec: { restartPolicy: 'Always', containers: container } } }))).to.equal('CronJob.batch "restart" is invalid: spec.jobTemplate.spec.template.spec.restartPolicy: Unsupported value: "Always": supported values: "OnFailure", "Never"');
    });
  });

  describe('Deployments and StatefulSets (ValidateDeploymentSpec, ValidateStatefulSetSpec)', () => {
    const workload = (kind: string, name: string, spec: Record<string, unknown>) => ({
      apiVersion: 'apps/v1', kind, metadata: { name, namespace: 'probe' },
      spec: { selector: { matchLabels: { app: name } }, template: { metadata: { labels: { app: name } }, spec: { containers: container } }, ...spec },
    });

    it('refuses a selector that does not select the template\'s labels', async () => {
      expect(await refused(DEPLOYMENTS, workload('Deployment', 'web', { selector: { matchLabels: { app: 'other' } } }))).to.equal('Deployment.apps "web" is invalid: spec.template.metadata.labels: Invalid value: map[string]string{"app":"web"}: `selector` does not match template `labels`');
      expect(await refused(STATEFULSETS, workload('StatefulSet', 'db', { selector: { matchLabels: { app: 'other' } } }))).to.equal('StatefulSet.apps "db" is invalid: spec.template.metadata.labels: Invalid value: map[string]string{"app":"db"}: `selector` does not match template `labels`');
    });

    it('refuses an empty selector, negative replicas and a restartPolicy other than Always', async () => {
      expect(await refused(DEPLOYMENTS, workload('Deployment', 'empty', { selector: {} }))).to.equal('Deployment.apps "empty" is invalid: spec.selector: Invalid value: v1.LabelSelector{MatchLabels:map[string]string(nil), MatchExpressions:[]v1.LabelSelectorRequirement(nil)}: empty selector is invalid for deployment');
      expect(await refused(STATEFULSETS, workload('StatefulSet', 'minus', { replicas: -1 }))).to.equal('StatefulSet.apps "minus" is invalid: spec.replicas: Invalid value: -1: must be greater than or equal to 0');
      const never = workload('Deployment', 'never', {});
      (never.spec.template.spec as Record<string, unknown>).restartPolicy = 'Never';
      expect(await refused(DEPLOYMENTS, never)).to.equal('Deployment.apps "never" is invalid: spec.template.spec.restartPolicy: Unsupported value: "Never": supported values: "Always"');
      expect(await refused(STATEFULSETS, workload('StatefulSet', 'policy', { podManagementPolicy: 'Random' }))).to.equal('StatefulSet.apps "policy" is invalid: spec.podManagementPolicy: Invalid value: "Random": must be \'OrderedReady\' or \'Parallel\'');
    });

    it('refuses a selector requirement without its values, and then the selector itself (LabelSelectorAsSelector fails)', async () => {
      const body = workload('Deployment', 'expr', { selector: { matchExpressions: [{ key: 'app', operator: 'In' }] } });
      expect(await refused(DEPLOYMENTS, body)).to.equal('Deployment.apps "expr" is invalid: [spec.selector.matchExpressions[0].values: Required value: must be specified when `operator` is \'In\' or \'NotIn\', spec.selector: Invalid value: v1.LabelSelector{MatchLabels:map[string]string(nil), MatchExpressions:[]v1.LabelSelectorRequirement{v1.LabelSelectorRequirement{Key:"app", Operator:"In", Values:[]string(nil)}}}: invalid label selector]');
    });

    it('refuses a Deployment without a selector (Required value)', async () => {
      const body = workload('Deployment', 'noselector', {});
      delete (body.spec as { selector?: unknown }).selector;
      expect(await refused(DEPLOYMENTS, body)).to.contain('spec.selector: Required value');
    });
  });

  describe('PodDisruptionBudgets (ValidatePodDisruptionBudgetSpec)', () => {
    const pdb = (name: string, spec: Record<string, unknown>) => ({ apiVersion: 'policy/v1', kind: 'PodDisruptionBudget', metadata: { name, namespace: 'probe' }, spec: { selector: { matchLabels: { app: 'x' } }, ...spec } });

    it('refuses minAvailable with maxUnavailable', async () => {
      const message = await refused(PDBS, pdb('both', { minAvailable: 1, maxUnavailable: 1 }));
      expect(message).to.match(/^PodDisruptionBudget\.policy "both" is invalid: spec: Invalid value: policy\.PodDisruptionBudgetSpec\{.*\}: minAvailable and maxUnavailable cannot be both set$/);
    });

    it('refuses a percent above 100% and a value that is no percent', async () => {
      expect(await refused(PDBS, pdb('over', { minAvailable: '120%' }))).to.equal('PodDisruptionBudget.policy "over" is invalid: spec.minAvailable: Invalid value: "120%": must not be greater than 100%');
      expect(await refused(PDBS, pdb('word', { maxUnavailable: 'half' }))).to.equal('PodDisruptionBudget.policy "word" is invalid: spec.maxUnavailable: Invalid value: half: a valid percent string must be a numeric string followed by an ending \'%\' (e.g. \'1%\',  or \'93%\', regex used for validation is \'[0-9]+%\')');
      await accepted(PDBS, pdb('half', { maxUnavailable: '50%' }));
    });
  });

  describe('NetworkPolicies (ValidateNetworkPolicySpec)', () => {
    const netpol = (name: string, spec: Record<string, unknown>) => ({ apiVersion: 'networking.k8s.io/v1', kind: 'NetworkPolicy', metadata: { name, namespace: 'probe' }, spec: { podSelector: {}, ...spec } });

    it('refuses a bad protocol, a port out of range and an endPort below the port', async () => {
      const message = await refused(NETPOLS, netpol('ports', { ingress: [{ ports: [{ protocol: 'ICMP', port: 0 }, { port: 80, endPort: 79 }] }] }));
      expect(message).to.equal('NetworkPolicy.networking.k8s.io "ports" is invalid: [spec.ingress[0].ports[0].protocol: Unsupported value: "ICMP": supported values: "TCP", "UDP", "SCTP", spec.ingress[0].ports[0].port: Invalid value: 0: must be between 1 and 65535, inclusive, spec.ingress[0].ports[1].endPort: Invalid value: 80: must be greater than or equal to `port`]');
    });

    it('refuses an empty peer, an ipBlock beside a selector, and an unknown policy type', async () => {
      expect(await refused(NETPOLS, netpol('peer', { egress: [{ to: [{}] }] }))).to.equal('NetworkPolicy.networking.k8s.io "peer" is invalid: spec.egress[0].to[0]: Required value: must specify a peer');
      expect(await refused(NETPOLS, netpol('mixed', { ingress: [{ from: [{ podSelector: {}, ipBlock: { cidr: '10.0.0.0/8' } }] }] }))).to.equal('NetworkPolicy.networking.k8s.io "mixed" is invalid: spec.ingress[0].from[0]: Forbidden: may not specify both ipBlock and another peer');
      expect(await refused(NETPOLS, netpol('types', { policyTypes: ['Ingress', 'Sideways'] }))).to.equal('NetworkPolicy.networking.k8s.io "types" is invalid: spec.policyTypes[1]: Unsupported value: "Sideways": supported values: "Ingress", "Egress"');
      expect(await refused(NETPOLS, netpol('operator', { podSelector: { matchExpressions: [{ key: 'app', operator: 'Like', values: ['x'] }] } }))).to.equal('NetworkPolicy.networking.k8s.io "operator" is invalid: spec.podSelector.matchExpressions[0].operator: Invalid value: "Like": not a valid selector operator');
      await accepted(NETPOLS, netpol('named', { ingress: [{ ports: [{ port: 'http' }], from: [{ namespaceSelector: {} }] }], policyTypes: ['Ingress'] }));
    });
  });

  describe('PersistentVolumeClaims (ValidatePersistentVolumeClaimSpec)', () => {
    const claim = (name: string, spec: Record<string, unknown>) => ({ apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata: { name, namespace: 'probe' }, spec });

    it('refuses a claim without access modes or a storage request', async () => {
      expect(await refused(CLAIMS, claim('bare', {}))).to.equal('PersistentVolumeClaim "bare" is invalid: [spec.accessModes: Required value: at least 1 access mode is required, spec.resources[storage]: Required value]');
    });

    it('refuses an unknown access mode, ReadWriteOncePod with another mode and a zero request', async () => {
      expect(await refused(CLAIMS, claim('mode', { accessModes: ['ReadWriteSometimes'], resources: { requests: { storage: '1Gi' } } }))).to.equal('PersistentVolumeClaim "mode" is invalid: spec.accessModes: Unsupported value: "ReadWriteSometimes": supported values: "ReadOnlyMany", "ReadWriteMany", "ReadWriteOnce", "ReadWriteOncePod"');
      expect(await refused(CLAIMS, claim('pod', { accessModes: ['ReadWriteOncePod', 'ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } }))).to.equal('PersistentVolumeClaim "pod" is invalid: spec.accessModes: Forbidden: may not use ReadWriteOncePod with other access modes');
      expect(await refused(CLAIMS, claim('zero', { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '0' } } }))).to.equal('PersistentVolumeClaim "zero" is invalid: spec.resources[storage]: Invalid value: "0": must be greater than zero');
    });
  });

  describe('finalizers (ValidateFinalizers, validateKubeFinalizerName)', () => {
    const cm = (name: string, finalizers: string[]) => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: 'probe', finalizers } });

    it('refuses a finalizer of a built-in kind that is neither standard nor fully qualified', async () => {
      expect(await refused(CONFIGMAPS, cm('plain', ['hold']))).to.equal('ConfigMap "plain" is invalid: metadata.finalizers[0]: Invalid value: "hold": name is neither a standard finalizer name nor is it fully qualified');
      await accepted(CONFIGMAPS, cm('qualified', ['example.org/hold', 'kubernetes']));
    });

    it('refuses a finalizer that is no qualified name, and orphan with foregroundDeletion', async () => {
      expect(await refused(CONFIGMAPS, cm('spaced', ['example.org/a b']))).to.equal('ConfigMap "spaced" is invalid: metadata.finalizers: Invalid value: "example.org/a b": name part must consist of alphanumeric characters, \'-\', \'_\' or \'.\', and must start and end with an alphanumeric character (e.g. \'MyName\',  or \'my.name\',  or \'123-abc\', regex used for validation is \'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]\')');
      expect(await refused(CONFIGMAPS, cm('both', ['orphan', 'foregroundDeletion']))).to.equal('ConfigMap "both" is invalid: metadata.finalizers: Invalid value: []string{"orphan", "foregroundDeletion"}: finalizer orphan and foregroundDeletion cannot be both set');
    });
  });
});
