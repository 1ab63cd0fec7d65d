// What prune knows of each folder under backups/ before it plans (plan.ts): with `encryption-key` set, whether the key
// vouches for a complete backup and its time as the HMAC covers it (the catalogue's listing, the one `latest` orders
// by), and whether an incomplete one is being written as its run record proves (src/archive/run-record.ts). Without a
// key every folder is taken on the bucket's word, and the outcome says so.
import { decodeRunRecord, RUN_RECORD_FILE } from '../archive/run-record.ts';
import { listBackups, type BackupListing } from '../catalog/verify.ts';
import type { BackupStore } from '../store/backup-store.ts';
import type { FolderFacts } from './plan.ts';
import type { RunningBackup } from './restic.ts';

export interface FolderSurvey {
  folders: FolderFacts[];
  /** backups being written: their run records are fresh (and, with a key, authenticated) */
  running: RunningBackup[];
  /** incomplete folders written to lately whose run record proves nothing: they hold nothing up */
  ignored: Array<{ what: string; why: string }>;
}

/** Why the key does not vouch for a listed backup, as a clause; undefined when it does. */
function notVouchedFor(listing: BackupListing | undefined): string | undefined {
  if (!listing) return 'its velero-backup.json cannot be read';
  if (listing.problem?.startsWith('manifest unusable')) return `its ${listing.problem}`;
  if (listing.problem?.startsWith('manifest changed')) return 'its manifest was changed after the backup was committed';
  if (listing.authentication === 'authenticated') return undefined;
  if (listing.authentication === 'hmac-mismatch') return 'its HMAC does not match its manifest under the encryption-key';
  return listing.format === 'velero' ? 'it has no kubeflow-upgrader manifest' : 'it carries no HMAC';
}

const minutesAgo = (now: Date, at: Date) => Math.max(0, Math.round((now.getTime() - at.getTime()) / 60_000));

export async function surveyFolders(store: BackupStore, encryptionKey: string | Buffer | undefined, graceMs: number, now: Date): Promise<FolderSurvey> {
  const keyed = encryptionKey !== undefined && encryptionKey.length > 0;
  const listed = await store.listBackupFolders();
  const listings = keyed ? new Map((await listBackups(store, { encryptionKey })).map((l) => [l.id, l])) : undefined;
  const survey: FolderSurvey = { folders: [], running: [], ignored: [] };
  for (const folder of listed) {
    const facts: FolderFacts = { ...folder };
    if (folder.complete && folder.ours && listings) {
      const listing = listings.get(folder.id);
      facts.untrusted = notVouchedFor(listing);
      if (!facts.untrusted && listing) facts.created = new Date(listing.created);
    }
    if (!folder.complete && folder.ours) {
      const read = decodeRunRecord(await store.readFile(folder.id, RUN_RECORD_FILE), folder.id, encryptionKey);
      const fresh = read.state === 'trusted' && read.record.expires > now;
      if (read.state === 'trusted' && fresh) {
        facts.runningUntil = read.record.expires;
        survey.running.push({ id: folder.id, started: read.record.started, expires: read.record.expires, ...(read.record.holder ? { holder: read.record.holder } : {}) });
      } else if (folder.lastWrite && now.getTime() - folder.lastWrite.getTime() < graceMs) {
        const why = read.state === 'untrusted' ? read.reason
          : read.state === 'trusted' ? `its run record ran out at ${read.record.expires.toISOString()}`
          : 'it holds no run record';
        survey.ignored.push({
          what: `folder ${store.url(store.keys(folder.id).folder)}`,
          why: `written to ${minutesAgo(now, folder.lastWrite)} minute(s) ago without a marker, but ${why}, so it is not taken for a backup being written`,
        });
      }
    }
    survey.folders.push(facts);
  }
  return survey;
}
