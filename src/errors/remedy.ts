// Facts with a remedy: an engine says what happened and names the setting behind it or the step that fixes it, never
// in the words of one edge. The charm (src/charm/remedy-wording.ts) and the CLI (src/cli/remedy-wording.ts) each word
// them where their user acts: an action param, a config option or an action for the charm; a flag or a command for
// the CLI. An engine is handed its edge's Wording in the request and sets the phrases inside its own sentence; without
// one it speaks neutrally. The same pattern as the store's bucket problems (src/store/bucket-problem.ts).

/** A setting or a command named in a fact: the choice that explains it, or the thing the user would change. */
export type Term =
  /** volume data was not asked for */
  | { term: 'volumes-off' }
  /** control-plane data was not asked for, or this edge copies none */
  | { term: 'control-plane-off' }
  /** how long a restore waits for controllers */
  | { term: 'wait-timeout'; seconds: number }
  /** how old the newest backup may be before an upgrade */
  | { term: 'max-backup-age'; age: string }
  /** the setting that maps the storage classes of restored PVCs */
  | { term: 'storage-class-map' }
  /** the key that seals Secrets and signs manifests */
  | { term: 'encryption-key' }
  /** the restore, as the user starts it */
  | { term: 'restore' }
  /** the CRD guard was turned off */
  | { term: 'guard-off' }
  /** how much of the restic repositories' data verify reads (none, full, 10%, 1/5, 500M) */
  | { term: 'read-data'; value: string };

/** What the user can do about a fact: an imperative phrase. */
export type Remedy =
  /** wait longer for controllers */
  | { fix: 'raise-wait-timeout' }
  /** make a new backup */
  | { fix: 'run-backup' }
  /** turn the CRD guard on and wait until it is active */
  | { fix: 'turn-guard-on' }
  /** give the encryption key */
  | { fix: 'set-encryption-key' }
  /** accept a backup without an HMAC though a key is set */
  | { fix: 'allow-unauthenticated' }
  /** map a storage class of the backup to one of this cluster */
  | { fix: 'map-storage-class'; from: string }
  /** move a CRD's stored objects to its storage version before its charm is refreshed */
  | { fix: 'migrate-stored-versions' }
  /** run the verify again, e.g. once a lock is gone */
  | { fix: 'verify-again' }
  /** run the prune again, e.g. once a backup has finished */
  | { fix: 'prune-again' }
  /** have the prune remove restic locks that restic would not write (they do not decrypt, or are dated ahead) */
  | { fix: 'remove-foreign-locks' }
  /** have the prune delete complete folders the encryption key does not authenticate */
  | { fix: 'delete-unauthenticated' }
  /** make the retained versions someone hid or wrote over current again (backup-immutability) */
  | { fix: 'recover-retained' };

/** How an edge words terms and remedies: one short phrase each, set inside the engine's sentence. */
export interface Wording {
  term(term: Term): string;
  remedy(remedy: Remedy): string;
}

/** The words of no edge in particular: what an engine says when it was given none (tests, benches). */
export const neutralWording: Wording = {
  term(term) {
    switch (term.term) {
      case 'volumes-off':
        return 'volumes left out';
      case 'control-plane-off':
        return 'control plane left out';
      case 'wait-timeout':
        return `the wait timeout (${term.seconds} s)`;
      case 'max-backup-age':
        return `the maximum backup age (${term.age})`;
      case 'storage-class-map':
        return 'the storage class map';
      case 'encryption-key':
        return 'encryption key';
      case 'restore':
        return 'a restore';
      case 'guard-off':
        return 'turned off';
      case 'read-data':
        return `a read of the data (${term.value})`;
    }
  },
  remedy(remedy) {
    switch (remedy.fix) {
      case 'raise-wait-timeout':
        return 'raise the wait timeout';
      case 'run-backup':
        return 'make a backup';
      case 'turn-guard-on':
        return 'turn the CRD guard on and wait for it to be active';
      case 'set-encryption-key':
        return 'set the encryption key';
      case 'allow-unauthenticated':
        return 'allowing unauthenticated backups';
      case 'map-storage-class':
        return `map ${remedy.from} to a storage class of this cluster`;
      case 'migrate-stored-versions':
        return 'migrate its stored versions';
      case 'verify-again':
        return 'verify again';
      case 'prune-again':
        return 'prune again';
      case 'remove-foreign-locks':
        return 'prune with foreign locks removed';
      case 'delete-unauthenticated':
        return 'prune with unauthenticated folders deleted';
      case 'recover-retained':
        return 'recover the retained versions';
    }
  },
};
