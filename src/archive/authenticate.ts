// The keyed proof that a backup is the one we wrote: an HMAC-SHA256 of the manifest's bytes, recorded in the marker.
// The manifest's checksums cover everything else (items, tarball, Velero files, volume and control-plane indexes), so
// whoever can write the bucket but does not hold the encryption key cannot make a backup, or a changed one, that
// passes. The sha256s alone catch accidents only: a forger recomputes them.
//
// The HMAC key is derived apart from the sealing key: scrypt over the user's key with a per-backup salt of its own
// (a weak passphrase is not guessable at hash speed from a published HMAC), then HKDF-SHA256 (RFC 5869) with that salt
// and a label no other key uses, so the HMAC key and the sealing keys can never coincide.
import { createHmac, hkdfSync, randomBytes, timingSafeEqual, type Hmac } from 'node:crypto';
import { kdf } from './seal.ts';
import { KfuError } from '../errors/index.ts';

/**
 * In the marker's metadata.annotations, beside the manifest's sha256. Velero decodes velero-backup.json into its
 * Backup type and drops unknown fields (vmware-tanzu/velero pkg/persistence/object_store.go, through apimachinery's
 * JSON decoder); annotations are a map[string]string of ObjectMeta that it keeps, also on the Backup its sync creates.
 */
export const MANIFEST_HMAC_ANNOTATION = 'kubeflow-upgrader.io/manifest-hmac';

const MAC_LABEL = 'kubeflow-upgrader manifest hmac v1';
const SCHEME = 'hmac-sha256';
const SALT_BYTES = 16;
const FORMAT = /^hmac-sha256;salt=([A-Za-z0-9+/]{22}==);mac=([0-9a-f]{64})$/;

function macKey(secret: string | Buffer, salt: Buffer): Buffer {
  return Buffer.from(hkdfSync('sha256', kdf(secret, salt), salt, MAC_LABEL, 32));
}

/** Signs one manifest as it is written: update with its bytes, then `annotation()` for the marker. */
export class ManifestSigner {
  private readonly salt: Buffer;
  private readonly mac: Hmac;

  constructor(secret: string | Buffer, salt: Buffer = randomBytes(SALT_BYTES)) {
    this.salt = salt;
    this.mac = createHmac('sha256', macKey(secret, salt));
  }

  update(chunk: Buffer): void {
    this.mac.update(chunk);
  }

  annotation(): string {
    return `${SCHEME};salt=${this.salt.toString('base64')};mac=${this.mac.digest('hex')}`;
  }
}

/** What the marker's HMAC says of the manifest, under the key set now. */
export type Authentication = 'authenticated' | 'no-hmac' | 'mismatch';

/** Checks a manifest's HMAC as its bytes arrive: update with every chunk, then `verdict()`. */
export class ManifestVerifier {
  private readonly mac: Hmac | undefined;
  private readonly expected: Buffer | undefined;

  private readonly carried: boolean;

  /** `recorded`: the marker's annotation value, undefined when the marker has no such annotation. */
  constructor(secret: string | Buffer, recorded: unknown) {
    this.carried = recorded !== undefined;
    const m = typeof recorded === 'string' ? FORMAT.exec(recorded) : null;
    if (!m) return;
    this.expected = Buffer.from(m[2]!, 'hex');
    this.mac = createHmac('sha256', macKey(secret, Buffer.from(m[1]!, 'base64')));
  }

  update(chunk: Buffer): void {
    this.mac?.update(chunk);
  }

  /**
   * An annotation that is there but not in the form we write (a digit dropped, the salt cut) is a mismatch, never
   * "no HMAC": otherwise damaging the HMAC would turn an always-refused backup into one allow-unauthenticated accepts,
   * and would erase the sign of tampering from list-backups.
   */
  verdict(): Authentication {
    if (!this.carried) return 'no-hmac';
    if (!this.mac || !this.expected) return 'mismatch';
    return timingSafeEqual(this.mac.digest(), this.expected) ? 'authenticated' : 'mismatch';
  }
}

