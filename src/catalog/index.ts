// The catalogue: queries over the backups of a location (list, describe, latest, verify, the data-files index),
// read through the BackupStore and decoded with the format's codecs.
export { verifyBackup, sealingNote, type VerifyReport } from './verify.ts';
export { listBackups, describeBackup, type BackupListing } from './listing.ts';
export { latestWholeBackup, resolveBackupId, type LatestBackup } from './latest.ts';
export { checkDataFiles, indexDataFiles, DATA_FILES_INDEX } from './data-files.ts';
export { readItems } from './read-items.ts';
