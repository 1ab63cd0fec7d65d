// The archive format: what the engines import.
export { BackupWriter, type BackupWriterOptions, type BackupSummary } from './writer.ts';
export { readItems, readManifest, readMarker, ArchiveError, type ArchiveItem, type Problem, type ProblemKind, type ReadItemsOptions } from './reader.ts';
export { verifyBackup, listBackups, type VerifyReport, type BackupListing } from './verify.ts';
export { SecretSealer, SecretOpener, SealError, isSealed, keyIdOf } from './seal.ts';
export { ManifestSchema, parseManifest, type Manifest, type BackupScope } from './manifest.ts';
