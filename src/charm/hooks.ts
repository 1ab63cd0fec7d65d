// Hook handlers. Each one converges the unit on what the facts say (the s3 request, the status); none keeps state.
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

/** Gathers the facts of this dispatch and sets the unit's status from them. */
export async function updateStatus(charm: CharmRuntime, extraNotes: StatusNote[] = []): Promise<void> {
  // Every fact is independent of the others: gather them at once, so update-status costs the slowest, not the sum.
  const [config, s3, noteLists] = await Promise.all([
    charm.config(),
    s3Fact(charm),
    Promise.all(statusNotes.map((contribute) => contribute(charm))),
  ]);
  const notes: StatusNote[] = [...extraNotes, ...noteLists.flat()];
  const facts: StatusFacts = { s3, notes, ...(config.ok ? {} : { configProblem: config.problem }) };
  const status = decideStatus(facts);
  await charm.tools.statusSet(status.status, status.message);
}

/** Exit code of a hook: 1 while a control-plane request is still owed, so Juju retries it. */
function exitFor(controlPlane: ControlPlaneConvergence): number {
  return controlPlane.owed ? 1 : 0;
}

async function converge(charm: CharmRuntime): Promise<number> {
  // First, and independent of the S3 side: MinIO serves none of its consumers while our versions are missing.
  const controlPlane = await convergeControlPlane(charm);
  await ensureS3Request(charm);
  // Before the status, which reports what the guard is once this hook has converged it.
  await convergeGuard(charm);
  await updateStatus(charm, controlPlane.notes);
  return exitFor(controlPlane);
}

/** created/joined/changed/broken of object-storage, kfp-db and katib-db: answer, then refresh the status. */
function controlPlaneRelationHooks(charm: CharmRuntime): Record<string, Handler> {
  const hooks: Record<string, Handler> = {};
  for (const endpoint of CONTROL_PLANE_ENDPOINTS) {
    for (const event of ['created', 'joined', 'changed']) {
      hooks[`${endpoint}-relation-${event}`] = async () => {
        const controlPlane = await convergeControlPlane(charm);
        await updateStatus(charm, controlPlane.notes);
        return exitFor(controlPlane);
      };
    }
    hooks[`${endpoint}-relation-broken`] = () => updateStatus(charm);
  }
  return hooks;
}

export function hookHandlers(charm: CharmRuntime): Record<string, Handler> {
  const convergeHook: Handler = () => converge(charm);
  return {
    install: async () => {
      await charm.tools.applicationVersionSet(CHARM_VERSION);
      return converge(charm);
    },
    'config-changed': convergeHook,
    'upgrade-charm': async () => {
      await charm.tools.applicationVersionSet(CHARM_VERSION);
      return converge(charm);
    },
    'leader-elected': convergeHook,
    'update-status': () => updateStatus(charm),
    'secret-changed': () => updateStatus(charm),
    [`${S3_ENDPOINT}-relation-created`]: convergeHook,
    [`${S3_ENDPOINT}-relation-joined`]: convergeHook,
    [`${S3_ENDPOINT}-relation-changed`]: convergeHook,
    [`${S3_ENDPOINT}-relation-broken`]: () => updateStatus(charm),
    ...controlPlaneRelationHooks(charm),
    remove: async () => {
      await charm.tools.statusSet('maintenance', 'removing');
      await liftGuard(charm);
    },
  };
}
