// velero-backup.json read by Velero's rules, and what Velero's controllers then do with it. Built from the sources,
// rule by rule (not copied):
// - vmware-tanzu/velero pkg/persistence/object_store.go (GetBackupMetadata): the file goes through the universal
//   decoder of Velero's scheme for velero.io/v1, so `apiVersion` and `kind` are required and must name velero.io/v1
//   Backup; the JSON decoder underneath matches field names case-sensitively and drops unknown fields
//   (kubernetes/apimachinery runtime/serializer/json, over sigs.k8s.io/json).
// - pkg/apis/velero/v1/backup_types.go: the Go type of every field of BackupSpec and BackupStatus.
// - kubernetes/apimachinery pkg/apis/meta/v1/time.go: a Time is a JSON string parsed with Go's time.RFC3339 layout
//   (a fractional second is accepted when parsing), or null; duration.go: a Duration is a string for
//   time.ParseDuration.
// - pkg/controller/backup_sync_controller.go: a synced backup is created in the cluster under its metadata.name, so
//   that name is required; incomplete phases are skipped unless expired.
// - pkg/controller/gc_controller.go: a backup is deleted only when status.expiration is set and not after now.
// - config/crd/v1/bases/velero.io_backups.yaml: the Backup the sync creates must pass the CRD's schema, whose
//   status.phase is an enum of the BackupPhase values.

export class VeleroDecodeError extends Error {
  override name = 'VeleroDecodeError';
}

type Kind = 'string' | 'bool' | 'int' | 'time' | 'duration' | 'strings' | 'stringMap' | 'object' | 'objects';
type Schema = { [field: string]: Kind | Schema };

// Only the fields whose Go type we check; any other field is dropped, as Velero's decoder drops it.
const OBJECT_META: Schema = {
  name: 'string', generateName: 'string', namespace: 'string', uid: 'string', resourceVersion: 'string', generation: 'int',
  creationTimestamp: 'time', deletionTimestamp: 'time', labels: 'stringMap', annotations: 'stringMap', finalizers: 'strings',
  ownerReferences: 'objects', managedFields: 'objects',
};
const BACKUP_SPEC: Schema = {
  metadata: { labels: 'stringMap' },
  includedNamespaces: 'strings', excludedNamespaces: 'strings', includedResources: 'strings', excludedResources: 'strings',
  includedClusterScopedResources: 'strings', excludedClusterScopedResources: 'strings',
  includedNamespaceScopedResources: 'strings', excludedNamespaceScopedResources: 'strings',
  labelSelector: 'object', orLabelSelectors: 'objects', snapshotVolumes: 'bool', ttl: 'duration', volumeGroupSnapshotLabelKey: 'string',
  includeClusterResources: 'bool', hooks: { resources: 'objects' }, storageLocation: 'string', volumeSnapshotLocations: 'strings',
  defaultVolumesToRestic: 'bool', defaultVolumesToFsBackup: 'bool', orderedResources: 'stringMap', csiSnapshotTimeout: 'duration',
  itemOperationTimeout: 'duration', resourcePolicy: 'object', snapshotMoveData: 'bool', datamover: 'string',
  uploaderConfig: { parallelFilesUpload: 'int' },
};
const BACKUP_STATUS: Schema = {
  version: 'int', formatVersion: 'string', expiration: 'time', phase: 'string', queuePosition: 'int', validationErrors: 'strings',
  startTimestamp: 'time', completionTimestamp: 'time', volumeSnapshotsAttempted: 'int', volumeSnapshotsCompleted: 'int',
  failureReason: 'string', warnings: 'int', errors: 'int', progress: { totalItems: 'int', itemsBackedUp: 'int' },
  csiVolumeSnapshotsAttempted: 'int', csiVolumeSnapshotsCompleted: 'int', backupItemOperationsAttempted: 'int',
  backupItemOperationsCompleted: 'int', backupItemOperationsFailed: 'int', hookStatus: { hooksAttempted: 'int', hooksFailed: 'int' },
};
const BACKUP: Schema = { apiVersion: 'string', kind: 'string', metadata: OBJECT_META, spec: BACKUP_SPEC, status: BACKUP_STATUS };

