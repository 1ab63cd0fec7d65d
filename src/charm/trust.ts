// The trust an action reads a backup with (src/archive/authenticate.ts Trust): the charm's encryption-key secret and
// the action's allow-unauthenticated param, named the way a Juju user gives it.
import type { Trust } from '../archive/authenticate.ts';

export function actionTrust(encryptionKey: string | undefined, allowUnauthenticated: boolean | undefined): Trust {
  return { encryptionKey, allowUnauthenticated: allowUnauthenticated === true, allowHint: 'allow-unauthenticated=true' };
}
