// The archive format: what the engines import.
export { BackupWriter, type BackupWriterOptions, type BackupSummary } from './writer.ts';
export { decodeItems, decodeManifest, decodeMarker, ArchiveError, type ArchiveItem, type Problem, type ProblemKind, type ReadItemsOptions, type ExpectedArchive } from './reader.ts';
export { BackupPhaseError, judgePhase } from './velero-backup.ts';
export { SecretSealer, SecretOpener, SealError, isSealed, keyIdOf } from './seal.ts';
export { ManifestSchema, parseManifest, type Manifest, type BackupScope } from './manifest.ts';
export { ChecksumIndex } from './checksum-index.ts';