/**
 * Why a backup is not authenticated, as a clause for "Backup <id> is not authenticated: <clause>." Says which case it
 * is and never anything of the key.
 */
export function unauthenticatedReason(verdict: Exclude<Authentication, 'authenticated'>): string {
  return verdict === 'no-hmac'
    ? 'its velero-backup.json carries no HMAC of the manifest (a backup made without an encryption-key, by an older version, or by Velero)'
    : 'the HMAC in its velero-backup.json does not match the manifest under the encryption-key set now (the backup was changed after it was made, or made with another key)';
}

/** A backup that a key was set for and that does not prove it was written with that key; the sentence names the case. */
export class NotAuthenticatedError extends KfuError {
  static override readonly errorId = 'NotAuthenticatedError';
  constructor(sentence: string) {
    super(sentence, { kind: 'refused' });
  }
}

/**
 * What a run trusts a stored backup by: the key set now and what the user allows without its proof. One value, made
 * by the edge (the charm's action, the CLI's command) and handed down whole to whatever reads a backup.
 */
export interface Trust {
  /** the key set now; without one nothing is checked, as before */
  encryptionKey?: string | Buffer | undefined;
  /** accept a backup without an HMAC (an older backup, or a foreign Velero archive); a wrong HMAC never is */
  allowUnauthenticated?: boolean | undefined;
  /** how the user says so where they are: `allow-unauthenticated=true` (action) or `--allow-unauthenticated` (CLI) */
  allowHint?: string | undefined;
}

/** What a run reports about authentication: one of three states, and a sentence fit for results and logs. */
export interface AuthenticationOutcome {
  state: 'authenticated' | 'unauthenticated-allowed' | 'not-checked';
  note: string;
}

/**
 * Applies the trust to what the manifest read found (`verdict` is undefined when no key was given; a backup without
 * our manifest has no HMAC either). Throws a NotAuthenticatedError of one sentence, naming the case, never the key.
 * `doing` completes "was not …": `restored`, `verified`.
 */
export function judgeAuthentication(id: string, verdict: Authentication | undefined, trust: Trust, doing: string): AuthenticationOutcome {
  if (trust.encryptionKey === undefined || trust.encryptionKey.length === 0) {
    return { state: 'not-checked', note: 'not checked: no encryption-key is set, so the backup is trusted as the bucket holds it' };
  }
  if (verdict === 'authenticated') return { state: 'authenticated', note: 'authenticated: the manifest HMAC matches under the encryption-key' };
  const reason = unauthenticatedReason(verdict ?? 'no-hmac');
  if (verdict === 'mismatch') throw new NotAuthenticatedError(`Backup ${id} is not authenticated and was not ${doing}: ${reason}.`);
  const hint = trust.allowHint ?? 'allow-unauthenticated=true';
  if (!trust.allowUnauthenticated) {
    throw new NotAuthenticatedError(`Backup ${id} is not authenticated and was not ${doing}: ${reason}; set ${hint} to accept it anyway.`);
  }
  return { state: 'unauthenticated-allowed', note: `not authenticated (${reason}), accepted because ${hint} was given` };
}

/**
 * `allow-unauthenticated` waives the HMAC for one backup the operator names and has looked at, never for whatever
 * `latest` turns out to be: a writer without the key could otherwise plant a newer unauthenticated backup and have it
 * chosen. Throws the one sentence when both are asked for, in the words the user gave it (`allowHint`).
 */
export function refuseAllowWithLatest(requested: string, trust: Trust): void {
  const hint = trust.allowHint ?? 'allow-unauthenticated=true';
  if (requested === 'latest' && trust.allowUnauthenticated === true) {
    throw new NotAuthenticatedError(`${hint} accepts one backup named by its id, never latest: give the backup id that list-backups shows, after checking that backup.`);
  }
}
