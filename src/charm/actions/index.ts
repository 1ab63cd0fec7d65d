// Which module runs which action. Modules load on demand: a hook never pays for an engine it does not use.
import type { ActionContext } from '../action-context.ts';
import type { ActionName } from './params.ts';

export interface ActionModule<A extends ActionName> {
  run(ctx: ActionContext<A>): Promise<void>;
}

export const actionModules: { [A in ActionName]: () => Promise<ActionModule<A>> } = {
  'backup-state': () => import('./backup-state.ts'),
  'restore-state': () => import('./restore-state.ts'),
  'snapshot-profiles': () => import('./snapshot-profiles.ts'),
  'list-backups': () => import('./list-backups.ts'),
  'verify-backup': () => import('./verify-backup.ts'),
  'pre-upgrade-check': () => import('./pre-upgrade-check.ts'),
  'migrate-stored-versions': () => import('./migrate-stored-versions.ts'),
  'prune-backups': () => import('./prune-backups.ts'),
  'recover-backups': () => import('./recover-backups.ts'),
};
