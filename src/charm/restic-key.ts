// A changed `encryption-key` must not orphan the restic repositories written under the key before it, nor break the
// next backup. The charm knows both keys at the moment of the change and adds the new key's password of each namespace
// to that namespace's repository, then removes every other key (src/volumes/restic/rekey.ts), before it uses the new
// key:
// - a new revision of the same secret: this unit still tracks the old revision (secret-get without flags), and
//   `--peek` reads the new one without tracking it; only once every repository opens with the new password does
//   `--refresh` move the unit to it (juju/juju apiserver/facades/agent/secretsmanager: a consumer keeps its
//   CurrentRevision until it refreshes; docs/juju.md);
// - another secret in config, or a key set where there was none, or the key unset: the unit's state keeps which
//   secret the repositories open with (its URI, or "none" for the fixed unkeyed password), never a key or a password;
//   the old secret's tracked revision is read while it is still granted.
// What happens is kept in the unit's state until it is done, so the status says it in every hook, and backup-state
// runs the same convergence first: a backup whose key the repositories do not open yet fails with that sentence.
import { createHash } from 'node:crypto';
import type { CharmRuntime } from './runtime.ts';
import { keyOfSecret } from './runtime.ts';
import type { StatusNote } from './status.ts';
import { readS3Readiness } from './s3.ts';
import { legacyResticPassword } from '../volumes/restic/password.ts';
import { describeInline } from '../errors/index.ts';
import type { S3Settings } from '../store/settings.ts';

/** The secret the repositories open with: its URI, or NO_KEY for the fixed unkeyed password. */
export const KEY_IDENTITY_STATE = 'restic-key-identity';
/** While a change is not done: {level, text} of the status note, one sentence without any secret. */
export const KEY_PENDING_STATE = 'restic-key-pending';
const NO_KEY = 'none';

export interface KeyConvergence {
  /** every repository opens with the key this unit now uses, or there is none */
  done: boolean;
  /** not done: one sentence saying which repositories and what to do */
  sentence?: string;
  /** not done, and a backup with the configured key would find repositories it cannot open */
  blocksBackup?: boolean;
}

const secretId = (uri: string) => uri.split(/[:/]/).pop() ?? uri;

function namespaces(list: string[]): string {
  return `${list.length === 1 ? 'namespace' : 'namespaces'} ${list.join(', ')}`;
}

async function setPending(charm: CharmRuntime, note: StatusNote | undefined, identity?: string): Promise<void> {
  await charm.tools.stateSet({
    [KEY_PENDING_STATE]: note ? JSON.stringify(note) : '',
    ...(identity ? { [KEY_IDENTITY_STATE]: identity } : {}),
  });
}

/**
 * Converges the repositories on the configured key. Never throws: whatever stops it becomes the sentence, kept for
 * the status until a later hook or backup finishes the change.
 */
export async function convergeResticKey(charm: CharmRuntime): Promise<KeyConvergence> {
  try {
    return await converge(charm);
  } catch (error) {
    const sentence = `The new encryption-key is not in use yet: adding it to the restic repositories failed (${describeInline(error)}); the charm tries again at the next update-status and before each backup.`;
    await charm.log('WARNING', sentence);
    await setPending(charm, { level: 'waiting', text: sentence }).catch(() => undefined);
    return { done: false, sentence, blocksBackup: true };
  }
}

