// backup-immutability in the charm: the status says whether the bucket can hold immutable backups (Object Lock is
// enabled only at a bucket's creation, so the fix is a new bucket, said in one sentence), and the actions that write
// or delete backups refuse to run on a value that does not parse or a bucket without Object Lock, rather than write
// backups that are not what the operator asked for. Everything else (list, verify, restore) goes on.
import { parseImmutability, type Immutability } from '../store/immutability.ts';
import { objectLockMissing } from '../store/object-lock.ts';
import type { S3Settings } from '../store/settings.ts';
import type { CharmRuntime } from './runtime.ts';
import { readS3Readiness } from './s3.ts';
import type { StatusNote } from './status.ts';

const SETTING = 'backup-immutability';

/** Undefined when off, the policy, or the problem with the value (one sentence). */
async function configured(charm: CharmRuntime): Promise<{ ok: true; immutability: Immutability | undefined } | { ok: false; problem: string } | undefined> {
  const config = await charm.config();
  if (!config.ok) return undefined;
  return parseImmutability(config.config[SETTING], `config option ${SETTING}`);
}

/** Object Lock on the bucket, asked with the status's light signed request: true, false, or undefined when unknown. */
async function bucketLocked(settings: S3Settings): Promise<boolean | undefined> {
  const { probeObjectLock } = await import('../store/bucket-probe.ts');
  return probeObjectLock(settings);
}

export async function immutabilityNotes(charm: CharmRuntime): Promise<StatusNote[]> {
  const parsed = await configured(charm);
  if (!parsed) return [];
  if (!parsed.ok) return [{ level: 'blocked', text: parsed.problem.replace(/\.$/, '') }];
  if (!parsed.immutability) return [];
  const readiness = await readS3Readiness(charm);
  if (readiness.state !== 'ready') return [];
  const locked = await bucketLocked(readiness.settings);
  if (locked === false) return [{ level: 'blocked', text: objectLockMissing(readiness.settings.bucket, SETTING) }];
  if (locked === undefined) return [{ level: 'active', text: `Object Lock of bucket "${readiness.settings.bucket}" could not be checked` }];
  return [{ level: 'active', text: `backups immutable for ${parsed.immutability.text}` }];
}

/**
 * Before an action writes or deletes backups: the one sentence why it cannot, or undefined. The bucket is asked with
 * the SDK client the action then uses.
 */
export async function immutabilityRefusal(charm: CharmRuntime, settings: S3Settings): Promise<string | undefined> {
  const parsed = await configured(charm);
  if (!parsed) return undefined;
  if (!parsed.ok) return `${parsed.problem.replace(/\.$/, '')}; nothing was changed.`;
  if (!parsed.immutability) return undefined;
  const [{ createS3Client, classifyS3Error }, { bucketHasObjectLock }, { charmProblemSentence }] = await Promise.all([
    import('../store/s3-client.ts'), import('../store/object-lock.ts'), import('./s3-wording.ts'),
  ]);
  const client = createS3Client(settings, { maxAttempts: 2 });
  try {
    if (!(await bucketHasObjectLock(client, settings.bucket))) return `The ${objectLockMissing(settings.bucket, SETTING)}; nothing was changed.`;
  } catch (error) {
    return `The Object Lock of bucket "${settings.bucket}" could not be checked: ${charmProblemSentence(classifyS3Error(error, settings))}; nothing was changed.`;
  } finally {
    client.destroy();
  }
  return undefined;
}
