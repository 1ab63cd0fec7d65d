// The charm's config (config.yaml), validated once per dispatch; a bad value becomes one sentence for the status.
import { z } from 'zod';
import { DEFAULT_MOVER_RESOURCES, parseMoverResources } from '../volumes/resources.ts';
import { parseSchedule } from '../schedule/cron.ts';
import { ENGINE_NAMES, RCLONE_IMAGE } from '../volumes/engine.ts';

const commaList = z.string().transform((text) => text.split(',').map((part) => part.trim()).filter(Boolean));
const positiveInt = (max: number) => z.number().int('must be a whole number').min(1, 'must be at least 1').max(max, `must be at most ${max}`);

/** `30m`, `24h`, `7d`, `90s` → seconds. */
export function parseDuration(text: string): number | undefined {
  const match = /^\s*(\d+)\s*([smhdw])\s*$/.exec(text);
  if (!match) return undefined;
  const unit = { s: 1, m: 60, h: 3600, d: 86400, w: 604800 }[match[2] as 's' | 'm' | 'h' | 'd' | 'w'];
  return Number(match[1]) * unit;
}

export const ConfigSchema = z.object({
  's3-bucket': z.string().default(''),
  's3-path': z.string().default('kubeflow-upgrader'),
  'protect-crds': z.boolean().default(true),
  'protected-crd-groups': commaList.default(['kubeflow.org', 'tensorboard.kubeflow.org', 'serving.kserve.io']),
  'protect-profiles': z.boolean().default(false),
  'profile-namespace-selector': z.string().default('app.kubernetes.io/part-of=kubeflow-profile'),
  'include-resources': commaList.default([]),
  'exclude-resources': commaList.default([]),
  'encryption-key': z
    .string()
    .optional()
    .transform((uri) => (uri ? uri : undefined))
    .refine((uri) => uri === undefined || /^secret:/.test(uri), 'must be a Juju secret URI (secret:...)'),
  'max-backup-age': z
    .string()
    .default('24h')
    .transform((text, ctx) => {
      const seconds = parseDuration(text);
      if (seconds === undefined) {
        ctx.addIssue({ code: 'custom', message: 'must be a duration like 30m, 24h or 7d' });
        return z.NEVER;
      }
      return seconds;
    }),
  // parsed apart (src/charm/immutability.ts): a bad value stops the backups and prunes it concerns, nothing else
  'backup-immutability': z.string().default(''),
  'backup-retention': z.number().int('must be a whole number').min(0, 'must be 0 (keep all) or more').max(100_000, 'must be at most 100000').default(7),
  // the workload's service backs up at each slot; undefined: no schedule
  'backup-schedule': z
    .string()
    .default('')
    .transform((text, ctx) => {
      const schedule = parseSchedule(text);
      if (schedule && !schedule.ok) {
        ctx.addIssue({ code: 'custom', message: schedule.problem });
        return z.NEVER;
      }
      return schedule?.expression;
    }),
  'restore-wait-timeout': positiveInt(86_400).default(300),
  'volume-mover-engine': z.enum(ENGINE_NAMES).default('restic'),
  'volume-restore-by': z.enum(['handover', 'in-namespace']).default('handover'),
  // '' is the configured engine's pinned image (src/volumes/engine.ts imageOf)
  'volume-mover-image': z.string().trim().default(''),
  'volume-mover-concurrency': positiveInt(64).default(2),
  // '' is each CSI driver's default VolumeSnapshotClass (src/volumes/snapshot/class.ts)
  'volume-snapshot-class': z.string().trim().default(''),
  'volume-mover-start-timeout': positiveInt(86_400).default(300),
  'volume-mover-resources': z.string().default(DEFAULT_MOVER_RESOURCES).superRefine((text, ctx) => {
    try {
      parseMoverResources(text);
    } catch (error) {
      ctx.addIssue({ code: 'custom', message: `must be a list like ${DEFAULT_MOVER_RESOURCES}: ${(error as Error).message}` });
    }
  }),
  'api-concurrency': positiveInt(256).default(8),
  'kfp-db': z.string().regex(/^[A-Za-z0-9_]{1,64}$/, 'must be a MySQL database name').default('mlpipeline'),
  'katib-db': z.string().regex(/^[A-Za-z0-9_]{1,64}$/, 'must be a MySQL database name').default('katib'),
  // Each database copy is one Pod of two official images sharing an emptyDir: MySQL dumps or loads, rclone moves.
  'control-plane-mysql-image': z.string().trim().min(1, 'must name an image with mysqldump and mysql').default('docker.io/library/mysql:8.4'),
  'control-plane-rclone-image': z.string().trim().min(1, 'must name an image with rclone').default(RCLONE_IMAGE),
  // empty: the restore gateway's pinned node image (src/volumes/engine.ts NODE_GATEWAY_IMAGE)
  'restore-gateway-image': z.string().trim().default(''),
  'control-plane-sqlite-image': z.string().trim().min(1, "must name an image with Python's sqlite3 module").default('docker.io/library/python:3.12-slim'),
  'object-storage-buckets': commaList
    .default(['mlpipeline'])
    .refine((buckets) => buckets.every((b) => /^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/.test(b)), 'must be a comma-separated list of bucket names'),
});

/** `max-backup-age` is in seconds; comma lists are arrays. */
export type CharmConfig = z.output<typeof ConfigSchema>;

export type ConfigResult = { ok: true; config: CharmConfig } | { ok: false; problem: string };

export function parseConfig(raw: Record<string, unknown>): ConfigResult {
  const parsed = ConfigSchema.safeParse(raw);
  if (parsed.success) return { ok: true, config: parsed.data };
  const issue = parsed.error.issues[0];
  const option = String(issue?.path[0] ?? 'config');
  const message = issue?.code === 'invalid_type' ? `must be a ${issue.expected}` : (issue?.message ?? 'is invalid');
  return { ok: false, problem: `config option ${option} ${message}` };
}