const BACKUP_PHASES: readonly string[] = [
  'New', 'Queued', 'ReadyToStart', 'FailedValidation', 'InProgress', 'WaitingForPluginOperations',
  'WaitingForPluginOperationsPartiallyFailed', 'Finalizing', 'FinalizingPartiallyFailed', 'Completed', 'PartiallyFailed',
  'Failed', 'Deleting',
];

/** Go's time.Parse(time.RFC3339, …): the layout's fields exactly, a fraction after the seconds tolerated. */
const RFC3339 = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(?:[.,]\d+)?(Z|[+-](\d{2}):(\d{2}))$/;

export function parseGoTime(text: string): Date {
  const m = RFC3339.exec(text);
  if (!m) throw new VeleroDecodeError(`parsing time "${text}" as RFC 3339 failed`);
  const [year, month, day, hour, minute, second] = m.slice(1, 7).map(Number) as [number, number, number, number, number, number];
  const daysIn = new Date(Date.UTC(year, month, 0)).getUTCDate();
  const zoneOk = m[7] === 'Z' || (Number(m[8]) < 24 && Number(m[9]) < 60);
  if (month < 1 || month > 12 || day < 1 || day > daysIn || hour > 23 || minute > 59 || second > 59 || !zoneOk) {
    throw new VeleroDecodeError(`parsing time "${text}": a field is out of range`);
  }
  return new Date(text.replace(',', '.'));
}

const DURATION_UNITS: Record<string, number> = { ns: 1e-6, us: 1e-3, 'µs': 1e-3, 'μs': 1e-3, ms: 1, s: 1000, m: 60_000, h: 3_600_000 };

/** Go's time.ParseDuration, in milliseconds: `[-+]?([0-9]*(\.[0-9]*)?[a-z]+)+`, or "0". */
export function parseGoDuration(text: string): number {
  let rest = text;
  let sign = 1;
  if (rest.startsWith('-') || rest.startsWith('+')) {
    sign = rest.startsWith('-') ? -1 : 1;
    rest = rest.slice(1);
  }
  if (rest === '0') return 0;
  if (rest === '') throw new VeleroDecodeError(`time: invalid duration "${text}"`);
  let total = 0;
  const term = /^(\d*)(?:\.(\d*))?([^\d.]*)/;
  while (rest !== '') {
    const m = term.exec(rest)!;
    const [whole, int, frac, unit] = [m[0], m[1]!, m[2], m[3]!];
    if (int === '' && (frac === undefined || frac === '')) throw new VeleroDecodeError(`time: invalid duration "${text}"`);
    if (unit === '') throw new VeleroDecodeError(`time: missing unit in duration "${text}"`);
    const scale = DURATION_UNITS[unit];
    if (scale === undefined) throw new VeleroDecodeError(`time: unknown unit "${unit}" in duration "${text}"`);
    total += Number(`${int || '0'}.${frac ?? ''}0`) * scale;
    rest = rest.slice(whole.length);
  }
  return sign * total;
}

