// Sealing of Secret values: AES-256-GCM under a key derived per backup (scrypt over the user's encryption key
// with a random per-backup salt), so one leaked backup key opens one backup, and the stored key id tells which
// user key is needed without revealing it.
// Bound sealing (manifest encryption.binding): the AES key is HKDF-expanded (RFC 5869) from the scrypt output under
// a label of its own, and each value's AAD names the backup, the Secret's namespace and name and the value's key, so
// a value moved to another Secret, another key or another backup no longer opens. Older backups (no binding) used
// the scrypt output itself and only `data/<key>` as AAD: they still open, and are reported as sealed without binding.
import { createCipheriv, createDecipheriv, createHash, hkdfSync, randomBytes, scryptSync } from 'node:crypto';
import type { KubeObject } from '../kube/types.ts';
import { KfuError } from '../errors/index.ts';

export const SEAL_ALGORITHM = 'aes-256-gcm';
export const SEAL_KDF = { name: 'scrypt', N: 32768, r: 8, p: 1 } as const;
/** manifest encryption.binding of a backup whose values are bound to their backup, Secret and key */
export const SEAL_BINDING = 'backup-namespace-name-key';
/** HKDF info of the bound sealing key; the manifest HMAC key has a label of its own (authenticate.ts) */
const SEAL_KEY_LABEL = 'kubeflow-upgrader seal v2';

const PREFIX = 'kubeflow-upgrader.io';
/** value: the algorithm; present only on sealed items */
export const ANNOTATION_SEALED = `${PREFIX}/sealed`;
/** value: the key id that opens the item */
export const ANNOTATION_KEY_ID = `${PREFIX}/sealed-key-id`;
/** value: comma list of annotations whose values were sealed too (they can repeat Secret data in clear) */
export const ANNOTATION_SEALED_ANNOTATIONS = `${PREFIX}/sealed-annotations`;

/** Annotations that tools fill with a copy of the whole object, data included. */
const ANNOTATIONS_THAT_COPY_DATA = ['kubectl.kubernetes.io/last-applied-configuration'];

const IV_BYTES = 12;
const TAG_BYTES = 16;

export class SealError extends KfuError {
  static override readonly errorId = 'SealError';
  constructor(sentence: string) {
    super(sentence, { kind: 'corrupt' });
  }
}

/** scrypt over the user's key: slow on purpose, so a weak passphrase cannot be guessed at hash speed. */
export function kdf(secret: string | Buffer, salt: Buffer | string): Buffer {
  return scryptSync(secret, salt, 32, { N: SEAL_KDF.N, r: SEAL_KDF.r, p: SEAL_KDF.p, maxmem: 64 * 1024 * 1024 });
}

/** The AES key of a bound backup: the stretched key expanded under the sealing label and the backup's salt. */
function boundSealKey(stretched: Buffer, salt: Buffer): Buffer {
  return Buffer.from(hkdfSync('sha256', stretched, salt, SEAL_KEY_LABEL, 32));
}

/** Where a value belongs. A JSON array, so no name can be made to read as another by its separators. */
function boundContext(backupId: string, object: KubeObject, field: string): string {
  return JSON.stringify([SEAL_KEY_LABEL, backupId, object.metadata.namespace ?? '', object.metadata.name ?? '', field]);
}

function requireKey(secret: string | Buffer): void {
  if (secret.length === 0) throw new SealError('The encryption key is empty; set encryption-key to a non-empty value.');
}

/**
 * A fingerprint of the user's key: derived through the same slow KDF and then hashed, so it identifies the key without
 * helping anyone guess it. `installation` (the location the backups go to) salts it, so the same passphrase gives
 * another id on every installation: an id seen in one bucket neither links it to another nor lets one precomputed
 * table of passphrases serve them all. Without it (older backups) the salt is the fixed label every installation shared.
 */
export function keyIdOf(secret: string | Buffer, installation?: string): string {
  requireKey(secret);
  const salt = installation === undefined ? KEY_ID_LEGACY_SALT : JSON.stringify([KEY_ID_LABEL, installation]);
  const stretched = kdf(secret, salt);
  return `kfu-${createHash('sha256').update(stretched).digest('hex').slice(0, 16)}`;
}

const KEY_ID_LEGACY_SALT = 'kubeflow-upgrader key id v1';
const KEY_ID_LABEL = 'kubeflow-upgrader key id v2';

