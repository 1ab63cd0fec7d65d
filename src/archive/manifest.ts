// kubeflow-upgrader.json: our manifest beside the Velero files. The zod schema is the type, so what we write
// and what we accept on read can never drift apart.
import { z } from 'zod';
import { ChecksumIndex } from './checksum-index.ts';
import { splitEntries } from './manifest-entries.ts';

export const MANIFEST_FORMAT_VERSION = 1;
export const MANIFEST_FILE = 'kubeflow-upgrader.json';

const SHA256_HEX = /^[0-9a-f]{64}$/;
const sha256Hex = z.string().regex(SHA256_HEX, 'must be a sha256 hex digest');

export const ScopeSchema = z.object({
  /** which action made the backup: backup-state, snapshot-profiles, … */
  action: z.string(),
  namespaces: z.array(z.string()).default([]),
  profiles: z.array(z.string()).default([]),
  includeVolumes: z.boolean().default(false),
  includeControlPlane: z.boolean().default(false),
});

export const SourceSchema = z.object({
  cluster: z.string().optional(),
  model: z.string().optional(),
  kubernetesVersion: z.string().optional(),
});

export const EncryptionSchema = z.object({
  algorithm: z.literal('aes-256-gcm'),
  kdf: z.literal('scrypt'),
  keyId: z.string(),
  /**
   * what salted the key id: the location the backup was written to (seal.ts keyIdOf); absent on older backups, whose
   * key id has the fixed salt every installation shared
   */
  keyIdSalt: z.string().optional(),
  salt: z.string(),
  /** absent: sealed before values were bound to their backup, Secret and key (seal.ts), reported as such */
  binding: z.string().optional(),
  sealedSecrets: z.number().int().nonnegative(),
});

/**
 * A snapshot of a restic repository, pinned by its full id under the manifest's HMAC: `repository` is the repository's
 * key prefix relative to the bucket. restic authenticates every blob of it, so a bucket writer can neither substitute
 * another snapshot nor change what one holds.
 */
export const ResticPinSchema = z.object({ repository: z.string(), snapshot: z.string().regex(/^[0-9a-f]{64}$/) });

export const VolumeEntrySchema = z.object({
  namespace: z.string(),
  pvc: z.string(),
  /** folder key relative to the location prefix */
  key: z.string(),
  files: z.number().int().nonnegative(),
  bytes: z.number().int().nonnegative(),
  sha256: sha256Hex.optional(),
  /** the claim was never bound: it had no volume, so there is no data and the restore creates it without a mover */
  unbound: z.literal(true).optional(),
  /** of `bytes`, what the mover sent to the bucket; absent in backups made before incremental copies */
  bytesUploaded: z.number().int().nonnegative().optional(),
  /** of `bytes`, what the bucket copied from `reusedFrom`'s copy of the same files (equal size and MD5) */
  bytesReused: z.number().int().nonnegative().optional(),
  filesReused: z.number().int().nonnegative().optional(),
  /** the earlier backup compared against; informative only: this backup's files are whole objects of its own */
  reusedFrom: z.string().optional(),
  /**
   * Written by the restic mover: the PVC's data is this snapshot of its namespace's repository (key prefix relative to
   * the bucket), not files under `key`. The id is pinned here, under the manifest's HMAC, so a bucket writer cannot
   * substitute another snapshot; restic authenticates every blob of it.
   */
  restic: ResticPinSchema.optional(),
  /**
   * How the data was read (absent in backups made before snapshots were used): from a CSI snapshot, at one point in
   * time (`takenAt`, the provider's creationTime, and the VolumeSnapshotClass), or live, while the PVC's users could
   * write (`reason`: why no snapshot was taken).
   */
  copy: z.object({
    from: z.enum(['snapshot', 'live']),
    pointInTime: z.boolean(),
    takenAt: z.string().optional(),
    volumeSnapshotClass: z.string().optional(),
    reason: z.string().optional(),
  }).optional(),
});

export const ApplicationSchema = z.object({
  name: z.string(),
  charm: z.string().optional(),
  channel: z.string().optional(),
  revision: z.number().int().optional(),
  images: z.array(z.string()).default([]),
});

