// The catalogue: queries over the backups of a location (list, describe, latest, verify, the data-files index),
// read through the BackupStore and decoded with the format's codecs.
export { verifyBackup, listBackups, describeBackup, latestWholeBackup, latestWholeMarker, sealingNote, type VerifyReport, type BackupListing, type LatestBackup } from './verify.ts';
export { checkDataFiles, indexDataFiles, DATA_FILES_INDEX } from './data-files.ts';
export { readItems } from './read-items.ts';