export interface SealParameters {
  algorithm: typeof SEAL_ALGORITHM;
  kdf: typeof SEAL_KDF.name;
  keyId: string;
  /** what salted keyId (the installation's location); absent on older backups (the fixed salt) */
  keyIdSalt?: string | undefined;
  /** base64 of the per-backup salt */
  salt: string;
  /** absent on backups sealed before values were bound to where they belong */
  binding?: string | undefined;
}

function isSecret(object: KubeObject): boolean {
  return object.kind === 'Secret' && object.apiVersion === 'v1';
}

function mapValues(values: unknown, fn: (key: string, value: string) => string): Record<string, string> | undefined {
  if (!values || typeof values !== 'object') return undefined;
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(values as Record<string, unknown>)) {
    if (typeof v !== 'string') throw new SealError(`Secret value "${k}" is not a string and cannot be sealed.`);
    out[k] = fn(k, v);
  }
  return out;
}

/** Seals Secrets of one backup; create once per backup. */
export class SecretSealer {
  readonly parameters: SealParameters;
  private readonly key: Buffer;
  private readonly backupId: string;

  private constructor(key: Buffer, backupId: string, parameters: SealParameters) {
    this.key = key;
    this.backupId = backupId;
    this.parameters = parameters;
  }

  /**
   * Values sealed here open only in backup `backupId`, in the Secret and under the key they were sealed from.
   * `installation`: the location the backup goes to, which salts the key id (keyIdOf).
   */
  static create(secret: string | Buffer, backupId: string, salt: Buffer = randomBytes(16), installation?: string): SecretSealer {
    requireKey(secret);
    return new SecretSealer(boundSealKey(kdf(secret, salt), salt), backupId, {
      algorithm: SEAL_ALGORITHM, kdf: SEAL_KDF.name, keyId: keyIdOf(secret, installation),
      ...(installation === undefined ? {} : { keyIdSalt: installation }), salt: salt.toString('base64'), binding: SEAL_BINDING,
    });
  }

  private encrypt(plain: Buffer, object: KubeObject, field: string): string {
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv(SEAL_ALGORITHM, this.key, iv);
    cipher.setAAD(Buffer.from(boundContext(this.backupId, object, field)));
    const body = Buffer.concat([cipher.update(plain), cipher.final()]);
    return Buffer.concat([iv, body, cipher.getAuthTag()]).toString('base64');
  }

  /**
   * A copy of a Secret whose data and stringData values are sealed; other objects come back unchanged.
   * Sealed values stay base64 strings, so the item is still a schema-valid Secret for foreign readers.
   */
  seal(object: KubeObject): KubeObject {
    if (!isSecret(object)) return object;
    const sealed: KubeObject = { ...object, metadata: { ...object.metadata } };
    const data = mapValues(object.data, (k, v) => this.encrypt(Buffer.from(v, 'base64'), object, `data/${k}`));
    if (data) sealed.data = data;
    const stringData = mapValues(object.stringData, (k, v) => this.encrypt(Buffer.from(v, 'utf8'), object, `stringData/${k}`));
    if (stringData) sealed.stringData = stringData;
    const annotations: Record<string, string> = { ...(object.metadata.annotations ?? {}) };
    const sealedAnnotations: string[] = [];
    for (const name of ANNOTATIONS_THAT_COPY_DATA) {
      const value = annotations[name];
      if (value === undefined) continue;
      annotations[name] = this.encrypt(Buffer.from(value, 'utf8'), object, `annotation/${name}`);
      sealedAnnotations.push(name);
    }
    annotations[ANNOTATION_SEALED] = SEAL_ALGORITHM;
    annotations[ANNOTATION_KEY_ID] = this.parameters.keyId;
    if (sealedAnnotations.length) annotations[ANNOTATION_SEALED_ANNOTATIONS] = sealedAnnotations.join(',');
    sealed.metadata.annotations = annotations;
    return sealed;
  }
}

export function isSealed(object: KubeObject): boolean {
  return object.metadata.annotations?.[ANNOTATION_SEALED] !== undefined;
}

/** Opens the sealed Secrets of one backup. */
export class SecretOpener {
  readonly keyId: string;
  /** false for a backup sealed before values were bound: its values open wherever they are put */
  readonly bound: boolean;
  private readonly key: Buffer;
  private readonly backupId: string;

  private constructor(key: Buffer, keyId: string, backupId: string, bound: boolean) {
    this.key = key;
    this.keyId = keyId;
    this.backupId = backupId;
    this.bound = bound;
  }

