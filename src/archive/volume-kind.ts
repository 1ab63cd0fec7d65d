// Which kind of volume data a backup holds, as its manifest's volume index records it: restic snapshots (the restic
// mover), plain files (the rclone mover), both (PVCs backed up by each), or none. list and verify show it.
import type { VolumeEntry } from './manifest.ts';

export type VolumeDataKind = 'restic' | 'files' | 'files and restic' | 'none';

export function volumeDataKind(volumes: readonly VolumeEntry[]): VolumeDataKind {
  const withData = volumes.filter((v) => !v.unbound);
  const restic = withData.some((v) => v.restic);
  const files = withData.some((v) => !v.restic);
  return restic && files ? 'files and restic' : restic ? 'restic' : files ? 'files' : 'none';
}
