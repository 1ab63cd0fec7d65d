// The record a backup keeps in its folder while it is written, so that prune-backups can tell a backup that is really
// running from a folder someone else wrote to. Without it, prune guessed from the folder's newest write, and one object
// put into a fresh `kf-<now>` folder every hour kept it refusing forever.
//
// The record names its backup and the time until which it holds (its lease); the backup renews it while it runs and
// removes it at commit. With `encryption-key` set it carries an HMAC over those fields under a key of its own (scrypt
// over the user's key with the record's salt, then HKDF-SHA256 with a label no other key uses, as the manifest's HMAC
// does in authenticate.ts), so a writer without the key cannot make one, and a copy moved into another folder, or an
// old one put back, names another backup or a lease that has run out. Without a key nothing is authenticated: the
// record is then taken on the bucket's word, as everything else is.
import { createHmac, hkdfSync, randomBytes, timingSafeEqual } from 'node:crypto';
import { kdf } from './seal.ts';

/** The record's name in the backup folder: beside the files the backup writes, never among Velero's. */
export const RUN_RECORD_FILE = 'kubeflow-upgrader-running.json';

const KIND = 'kubeflow-upgrader-run';
const MAC_LABEL = 'kubeflow-upgrader run record hmac v1';
const SALT_BYTES = 16;
const MAC_FORMAT = /^hmac-sha256;salt=([A-Za-z0-9+/]{22}==);mac=([0-9a-f]{64})$/;

export interface RunRecord {
  /** the backup id, as its folder is named */
  id: string;
  /** when the backup started */
  started: Date;
  /** when the record was last renewed */
  renewed: Date;
  /** the lease: after this the backup is taken to be gone, whatever its folder holds */
  expires: Date;
  /**
   * who writes it (`<unit> action`, `<unit> service`), so that a writer who knows that holder is over (Juju runs one
   * action of a unit at a time) need not wait for its lease to run out; absent in records written before it existed
   */
  holder?: string;
}

/** What a record read from a folder is worth under the key set now. */
export type RunRecordRead =
  | { state: 'absent' }
  /** present but unusable, or (with a key) not authenticated: `reason` is a clause */
  | { state: 'untrusted'; reason: string }
  /** taken: authenticated under the key, or (without one) on the bucket's word */
  | { state: 'trusted'; record: RunRecord; authenticated: boolean };

function macKey(secret: string | Buffer, salt: Buffer): Buffer {
  return Buffer.from(hkdfSync('sha256', kdf(secret, salt), salt, MAC_LABEL, 32));
}

/** The bytes the HMAC covers: the fields in a fixed order, as a JSON array, so no field can be read as another. */
function covered(record: RunRecord): string {
  const fields = [KIND, record.id, record.started.toISOString(), record.renewed.toISOString(), record.expires.toISOString()];
  // a record without a holder is covered as before it had one
  return JSON.stringify(record.holder === undefined ? fields : [...fields, record.holder]);
}

const keyed = (key: string | Buffer | undefined): key is string | Buffer => key !== undefined && key.length > 0;

/**
 * The record's bytes; with a key, signed. The salt is fresh each time, so one scrypt per write: a backup writes it a few
 * times an hour.
 */
export function encodeRunRecord(record: RunRecord, encryptionKey: string | Buffer | undefined): Buffer {
  const body: Record<string, string> = {
    kind: KIND, id: record.id, started: record.started.toISOString(), renewed: record.renewed.toISOString(), expires: record.expires.toISOString(),
    ...(record.holder !== undefined ? { holder: record.holder } : {}),
  };
  if (keyed(encryptionKey)) {
    const salt = randomBytes(SALT_BYTES);
    const mac = createHmac('sha256', macKey(encryptionKey, salt)).update(covered(record)).digest('hex');
    body.hmac = `hmac-sha256;salt=${salt.toString('base64')};mac=${mac}`;
  }
  return Buffer.from(`${JSON.stringify(body)}\n`);
}

function parseTime(value: unknown): Date | undefined {
  if (typeof value !== 'string') return undefined;
  const at = new Date(value);
  return Number.isNaN(at.getTime()) || at.toISOString() !== value ? undefined : at;
}

/** Reads the record of folder `id`; with a key only an authenticated record that names this folder is trusted. */
export function decodeRunRecord(bytes: Buffer | undefined, id: string, encryptionKey: string | Buffer | undefined): RunRecordRead {
  if (bytes === undefined) return { state: 'absent' };
  let parsed: Record<string, unknown>;
  try {
    const value: unknown = JSON.parse(bytes.toString('utf8'));
    if (value === null || typeof value !== 'object' || Array.isArray(value)) return { state: 'untrusted', reason: 'its run record is not a JSON object' };
    parsed = value as Record<string, unknown>;
  } catch {
    return { state: 'untrusted', reason: 'its run record is not JSON' };
  }
  const started = parseTime(parsed.started);
  const renewed = parseTime(parsed.renewed);
  const expires = parseTime(parsed.expires);
  if (parsed.kind !== KIND || typeof parsed.id !== 'string' || !started || !renewed || !expires || (parsed.holder !== undefined && typeof parsed.holder !== 'string')) {
    return { state: 'untrusted', reason: 'its run record is not one kubeflow-upgrader writes' };
  }
  const record: RunRecord = { id: parsed.id, started, renewed, expires, ...(typeof parsed.holder === 'string' ? { holder: parsed.holder } : {}) };
  if (keyed(encryptionKey)) {
    const m = typeof parsed.hmac === 'string' ? MAC_FORMAT.exec(parsed.hmac) : null;
    if (!m) return { state: 'untrusted', reason: 'its run record carries no HMAC' };
    const expected = Buffer.from(m[2]!, 'hex');
    const actual = createHmac('sha256', macKey(encryptionKey, Buffer.from(m[1]!, 'base64'))).update(covered(record)).digest();
    if (!timingSafeEqual(actual, expected)) return { state: 'untrusted', reason: "its run record's HMAC does not match under the encryption-key" };
  }
  // checked after the HMAC: with a key a record moved from another folder is authentic, but not this folder's
  if (record.id !== id) return { state: 'untrusted', reason: `its run record names backup ${record.id}` };
  return { state: 'trusted', record, authenticated: keyed(encryptionKey) };
}