  /**
   * Checks that `secret` is the key the backup was sealed with before deriving anything, so a wrong or
   * missing key is one clear sentence up front rather than a failure per item.
   */
  static forBackup(backupId: string, parameters: SealParameters, secret: string | Buffer | undefined): SecretOpener {
    if (secret === undefined || secret.length === 0) {
      throw new SealError(
        `Backup ${backupId} holds Secrets sealed with key ${parameters.keyId}; set encryption-key to that key to restore them.`,
      );
    }
    // with the salt the backup recorded, so a backup copied to another location still opens
    const given = keyIdOf(secret, parameters.keyIdSalt);
    if (given !== parameters.keyId) {
      throw new SealError(
        `The encryption-key set now (key ${given}) is not the key that sealed backup ${backupId} (key ${parameters.keyId}).`,
      );
    }
    if (parameters.algorithm !== SEAL_ALGORITHM || parameters.kdf !== SEAL_KDF.name) {
      throw new SealError(`Backup ${backupId} was sealed with ${parameters.algorithm}/${parameters.kdf}, which this version cannot open.`);
    }
    if (parameters.binding !== undefined && parameters.binding !== SEAL_BINDING) {
      throw new SealError(`Backup ${backupId} binds its sealed values as "${parameters.binding}", which this version cannot open.`);
    }
    const salt = Buffer.from(parameters.salt, 'base64');
    const stretched = kdf(secret, salt);
    const bound = parameters.binding === SEAL_BINDING;
    return new SecretOpener(bound ? boundSealKey(stretched, salt) : stretched, parameters.keyId, backupId, bound);
  }

  private context(object: KubeObject, field: string): string {
    return this.bound ? boundContext(this.backupId, object, field) : field;
  }

  private decrypt(sealed: string, context: string, where: string): Buffer {
    const raw = Buffer.from(sealed, 'base64');
    if (raw.length < IV_BYTES + TAG_BYTES) throw new SealError(`The sealed value ${where} is too short to be genuine.`);
    try {
      const decipher = createDecipheriv(SEAL_ALGORITHM, this.key, raw.subarray(0, IV_BYTES));
      decipher.setAAD(Buffer.from(context));
      decipher.setAuthTag(raw.subarray(raw.length - TAG_BYTES));
      return Buffer.concat([decipher.update(raw.subarray(IV_BYTES, raw.length - TAG_BYTES)), decipher.final()]);
    } catch {
      throw new SealError(`The sealed value ${where} could not be opened: it was damaged, sealed under another key, or moved from another Secret or backup.`);
    }
  }

  /** The Secret as it was before sealing; unsealed objects come back unchanged. */
  open(object: KubeObject): KubeObject {
    if (!isSealed(object)) return object;
    const where = (f: string) => `${f} of Secret ${object.metadata.namespace ?? ''}/${object.metadata.name ?? ''}`;
    const annotations: Record<string, string> = { ...(object.metadata.annotations ?? {}) };
    const keyId = annotations[ANNOTATION_KEY_ID];
    if (keyId !== this.keyId) {
      throw new SealError(`Secret ${object.metadata.namespace ?? ''}/${object.metadata.name ?? ''} was sealed with key ${keyId ?? 'unknown'}, not ${this.keyId}.`);
    }
    const opened: KubeObject = { ...object, metadata: { ...object.metadata } };
    const data = mapValues(object.data, (k, v) => this.decrypt(v, this.context(object, `data/${k}`), where(`data.${k}`)).toString('base64'));
    if (data) opened.data = data;
    const stringData = mapValues(object.stringData, (k, v) => this.decrypt(v, this.context(object, `stringData/${k}`), where(`stringData.${k}`)).toString('utf8'));
    if (stringData) opened.stringData = stringData;
    for (const name of (annotations[ANNOTATION_SEALED_ANNOTATIONS] ?? '').split(',').filter(Boolean)) {
      const value = annotations[name];
      if (value !== undefined) annotations[name] = this.decrypt(value, this.context(object, `annotation/${name}`), where(`annotation ${name}`)).toString('utf8');
    }
    delete annotations[ANNOTATION_SEALED];
    delete annotations[ANNOTATION_KEY_ID];
    delete annotations[ANNOTATION_SEALED_ANNOTATIONS];
    if (Object.keys(annotations).length) opened.metadata.annotations = annotations;
    else delete opened.metadata.annotations;
    return opened;
  }
}
