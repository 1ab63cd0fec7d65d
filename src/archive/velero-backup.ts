// velero-backup.json: the Velero Backup object that marks a backup as complete (Velero's sync and our list both
// treat a folder without it as not existing), plus the tolerant reader for markers written by Velero itself.
import { z } from 'zod';
import { VELERO_FORMAT_VERSION } from './paths.ts';

export const MARKER_FILE = 'velero-backup.json';
/** The manifest's own sha256, recorded in the marker (written after it), so a changed manifest is found. */
export const MANIFEST_SHA256_ANNOTATION = 'kubeflow-upgrader.io/manifest-sha256';

export interface MarkerInput {
  id: string;
  started: Date;
  completed: Date;
  /** Go duration string, Velero's default is 720h */
  ttl: string;
  expiration: Date;
  namespaces: string[];
  items: number;
  errors: number;
  warnings: number;
  storageLocation: string;
  toolVersion: string;
  manifestSha256?: string;
}

/** The Backup object as Velero 1.x writes it for a completed backup. */
export function veleroBackupObject(input: MarkerInput) {
  return {
    apiVersion: 'velero.io/v1',
    kind: 'Backup',
    metadata: {
      name: input.id,
      namespace: 'velero',
      labels: { 'velero.io/storage-location': input.storageLocation },
      annotations: {
        'kubeflow-upgrader.io/tool-version': input.toolVersion,
        ...(input.manifestSha256 ? { [MANIFEST_SHA256_ANNOTATION]: input.manifestSha256 } : {}),
      },
      creationTimestamp: input.started.toISOString(),
    },
    spec: {
      includedNamespaces: input.namespaces.length ? input.namespaces : ['*'],
      storageLocation: input.storageLocation,
      ttl: input.ttl,
      snapshotVolumes: false,
      defaultVolumesToFsBackup: false,
    },
    status: {
      version: 1,
      formatVersion: VELERO_FORMAT_VERSION,
      phase: input.errors > 0 ? 'PartiallyFailed' : 'Completed',
      startTimestamp: input.started.toISOString(),
      completionTimestamp: input.completed.toISOString(),
      expiration: input.expiration.toISOString(),
      progress: { totalItems: input.items, itemsBackedUp: input.items },
      errors: input.errors,
      warnings: input.warnings,
    },
  };
}

/** Only what we need from any marker, ours or Velero's; everything else is passed through. */
export const MarkerSchema = z.looseObject({
  kind: z.literal('Backup'),
  metadata: z.looseObject({ name: z.string() }),
  status: z
    .looseObject({
      phase: z.string().optional(),
      formatVersion: z.string().optional(),
      startTimestamp: z.string().optional(),
      completionTimestamp: z.string().optional(),
      expiration: z.string().optional(),
      progress: z.looseObject({ itemsBackedUp: z.number().optional() }).optional(),
    })
    .default({}),
});
export type Marker = z.infer<typeof MarkerSchema>;

/** Parses a Go duration like `720h0m0s` or `24h` into milliseconds; undefined when it is not one. */
export function parseGoDuration(text: string): number | undefined {
  const units: Record<string, number> = { h: 3_600_000, m: 60_000, s: 1000, ms: 1 };
  const re = /(\d+(?:\.\d+)?)(ms|h|m|s)/gy;
  let total = 0;
  let matched = 0;
  for (const m of text.matchAll(re)) {
    total += Number(m[1]) * units[m[2]!]!;
    matched += m[0].length;
  }
  return matched === text.length && matched > 0 ? total : undefined;
}
