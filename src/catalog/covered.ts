// backup-immutability in the catalogue: when a backup is missing or damaged, whether someone holding the bucket key hid
// or wrote over retained versions of the location's objects (src/store/version-reveal.ts), in one sentence with the
// edge's remedy, so list and verify tell the truth about a backup that is still there underneath. A restic
// repository's hidden objects count only where verify found the repository damaged: restic's own prune hides what it
// removes in the same way (docs/reliability.md, "Immutable backups").
import type { BackupStore } from '../store/backup-store.ts';
import { coveredSentence, type CoveredReport } from '../store/version-reveal.ts';
import type { Wording } from '../errors/remedy.ts';

/** The report and its sentence, or undefined without immutability or when nothing retained is covered. */
export async function coveredNote(store: BackupStore, wording: Wording, options: { repositoryDamaged?: boolean; now?: Date } = {}): Promise<{ report: CoveredReport; sentence: string } | undefined> {
  const report = await store.coveredObjects(options.now ?? new Date());
  if (!report) return undefined;
  const sentence = coveredSentence(report, wording.remedy({ fix: 'recover-retained' }), options.repositoryDamaged === true);
  return sentence ? { report, sentence } : undefined;
}