export const CrdSnapshotSchema = z.object({
  name: z.string(),
  group: z.string(),
  versions: z.array(z.object({ name: z.string(), served: z.boolean(), storage: z.boolean() })),
  storedVersions: z.array(z.string()),
});

/**
 * One control-plane copy as the backup records it (src/controlplane writes it; the restore loads from it). Without
 * `restic`, the copy is plain files: a gzipped dump at `key`, a mirror under `keyPrefix`, each with the sha256 of those
 * files. With `restic` (written with `encryption-key`), it is that snapshot of the control-plane repository
 * (`<path>/restic/_control-plane`), which `key` and `keyPrefix` then name: a database's one file `/<database>.sql`
 * (ML Metadata's `/mlmd.db`) with `sha256` of its uncompressed bytes, or a bucket's objects at the snapshot's root
 * with `listingSha256` as a mirror's; `rclone` is then restic's version.
 */
export const ControlPlaneEntrySchema = z.union([
  z.object({
    part: z.enum(['kfp-db', 'katib-db', 'mlmd']), database: z.string(), key: z.string(), bytes: z.number(), sha256: z.string(), tool: z.string(), rclone: z.string(),
    restic: ResticPinSchema.optional(),
  }),
  z.object({
    part: z.literal('minio'), bucket: z.string(), keyPrefix: z.string(), objects: z.number(), bytes: z.number(), listingSha256: z.string(), tool: z.string(),
    restic: ResticPinSchema.optional(),
  }),
]);

/** The control-plane step's outcome: what it copied, what it could not cover and why, and the full entries. */
export const ControlPlaneRecordSchema = z.object({
  copied: z.array(z.object({ name: z.string(), key: z.string(), bytes: z.number(), sha256: z.string().optional() })).default([]),
  /** one sentence per part not covered, e.g. "control plane not covered: relate kfp-db …" */
  notCovered: z.array(z.string()).default([]),
  /** the sentences among notCovered for related databases found without tables */
  empty: z.array(z.string()).default([]),
  entries: z.array(ControlPlaneEntrySchema).default([]),
});

/**
 * The typed sections of `extras`. Each one that is malformed (an older writer, a foreign tool) reads as absent
 * rather than refusing the whole backup: they describe the backup, the items' checksums protect it.
 */
const ExtrasSchema = z.object({
  controlPlane: ControlPlaneRecordSchema.optional().catch(undefined),
  /** objects left out of the backup, counted by the class of their reason */
  skipped: z.record(z.string(), z.number()).optional().catch(undefined),
  /** namespace → names of the PodDefaults controllers made there (src/kubeflow/late-pod-defaults.ts) */
  controllerPodDefaults: z.record(z.string(), z.array(z.string())).optional().catch(undefined),
  /** namespaces that look like profile namespaces but were left out, with the reason */
  leftOutNamespaces: z.array(z.object({ namespace: z.string(), reason: z.string() })).optional().catch(undefined),
  /** objects of the backed-up namespaces left out that no controller makes, named with the reason */
  leftOutObjects: z.array(z.object({ object: z.string(), reason: z.string() })).optional().catch(undefined),
}).catchall(z.unknown());

export const ManifestSchema = z.object({
  formatVersion: z.literal(MANIFEST_FORMAT_VERSION),
  veleroFormatVersion: z.string(),
  tool: z.object({ name: z.string(), version: z.string() }),
  backupId: z.string(),
  description: z.string().optional(),
  created: z.iso.datetime(),
  completed: z.iso.datetime(),
  source: SourceSchema.default({}),
  scope: ScopeSchema,
  /** items per `<resource>[.<group>]` (each item counted once, not once per path) */
  counts: z.record(z.string(), z.number().int().nonnegative()),
  objects: z.number().int().nonnegative(),
  /** gzipped tarball size */
  bytes: z.number().int().nonnegative(),
  checksums: z.object({
    algorithm: z.literal('sha256'),
    tarball: sha256Hex,
    /** every tar entry path (both copies of each item, and metadata/version) → sha256 of its bytes */
    entries: z.record(z.string(), sha256Hex),
    /** the other Velero files by key name relative to the backup folder */
    files: z.record(z.string(), sha256Hex).default({}),
  }),
  /** null: Secrets are stored in clear */
  encryption: EncryptionSchema.nullable(),
  volumes: z.array(VolumeEntrySchema).default([]),
  inventory: z.object({ applications: z.array(ApplicationSchema).default([]) }).default({ applications: [] }),
  crds: z.array(CrdSnapshotSchema).default([]),
  warnings: z.number().int().nonnegative().default(0),
  errors: z.number().int().nonnegative().default(0),
  /** what the engines add beside the items: typed sections, and any other key kept as it is */
  extras: ExtrasSchema.default({}),
});

