// Backup ids name the second their backup started (src/store/layout.ts), and list-backups and prune-backups order by
// them. A test that makes backups one after the other waits for this condition, not for a fixed second.
// Nothing upstream is simulated here: the id format is our own; the marker's start time has whole seconds as Velero
// writes it (vmware-tanzu/velero pkg/apis/velero/v1/backup_types.go, metav1.Time).
import { backupIdTime } from '../../src/store/layout.ts';

/** Resolves once the clock is past the second `id` names (at once when it already is), so the next id sorts after it. */
export async function clockPastSecondOf(id: string | undefined): Promise<void> {
  const at = id === undefined ? undefined : backupIdTime(id);
  if (at === undefined) return;
  const next = at.getTime() + 1000;
  while (Date.now() < next) await new Promise((resolve) => setTimeout(resolve, next - Date.now()));
}
