// Hook handlers. Each one converges the unit on what the facts say (the s3 request, the control-plane requests, the
// guard); the status is collected once after it. None keeps state between dispatches.
import type { Handler } from '../juju/router.ts';
import { S3_ENDPOINT } from '../store/settings.ts';
import { CHARM_VERSION } from './version.ts';
import { ensureS3Request, readS3Readiness } from './s3.ts';
import { decideStatus, type S3Fact, type StatusFacts, type StatusNote } from './status.ts';
import type { CharmRuntime } from './runtime.ts';
import { statusNotes } from './status-notes.ts';
import { convergeGuard, liftGuard } from './guard.ts';
import { convergeControlPlane, type ControlPlaneConvergence } from './control-plane.ts';
import { CONTROL_PLANE_ENDPOINTS } from '../controlplane/relations.ts';
import { charmProblemSentence } from './s3-wording.ts';
import { convergeResticKey, resticKeyChangePending } from './restic-key.ts';
import { convergeWorkload, PEBBLE_READY } from './workload.ts';
import { convergeCos } from './cos.ts';
import { GRAFANA_DASHBOARD, METRICS_ENDPOINT } from '../observability/cos-data.ts';

async function s3Fact(charm: CharmRuntime): Promise<S3Fact> {
  // One signed HeadBucket, without the AWS SDK (most of the bundle, and most of a hook's CPU to load): the probe loads while
  // the hook tools that read the relation run, and only in a dispatch with an S3 relation.
  let probe: Promise<typeof import('../store/bucket-probe.ts')> | undefined;
  const loadProbe = () => (probe ??= import('../store/bucket-probe.ts'));
  const readiness = await readS3Readiness(charm, () => void loadProbe().catch(() => undefined));
  if (readiness.state !== 'ready') return readiness;
  const { probeBucket } = await loadProbe();
  const check = await probeBucket(readiness.settings);
  if (!check.ok) {
    await charm.log('WARNING', `S3 check failed: ${charmProblemSentence(check.problem)}`);
    return { state: 'unusable', problem: check.problem };
  }
  return { state: 'ready', bucket: readiness.settings.bucket, path: readiness.settings.path };
}

/**
 * The unit's status, collected once per dispatch after the hook's own work (ops' collect-status): from the facts the
 * handlers left on the runtime and from read-only contributors. No handler sets the status itself, so none can forget
 * to, or do it before the work that changes it.
 */
async function collectStatus(charm: CharmRuntime): Promise<void> {
  // Every fact is independent of the others: gather them at once, so update-status costs the slowest, not the sum.
  const [config, s3, noteLists] = await Promise.all([
    charm.config(),
    s3Fact(charm),
    Promise.all(statusNotes.map((contribute) => contribute(charm))),
  ]);
  const notes: StatusNote[] = [...charm.facts.notes, ...noteLists.flat()];
  const facts: StatusFacts = { s3, notes, ...(config.ok ? {} : { configProblem: config.problem }) };
  const status = decideStatus(facts);
  await charm.tools.statusSet(status.status, status.message);
}

/** Exit code of a hook: 1 while a control-plane request is still owed, so Juju retries it. */
function exitFor(controlPlane: ControlPlaneConvergence): number {
  return controlPlane.owed ? 1 : 0;
}

/** Answers the control-plane relations; what is still owed goes into the status. */
async function answerControlPlane(charm: CharmRuntime): Promise<number> {
  const controlPlane = await convergeControlPlane(charm);
  charm.facts.notes.push(...controlPlane.notes);
  return exitFor(controlPlane);
}

async function converge(charm: CharmRuntime): Promise<number> {
  // First, and independent of the S3 side: MinIO serves none of its consumers while our versions are missing.
  const exitCode = await answerControlPlane(charm);
  await ensureS3Request(charm);
  await convergeGuard(charm);
  // A changed encryption-key is added to the restic repositories before the unit uses it (never fails the hook).
  await convergeResticKey(charm);
  // then the scheduled-backup service gets the settings this hook decided (never fails the hook)
  await convergeWorkload(charm);
  return exitCode;
}

/** secret-changed of the encryption-key secret: its new revision goes into the restic repositories, then is tracked. */
async function secretChanged(charm: CharmRuntime): Promise<void> {
  const config = await charm.config();
  const uri = config.ok ? config.config['encryption-key'] : undefined;
  const id = (text: string) => text.split(/[:/]/).pop();
  if (uri && charm.context.secret && id(charm.context.secret.id) === id(uri)) await convergeResticKey(charm);
  // a new revision of the key or of s3-integrator's credentials secret: the service's settings follow
  await convergeWorkload(charm);
}

/** A hook's own work, then the status, whatever the work returned. */
function withStatus(charm: CharmRuntime, work: () => Promise<number | void>): Handler {
  return async () => {
    const exitCode = await work();
    await collectStatus(charm);
    return exitCode;
  };
}

export function hookHandlers(charm: CharmRuntime): Record<string, Handler> {
  const nothing = async () => undefined;
  const work: Record<string, () => Promise<number | void>> = {
    install: async () => {
      await charm.tools.applicationVersionSet(CHARM_VERSION);
      return converge(charm);
    },
    'config-changed': () => converge(charm),
    'upgrade-charm': async () => {
      await charm.tools.applicationVersionSet(CHARM_VERSION);
      const exitCode = await converge(charm);
      // a new charm may bring new rules or a new dashboard
      await convergeCos(charm);
      return exitCode;
    },
    'leader-elected': async () => {
      const exitCode = await converge(charm);
      // the new leader writes the application databags of the COS relations
      await convergeCos(charm);
      return exitCode;
    },
    // The guard is re-converged every few minutes, so a policy someone deleted comes back.
    'update-status': async () => {
      await convergeGuard(charm);
      // a key change that could not finish (S3 away, a Job that failed) is tried again
      if (await resticKeyChangePending(charm)) await convergeResticKey(charm);
    },
    'secret-changed': () => secretChanged(charm),
    // the workload container's Pebble (re)started: the bundle, the settings and the layer again
    [PEBBLE_READY]: async () => {
      await convergeWorkload(charm);
      // the pod may have a new address after a restart
      await convergeCos(charm);
    },
    [`${S3_ENDPOINT}-relation-created`]: () => converge(charm),
    [`${S3_ENDPOINT}-relation-joined`]: () => converge(charm),
    [`${S3_ENDPOINT}-relation-changed`]: () => converge(charm),
    [`${S3_ENDPOINT}-relation-broken`]: nothing,
  };
  for (const endpoint of [METRICS_ENDPOINT, GRAFANA_DASHBOARD]) {
    for (const event of ['created', 'joined', 'changed']) work[`${endpoint}-relation-${event}`] = () => convergeCos(charm);
    work[`${endpoint}-relation-broken`] = nothing;
  }
  for (const endpoint of CONTROL_PLANE_ENDPOINTS) {
    // the scheduled service copies what the relations offer: its settings follow each change, a broken relation's too
    for (const event of ['created', 'joined', 'changed']) {
      work[`${endpoint}-relation-${event}`] = async () => {
        const exitCode = await answerControlPlane(charm);
        await convergeWorkload(charm);
        return exitCode;
      };
    }
    work[`${endpoint}-relation-broken`] = () => convergeWorkload(charm);
  }
  const hooks: Record<string, Handler> = {};
  for (const [event, run] of Object.entries(work)) hooks[event] = withStatus(charm, run);
  // The unit is going away: it says so, and no status is collected after.
  hooks.remove = async () => {
    await charm.tools.statusSet('maintenance', 'removing');
    await liftGuard(charm);
  };
  return hooks;
}