async function converge(charm: CharmRuntime): Promise<KeyConvergence> {
  const config = await charm.config();
  if (!config.ok) return { done: true };
  const target = config.config['encryption-key'] ?? NO_KEY;
  const recorded = await charm.tools.stateGetKey(KEY_IDENTITY_STATE);
  if (recorded === undefined) {
    // The first hook of this unit (or of a charm from before this state): the repositories open with what is set now,
    // and the unit starts tracking that revision, so a later revision is a change it sees.
    if (target !== NO_KEY) await charm.tools.secretGet(target).catch(() => undefined);
    await setPending(charm, undefined, target);
    return { done: true };
  }
  if (recorded === target && target === NO_KEY) return { done: true };
  const sameSecret = recorded === target;

  // The new key: the newest revision of the configured secret, read without tracking it. One that cannot be read is
  // not a change to make: the actions that need the key say so themselves.
  let newKey: string | undefined;
  try {
    newKey = target === NO_KEY ? undefined : keyOfSecret(await charm.tools.secretGet(target, { peek: true }));
  } catch (error) {
    const sentence = `The encryption-key cannot be read: ${describeInline(error)}.`;
    await charm.log('WARNING', sentence);
    return { done: false, sentence, blocksBackup: true };
  }
  // The old key: the revision this unit tracks of the secret the repositories open with.
  let oldKey: string | undefined;
  let oldKnown = true;
  if (recorded !== NO_KEY) {
    try {
      oldKey = keyOfSecret(await charm.tools.secretGet(recorded));
    } catch (error) {
      await charm.log('WARNING', `The previous encryption-key secret ${recorded} cannot be read: ${describeInline(error)}`);
      oldKnown = false;
    }
  }
  // the same key gives the same passwords (the shared v1 one stands for all of them)
  if (oldKnown && legacyResticPassword(oldKey) === legacyResticPassword(newKey)) return finish(charm, target, newKey, async () => undefined);
  const blocksBackup = !sameSecret || !oldKnown;

  const s3 = await readS3Readiness(charm);
  if (s3.state !== 'ready') {
    const sentence = 'The new encryption-key waits for S3 to be ready before it is added to the restic repositories.';
    await setPending(charm, { level: 'waiting', text: sentence });
    return { done: false, sentence, blocksBackup };
  }
  const [{ openObjectStore }, { listResticRepositories }] = await Promise.all([import('../store/open.ts'), import('../volumes/restic/repositories.ts')]);
  const repositories = await listResticRepositories(openObjectStore(s3.settings));
  const add = (from: string | undefined, to: string | undefined, fromKnown: boolean) => addKey(charm, s3.settings, repositories, { from, to, fromKnown, recorded, target, blocksBackup });
  const problem = await add(oldKey, newKey, oldKnown);
  if (problem) return problem;
  // a revision added meanwhile is added from the one just added, which this unit still has in memory
  return finish(charm, target, newKey, (tracked) => add(newKey, tracked, true));
}

interface KeyChange {
  from: string | undefined;
  to: string | undefined;
  fromKnown: boolean;
  recorded: string;
  target: string;
  blocksBackup: boolean;
}

/**
 * Gives every repository its namespace's password of `to`, authenticated by `from`'s (the namespace's, or the shared v1
 * one), and removes every other key; undefined when all open with `to`'s now, and with nothing else.
 */
