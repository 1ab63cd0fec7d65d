// Sealing of Secret values: AES-256-GCM under a key derived per backup (scrypt over the user's encryption key
// with a random per-backup salt), so one leaked backup key opens one backup, and the stored key id tells which
// user key is needed without revealing it.
import { createCipheriv, createDecipheriv, createHash, randomBytes, scryptSync } from 'node:crypto';
import type { KubeObject } from '../kube/types.ts';

export const SEAL_ALGORITHM = 'aes-256-gcm';
export const SEAL_KDF = { name: 'scrypt', N: 32768, r: 8, p: 1 } as const;

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

export class SealError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SealError';
  }
}

function kdf(secret: string | Buffer, salt: Buffer | string): Buffer {
  return scryptSync(secret, salt, 32, { N: SEAL_KDF.N, r: SEAL_KDF.r, p: SEAL_KDF.p, maxmem: 64 * 1024 * 1024 });
}

function requireKey(secret: string | Buffer): void {
  if (secret.length === 0) throw new SealError('The encryption key is empty; set encryption-key to a non-empty value.');
}

/**
 * A fingerprint of the user's key: derived through the same slow KDF under a fixed label and then hashed,
 * so it identifies the key without helping anyone guess it.
 */
export function keyIdOf(secret: string | Buffer): string {
  requireKey(secret);
  const stretched = kdf(secret, 'kubeflow-upgrader key id v1');
  return `kfu-${createHash('sha256').update(stretched).digest('hex').slice(0, 16)}`;
}

export interface SealParameters {
  algorithm: typeof SEAL_ALGORITHM;
  kdf: typeof SEAL_KDF.name;
  keyId: string;
  /** base64 of the per-backup salt */
  salt: string;
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

  private constructor(key: Buffer, parameters: SealParameters) {
    this.key = key;
    this.parameters = parameters;
  }

  static create(secret: string | Buffer, salt: Buffer = randomBytes(16)): SecretSealer {
    requireKey(secret);
    return new SecretSealer(kdf(secret, salt), {
      algorithm: SEAL_ALGORITHM, kdf: SEAL_KDF.name, keyId: keyIdOf(secret), salt: salt.toString('base64'),
    });
  }

  private encrypt(plain: Buffer, context: string): string {
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv(SEAL_ALGORITHM, this.key, iv);
    cipher.setAAD(Buffer.from(context));
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
    const data = mapValues(object.data, (k, v) => this.encrypt(Buffer.from(v, 'base64'), `data/${k}`));
    if (data) sealed.data = data;
    const stringData = mapValues(object.stringData, (k, v) => this.encrypt(Buffer.from(v, 'utf8'), `stringData/${k}`));
    if (stringData) sealed.stringData = stringData;
    const annotations: Record<string, string> = { ...(object.metadata.annotations ?? {}) };
    const sealedAnnotations: string[] = [];
    for (const name of ANNOTATIONS_THAT_COPY_DATA) {
      const value = annotations[name];
      if (value === undefined) continue;
      annotations[name] = this.encrypt(Buffer.from(value, 'utf8'), `annotation/${name}`);
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
  private readonly key: Buffer;

  private constructor(key: Buffer, keyId: string) {
    this.key = key;
    this.keyId = keyId;
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
    const given = keyIdOf(secret);
    if (given !== parameters.keyId) {
      throw new SealError(
        `The encryption-key set now (key ${given}) is not the key that sealed backup ${backupId} (key ${parameters.keyId}).`,
      );
    }
    if (parameters.algorithm !== SEAL_ALGORITHM || parameters.kdf !== SEAL_KDF.name) {
      throw new SealError(`Backup ${backupId} was sealed with ${parameters.algorithm}/${parameters.kdf}, which this version cannot open.`);
    }
    return new SecretOpener(kdf(secret, Buffer.from(parameters.salt, 'base64')), parameters.keyId);
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
      throw new SealError(`The sealed value ${where} could not be opened: it was damaged or sealed under another key.`);
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
    const data = mapValues(object.data, (k, v) => this.decrypt(v, `data/${k}`, where(`data.${k}`)).toString('base64'));
    if (data) opened.data = data;
    const stringData = mapValues(object.stringData, (k, v) => this.decrypt(v, `stringData/${k}`, where(`stringData.${k}`)).toString('utf8'));
    if (stringData) opened.stringData = stringData;
    for (const name of (annotations[ANNOTATION_SEALED_ANNOTATIONS] ?? '').split(',').filter(Boolean)) {
      const value = annotations[name];
      if (value !== undefined) annotations[name] = this.decrypt(value, `annotation/${name}`, where(`annotation ${name}`)).toString('utf8');
    }
    delete annotations[ANNOTATION_SEALED];
    delete annotations[ANNOTATION_KEY_ID];
    delete annotations[ANNOTATION_SEALED_ANNOTATIONS];
    if (Object.keys(annotations).length) opened.metadata.annotations = annotations;
    else delete opened.metadata.annotations;
    return opened;
  }
}
