// The params of every action in actions.yaml as zod schemas: the one place their types come from.
// Juju validates against actions.yaml and fills its defaults; these schemas repeat the defaults so a handler is typed
// and a test can prove both agree.
import { z } from 'zod';
import { isSafeBackupName } from '../../store/layout.ts';
import { parseReadData, READ_DATA_FORMS } from '../../volumes/restic/read-data.ts';

/** "a, b,,c" → ['a', 'b', 'c']; each entry must be a Kubernetes name. */
const nameList = z
  .string()
  .default('')
  .transform((text) => text.split(',').map((part) => part.trim()).filter(Boolean))
  .refine((names) => names.every((name) => /^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/.test(name) && name.length <= 253), 'must be a comma-separated list of Kubernetes names');

const backupId = z
  .string()
  .trim()
  .min(1, 'is required')
  // any backup name Velero could have given (a Kubernetes name, dots included), not only ours
  .refine((id) => id === 'latest' || isSafeBackupName(id), 'must be a backup id from list-backups, or "latest"');

export const ActionParams = {
  'backup-state': z.strictObject({
    namespaces: nameList,
    'include-volumes': z.boolean().default(true),
    'include-control-plane': z.boolean().default(true),
    description: z.string().max(1024).default(''),
    wait: z.boolean().default(true),
  }),
  'restore-state': z.strictObject({
    'backup-id': backupId,
    profiles: nameList,
    namespaces: nameList,
    'conflict-policy': z.enum(['skip', 'update', 'fail']).default('skip'),
    'dry-run': z.boolean().default(false),
    'include-volumes': z.boolean().default(true),
    'include-control-plane': z.boolean().default(false),
    'skip-refused': z.boolean().default(false),
    'skip-unserved': z.boolean().default(false),
    'allow-unauthenticated': z.boolean().default(false),
    'storage-class-map': z.string().max(4096).default(''),
  }),
  'snapshot-profiles': z.strictObject({ profiles: nameList }),
  'list-backups': z.strictObject({ limit: z.number().int().min(1).max(1000).default(20) }),
  'verify-backup': z.strictObject({
    'backup-id': backupId,
    'allow-unauthenticated': z.boolean().default(false),
    'read-data': z.string().trim().default('none').refine((value) => parseReadData(value) !== undefined, `must be ${READ_DATA_FORMS}`),
  }),
  'pre-upgrade-check': z.strictObject({}),
  'migrate-stored-versions': z.strictObject({
    crd: z
      .string()
      .trim()
      .min(1)
      .default('all')
      .refine((crd) => crd === 'all' || /^[a-z0-9-]+\.[a-z0-9.-]+$/.test(crd), 'must be a CRD name like notebooks.kubeflow.org, or "all"'),
  }),
  'prune-backups': z.strictObject({
    'dry-run': z.boolean().default(false),
    'delete-unauthenticated': z.boolean().default(false),
    'remove-foreign-locks': z.boolean().default(false),
  }),
  'recover-backups': z.strictObject({}),
} as const;

export type ActionName = keyof typeof ActionParams;
export type ParamsOf<A extends ActionName> = z.output<(typeof ActionParams)[A]>;

export function isActionName(name: string): name is ActionName {
  return Object.hasOwn(ActionParams, name);
}

/** Params, or one sentence naming the first bad one. */
export function parseParams<A extends ActionName>(action: A, raw: Record<string, unknown>): { ok: true; params: ParamsOf<A> } | { ok: false; problem: string } {
  const parsed = ActionParams[action].safeParse(raw);
  if (parsed.success) return { ok: true, params: parsed.data as ParamsOf<A> };
  const issue = parsed.error.issues[0];
  if (issue?.code === 'unrecognized_keys') return { ok: false, problem: `${action} has no parameter ${issue.keys.map((k) => `"${k}"`).join(', ')}.` };
  const name = String(issue?.path[0] ?? 'params');
  return { ok: false, problem: `Parameter "${name}" of ${action} ${issue?.message ?? 'is invalid'}.` };
}