async function addKey(charm: CharmRuntime, settings: S3Settings, repositories: string[], change: KeyChange): Promise<KeyConvergence | undefined> {
  if (repositories.length === 0) return undefined;
  const [{ rekeyResticRepositories, repositoryKeys }, { volumeKubeFromClient }, { moverS3Settings }, { resticEngine }, { moverConfig }] = await Promise.all([
    import('../volumes/restic/rekey.ts'), import('../volumes/kube-client-port.ts'), import('../volumes/settings.ts'), import('../volumes/engines.ts'),
    import('./backup-steps.ts'),
  ]);
  // Without the old key the Job can only move a repository from the new key's shared v1 password: one that already
  // opens with its namespace's password is fine.
  const keys = repositoryKeys(repositories, change.to, change.fromKnown ? [change.from] : []);
  for (const key of keys) for (const password of [key.password, ...key.previous]) charm.redactor.add(password);
  const config = await charm.config();
  const mover = config.ok ? config.config : undefined;
  const outcome = await rekeyResticRepositories(volumeKubeFromClient(await charm.kube()), {
    namespace: charm.context.model.name,
    repositories: keys,
    s3: moverS3Settings(settings),
    // one name per unit and change (never derived from a key): a rerun adopts the Job a killed hook left running
    runId: createHash('sha256').update(`${charm.context.unitName} ${change.recorded} ${change.target}`).digest('hex'),
    // the restic engine's image under this config (volume-mover-image names it only when restic is the configured engine)
    ...(mover ? { image: resticEngine.imageFor(moverConfig(mover)) } : {}),
    ...(mover ? { startTimeoutSeconds: mover['volume-mover-start-timeout'] } : {}),
  });
  if (outcome.added.length > 0) await charm.log('INFO', `Added the new encryption-key's password to the restic repositories of ${namespaces(outcome.added)}.`);
  if (outcome.removed.length > 0) await charm.log('INFO', `Removed every key but the new encryption-key's from the restic repositories of ${namespaces(outcome.removed)}.`);
  const where = `s3://${settings.bucket}/${[settings.path, 'restic'].filter(Boolean).join('/')}/<namespace>`;
  if (outcome.locked.length > 0) {
    const why = change.fromKnown
      ? 'open with neither the previous nor the new encryption-key'
      : `were written under the previous encryption-key (secret ${secretId(change.recorded)}), which this unit can no longer read`;
    const remedy = change.fromKnown
      ? 'set encryption-key to a secret holding the key they were written with, so the charm can add the new one'
      : 'grant that secret to this application again, or set encryption-key back to a secret holding the key they were written with, so the charm can add the new one';
    const sentence = `The restic repositories of ${namespaces(outcome.locked)} ${why}, so their older volume snapshots cannot be read and the next restic backup of ${outcome.locked.length === 1 ? 'it' : 'them'} fails: ${remedy}; or move ${where} away to start new repositories (the volume data of the older backups is then lost).`;
    await charm.log('WARNING', sentence);
    // the status is one short line (src/charm/status.ts cuts it at 240 characters); the backup's failure is whole
    const status = change.fromKnown
      ? `restic repositories of ${namespaces(outcome.locked)} open with neither the previous nor the new encryption-key: set encryption-key to the key they were written with`
      : `restic repositories of ${namespaces(outcome.locked)} do not open with the new encryption-key and the previous secret ${secretId(change.recorded)} cannot be read: grant it again or set encryption-key back to it`;
    await setPending(charm, { level: 'blocked', text: status });
    return { done: false, sentence, blocksBackup: change.blocksBackup };
  }
  if (outcome.failed.length > 0) {
    const sentence = `The new encryption-key is not in use yet: adding it to the restic repositories of ${namespaces(outcome.failed)} failed (the restic key Job's log says why); the charm tries again at the next update-status and before each backup.`;
    await charm.log('WARNING', sentence);
    await setPending(charm, { level: 'waiting', text: sentence });
    return { done: false, sentence, blocksBackup: change.blocksBackup };
  }
  return undefined;
}

/**
 * Every repository opens with the new key: the unit tracks the newest revision from now on. A revision added between
 * the peek and the refresh is added to the repositories too (from the key just added) before the change is done.
 */
async function finish(
  charm: CharmRuntime, target: string, newKey: string | undefined, addNewer: (tracked: string) => Promise<KeyConvergence | undefined>,
): Promise<KeyConvergence> {
  let added = newKey;
  for (let round = 0; target !== NO_KEY && round < 3; round++) {
    const tracked = keyOfSecret(await charm.tools.secretGet(target, { refresh: true }));
    if (tracked === added) break;
    const problem = await addNewer(tracked);
    if (problem) return { ...problem, blocksBackup: true };
    added = tracked;
  }
  await setPending(charm, undefined, target);
  return { done: true };
}

/** The status note of a change not done yet (read from the unit's state: cheap, in every hook). */
export async function resticKeyNotes(charm: CharmRuntime): Promise<StatusNote[]> {
  try {
    const raw = await charm.tools.stateGetKey(KEY_PENDING_STATE);
    if (!raw) return [];
    const note = JSON.parse(raw) as StatusNote;
    return note && typeof note.text === 'string' && ['blocked', 'waiting', 'active'].includes(note.level) ? [note] : [];
  } catch {
    return [];
  }
}

/** Whether a key change was left pending (update-status then tries it again). */
export async function resticKeyChangePending(charm: CharmRuntime): Promise<boolean> {
  return Boolean(await charm.tools.stateGetKey(KEY_PENDING_STATE).catch(() => undefined));
}
