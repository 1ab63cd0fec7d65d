// The age of the newest complete backup, for the status. update-status runs every few minutes, so the time a backup
// action last succeeded is kept in the unit's state; S3 is only asked when nothing is remembered or what is remembered
// is already too old (another unit or the CLI may have made a newer one).
import { z } from 'zod';
import type { CharmRuntime } from './runtime.ts';
import type { StatusNote } from './status.ts';
import { readS3Readiness } from './s3.ts';
import type { S3Settings } from '../store/settings.ts';
import { BACKUPS_FOLDER, normalizePrefix } from '../store/layout.ts';
import { describe } from '../errors/index.ts';

export const LAST_BACKUP_KEY = 'last-backup';

const Remembered = z.object({ id: z.string().min(1), completed: z.string().datetime({ offset: true }) });
export type LastBackup = z.infer<typeof Remembered>;

/** What backup-state and snapshot-profiles store once their backup is committed. */
export function lastBackupState(backup: LastBackup): Record<string, string> {
  return { [LAST_BACKUP_KEY]: JSON.stringify(backup) };
}

async function remembered(charm: CharmRuntime): Promise<LastBackup | undefined> {
  const raw = await charm.tools.stateGetKey(LAST_BACKUP_KEY).catch(() => undefined);
  if (!raw) return undefined;
  try {
    const parsed = Remembered.safeParse(JSON.parse(raw));
    return parsed.success ? parsed.data : undefined;
  } catch {
    return undefined;
  }
}

/** The newest whole backup in the store: its marker says Completed or PartiallyFailed. */
export async function newestInStore(settings: S3Settings): Promise<LastBackup | undefined> {
  // No key under backups/ means no backup: one signed request tells, without loading the AWS SDK into the hook.
  const { anyObjectUnder } = await import('../store/bucket-probe.ts');
  const prefix = normalizePrefix(settings.path);
  if ((await anyObjectUnder(settings, prefix ? `${prefix}/${BACKUPS_FOLDER}` : BACKUPS_FOLDER)) === false) return undefined;
  const [{ latestWholeBackup }, { openBackupStore }] = await Promise.all([import('../catalog/latest.ts'), import('../store/open.ts')]);
  const newest = (await latestWholeBackup(openBackupStore(settings)))?.listing;
  if (!newest) return undefined;
  return { id: newest.id, completed: newest.completed ?? newest.created };
}

/** The newest complete backup this unit knows of, asking S3 only when the remembered one is missing or too old. */
export async function newestBackup(charm: CharmRuntime, maxAgeMs: number, now = new Date()): Promise<LastBackup | undefined> {
  const known = await remembered(charm);
  if (known && now.getTime() - Date.parse(known.completed) <= maxAgeMs) return known;
  const readiness = await readS3Readiness(charm);
  const fromStore = readiness.state === 'ready' ? await newestInStore(readiness.settings) : undefined;
  if (!fromStore) return known;
  if (known && Date.parse(fromStore.completed) <= Date.parse(known.completed)) return known;
  await charm.tools.stateSet(lastBackupState(fromStore));
  return fromStore;
}

export async function lastBackupNotes(charm: CharmRuntime): Promise<StatusNote[]> {
  const config = await charm.config();
  if (!config.ok) return [];
  const maxAgeMs = config.config['max-backup-age'] * 1000;
  try {
    const now = new Date();
    const newest = await newestBackup(charm, maxAgeMs, now);
    if (!newest) return [{ level: 'active', text: 'no backup yet' }];
    const { formatAge } = await import('../guard/duration.ts');
    const age = now.getTime() - Date.parse(newest.completed);
    return [{ level: 'active', text: `last backup ${formatAge(age)} ago${age > maxAgeMs ? ' (older than max-backup-age)' : ''}` }];
  } catch (error) {
    await charm.log('WARNING', `the newest backup could not be found: ${describe(error)}`);
    return [{ level: 'active', text: 'last backup unknown (S3 listing failed)' }];
  }
}