/** The manifest as its JSON holds it, checksums.entries included. */
export type ManifestDocument = z.infer<typeof ManifestSchema>;
/** The manifest's checksums but the entries, which are held apart in a ChecksumIndex (checksum-index.ts). */
export type ManifestChecksums = Omit<ManifestDocument['checksums'], 'entries'>;
/** The manifest as the program holds it: typed, and without the 2×N-member entries object. */
export type Manifest = Omit<ManifestDocument, 'checksums'> & { checksums: ManifestChecksums };
export type ManifestExtras = z.infer<typeof ExtrasSchema>;
export type ControlPlaneEntry = z.infer<typeof ControlPlaneEntrySchema>;
export type ControlPlaneRecord = z.infer<typeof ControlPlaneRecordSchema>;
/** what a control-plane step hands the backup engine: the record, its defaults still to fill */
export type ControlPlaneOutcome = z.input<typeof ControlPlaneRecordSchema>;
export type BackupScope = z.input<typeof ScopeSchema>;
export type BackupSource = z.infer<typeof SourceSchema>;
export type VolumeEntry = z.infer<typeof VolumeEntrySchema>;
export type ApplicationEntry = z.input<typeof ApplicationSchema>;
export type CrdSnapshot = z.infer<typeof CrdSnapshotSchema>;

export type ManifestCheck = { ok: true; manifest: Manifest; checksums: ChecksumIndex } | { ok: false; reason: string };

/** Parses manifest bytes; never throws: a bad manifest is a finding, not a crash. */
export function parseManifest(bytes: Buffer | string): ManifestCheck {
  // from bytes, the entries go straight into the index when the document allows it (manifest-entries.ts)
  const split = typeof bytes === 'string' ? undefined : splitEntries(bytes);
  let json: unknown;
  try {
    json = JSON.parse(split?.rest ?? (typeof bytes === 'string' ? bytes : bytes.toString('utf8')));
  } catch {
    return { ok: false, reason: 'it is not valid JSON' };
  }
  if (split) return checkDocument(json, split.checksums);
  // The entries (two paths per object) are checked here and packed into the index: through zod they would cost a copy
  // of the whole record and a regex call per entry, and that copy would be a restore's memory peak.
  const checksums = (json as { checksums?: { entries?: unknown } } | null)?.checksums;
  const entries = checksums && typeof checksums === 'object' ? checksums.entries : undefined;
  const plainEntries = entries !== null && typeof entries === 'object' && !Array.isArray(entries);
  let index = ChecksumIndex.empty;
  if (plainEntries) {
    for (const [path, digest] of Object.entries(entries)) {
      if (typeof digest !== 'string' || !SHA256_HEX.test(digest)) return { ok: false, reason: `field checksums.entries.${path} must be a sha256 hex digest` };
    }
    index = ChecksumIndex.fromRecord(entries as Record<string, string>);
    checksums!.entries = {};
  }
  return checkDocument(json, index);
}

/** the document, its entries already taken out into `index`, checked against the schema */
function checkDocument(json: unknown, index: ChecksumIndex): ManifestCheck {
  const parsed = ManifestSchema.safeParse(json);
  if (!parsed.success) {
    const first = parsed.error.issues[0];
    return { ok: false, reason: `field ${first?.path.join('.') || '(root)'} ${first?.message ?? 'is invalid'}` };
  }
  return { ok: true, manifest: withoutEntries(parsed.data), checksums: index };
}

/** The document's fields as the program holds them, in the same order (the writer streams them in this order). */
export function withoutEntries(document: ManifestDocument): Manifest {
  const { entries: _entries, ...checksums } = document.checksums;
  return { ...document, checksums };
}
