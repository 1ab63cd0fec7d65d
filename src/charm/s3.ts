// Reads the s3-credentials relation into S3Readiness: which relation, whose databag, which secret.
import { HookToolError } from '../juju/hook-tools.ts';
import { S3_ENDPOINT, credentialsFix, requirerRequest, settingsFromProvider, trackOf, type S3Readiness } from '../store/settings.ts';
import { storageClassUse } from '../store/storage-class.ts';
import { parseImmutability } from '../store/immutability.ts';
import type { CharmRuntime } from './runtime.ts';
import type { StatusNote } from './status.ts';

/** The relation id of s3-credentials, unless it is the one being broken in this hook. */
export async function s3RelationId(charm: CharmRuntime): Promise<string | undefined> {
  const ids = await charm.tools.relationIds(S3_ENDPOINT);
  const broken = charm.context.event === `${S3_ENDPOINT}-relation-broken` ? charm.context.relation?.id : undefined;
  return ids.find((id) => id !== broken);
}

/**
 * The S3 readiness of this dispatch, read once. `onRelation` runs as soon as a relation is known (on the first read
 * only): the caller can warm up what it will need next.
 */
export function readS3Readiness(charm: CharmRuntime, onRelation?: () => void): Promise<S3Readiness> {
  // One reading per dispatch: the status and its contributors (e.g. the last backup's age) all ask.
  charm.facts.s3 ??= readS3ReadinessOnce(charm, onRelation);
  return charm.facts.s3;
}

async function readS3ReadinessOnce(charm: CharmRuntime, onRelation?: () => void): Promise<S3Readiness> {
  const [relationId, config] = await Promise.all([s3RelationId(charm), charm.config()]);
  if (!relationId) return { state: 'no-relation' };
  onRelation?.();
  const wanted = { bucket: config.ok ? config.config['s3-bucket'] : '', path: config.ok ? config.config['s3-path'] : '' };
  const defaults = requirerRequest(wanted);

  const here = charm.context.relation?.id === relationId ? charm.context.relation : undefined;
  const remoteApp = here?.remoteApp ?? (await charm.tools.relationRemoteApp(relationId));
  if (!remoteApp) return { state: 'waiting', message: 'waiting for s3-integrator to join the relation' };
  const databag = await charm.tools.relationGet(relationId, remoteApp, { app: true });
  for (const key of ['access-key', 'secret-key']) charm.redactor.add(databag[key]);

  let secret: Record<string, string> | undefined;
  const secretUri = databag['secret-extra'];
  if (secretUri) {
    try {
      // Always --refresh, as the official library reads it (data_interfaces.py `get_content(refresh=True)`): without
      // it Juju hands out the revision this unit last tracked, so the old keys would stay in use after a rotation
      // until a secret-changed hook happens to run.
      secret = await charm.tools.secretGet(secretUri, { refresh: true });
    } catch (error) {
      const detail = error instanceof HookToolError ? error.stderr.split('\n')[0]!.trim() : 'unknown error';
      await charm.log('WARNING', `secret-get of the s3-integrator secret failed: ${detail}`);
      return { state: 'invalid', problem: `cannot read s3-integrator's credentials secret; check that s3-integrator granted it to this application, or ${credentialsFix(trackOf(databag))}` };
    }
  }
  const readiness = settingsFromProvider({ databag, ...(secret ? { secret } : {}) }, { bucket: defaults.bucket!, path: defaults.path! });
  // backup-immutability goes with the settings every store opened from them writes and prunes by
  const immutability = config.ok ? parseImmutability(config.config['backup-immutability'], 'backup-immutability') : undefined;
  if (readiness.state === 'ready' && immutability?.ok && immutability.immutability) readiness.settings.immutability = immutability.immutability;
  return readiness;
}

/** The leader (re)writes what we ask of s3-integrator when it differs from our application databag. */
export async function ensureS3Request(charm: CharmRuntime): Promise<void> {
  if (!(await charm.isLeader())) return;
  const relationId = await s3RelationId(charm);
  if (!relationId) return;
  const config = await charm.config();
  if (!config.ok) return;
  const wanted = requirerRequest({ bucket: config.config['s3-bucket'], path: config.config['s3-path'] });
  const current = await charm.tools.relationGet(relationId, charm.context.appName, { app: true });
  const changed = Object.entries(wanted).some(([key, value]) => current[key] !== value);
  if (changed) await charm.tools.relationSet(relationId, wanted, { app: true });
}

/**
 * A bucket set here that s3-integrator does not use: its own `bucket` option wins on both tracks, and on track 1 so
 * does the first bucket any consumer asked for (s3-integrator src/charm.py), which no later change of ours moves.
 */
export async function s3BucketNotes(charm: CharmRuntime): Promise<StatusNote[]> {
  const [readiness, config] = await Promise.all([readS3Readiness(charm), charm.config()]);
  const wanted = config.ok ? config.config['s3-bucket'] : '';
  if (readiness.state !== 'ready' || !wanted || readiness.settings.bucket === wanted) return [];
  return [{ level: 'active', text: `s3-bucket "${wanted}" is not used: s3-integrator sends "${readiness.settings.bucket}" (set bucket on s3-integrator)` }];
}

/**
 * A cold storage class that a restore can still read (one it cannot read never becomes settings: storage-class.ts)
 * is said in the status, so whoever shares an s3-integrator sees what backups cost to read and to prune.
 */
export async function s3StorageClassNotes(charm: CharmRuntime): Promise<StatusNote[]> {
  const readiness = await readS3Readiness(charm);
  if (readiness.state !== 'ready' || !readiness.settings.storageClass) return [];
  const use = storageClassUse(readiness.settings.storageClass);
  return use.readable && use.warning ? [{ level: 'active', text: use.warning }] : [];
}