function check(value: unknown, kind: Kind | Schema, where: string, dropped: string[]): unknown {
  if (value === null) return undefined; // JSON null leaves a Go pointer, slice or map at nil
  if (typeof kind === 'object') {
    if (typeof value !== 'object' || Array.isArray(value)) throw new VeleroDecodeError(`${where}: cannot unmarshal ${typeof value} into an object`);
    const out: Record<string, unknown> = {};
    for (const [field, inner] of Object.entries(value as Record<string, unknown>)) {
      const fieldKind = kind[field];
      if (fieldKind === undefined) {
        dropped.push(`${where}.${field}`);
        continue;
      }
      out[field] = check(inner, fieldKind, `${where}.${field}`, dropped);
    }
    return out;
  }
  const fail = (go: string) => new VeleroDecodeError(`${where}: cannot unmarshal ${JSON.stringify(value)} into Go value of type ${go}`);
  switch (kind) {
    case 'string':
      if (typeof value !== 'string') throw fail('string');
      return value;
    case 'bool':
      if (typeof value !== 'boolean') throw fail('bool');
      return value;
    case 'int':
      if (typeof value !== 'number' || !Number.isSafeInteger(value)) throw fail('int');
      return value;
    case 'time':
      if (typeof value !== 'string') throw fail('metav1.Time');
      return parseGoTime(value);
    case 'duration':
      if (typeof value !== 'string') throw fail('metav1.Duration');
      return parseGoDuration(value);
    case 'strings':
      if (!Array.isArray(value) || !value.every((v) => typeof v === 'string')) throw fail('[]string');
      return value;
    case 'stringMap':
      if (typeof value !== 'object' || Array.isArray(value) || !Object.values(value as object).every((v) => typeof v === 'string')) throw fail('map[string]string');
      return value;
    case 'object':
      if (typeof value !== 'object' || Array.isArray(value)) throw fail('struct');
      return value;
    case 'objects':
      if (!Array.isArray(value) || !value.every((v) => typeof v === 'object' && v !== null && !Array.isArray(v))) throw fail('[]struct');
      return value;
  }
}

export interface DecodedBackup {
  name: string;
  phase: string;
  /** milliseconds; 0 when absent */
  ttlMs: number;
  expiration: Date | undefined;
  startTimestamp: Date | undefined;
  completionTimestamp: Date | undefined;
  formatVersion: string | undefined;
  version: number | undefined;
  /** fields Velero's decoder would drop (unknown to its types, or misspelt) */
  dropped: string[];
}

/** Decodes velero-backup.json as Velero's GetBackupMetadata and backup sync would; throws what Velero would refuse. */
export function decodeVeleroBackup(text: string): DecodedBackup {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    throw new VeleroDecodeError(`not JSON: ${(error as Error).message}`);
  }
  if (typeof json !== 'object' || json === null || Array.isArray(json)) throw new VeleroDecodeError('not a JSON object');
  const raw = json as Record<string, unknown>;
  if (typeof raw.kind !== 'string' || raw.kind === '') throw new VeleroDecodeError("Object 'Kind' is missing");
  if (raw.apiVersion !== 'velero.io/v1' || raw.kind !== 'Backup') {
    throw new VeleroDecodeError(`no kind "${raw.kind}" is registered for version "${String(raw.apiVersion)}" in Velero's scheme`);
  }
  const dropped: string[] = [];
  const backup = check(raw, BACKUP, '', dropped) as {
    metadata?: { name?: string };
    spec?: { ttl?: number };
    status?: { phase?: string; expiration?: Date; startTimestamp?: Date; completionTimestamp?: Date; formatVersion?: string; version?: number };
  };
  const phase = backup.status?.phase;
  if (phase !== undefined && !BACKUP_PHASES.includes(phase)) {
    throw new VeleroDecodeError(`status.phase: Unsupported value: "${phase}": supported values: ${BACKUP_PHASES.map((p) => `"${p}"`).join(', ')}`);
  }
  const name = backup.metadata?.name;
  if (!name) throw new VeleroDecodeError('metadata.name: Required value: a synced backup is created under its name');
  const status = backup.status ?? {};
  return {
    name, phase: status.phase ?? '', ttlMs: backup.spec?.ttl ?? 0, expiration: status.expiration, startTimestamp: status.startTimestamp,
    completionTimestamp: status.completionTimestamp, formatVersion: status.formatVersion, version: status.version, dropped,
  };
}

/** gc_controller.go: deletes a backup only when its expiration is set and is not after now. */
export function garbageCollectionDeletes(backup: DecodedBackup, now: Date): boolean {
  return backup.expiration !== undefined && backup.expiration.getTime() <= now.getTime();
}

/** backup_sync_controller.go: incomplete phases are not synced into the cluster until they have expired. */
export function syncSkips(backup: DecodedBackup, now: Date): boolean {
  const incomplete = ['WaitingForPluginOperations', 'WaitingForPluginOperationsPartiallyFailed', 'Finalizing', 'FinalizingPartiallyFailed'];
  return incomplete.includes(backup.phase) && !garbageCollectionDeletes(backup, now);
}
