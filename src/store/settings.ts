// S3 settings from s3-integrator, on both tracks of the `s3` interface (docs/juju.md): what the requirer asks for,
// and how the provider's answer (plain keys on track 1, `secret-extra` on track 2) becomes validated S3Settings.
import { z } from 'zod';
import { parseUriStyle, resolveAddressing, URI_STYLE_VALUES, type UriStyle } from './addressing.ts';
import { storageClassUse } from './storage-class.ts';
import type { Immutability } from './immutability.ts';

export const S3_ENDPOINT = 's3-credentials';
export const S3_LIB_VERSION = '1.0';

export interface S3Settings {
  accessKey: string;
  secretKey: string;
  bucket: string;
  /** key prefix inside the bucket, without leading or trailing slashes ('' for the bucket root) */
  path: string;
  /** absent for AWS itself: every client then uses the region's own endpoint (addressing.ts) */
  endpoint?: string;
  region: string;
  /** the addressing style after the one rule of addressing.ts */
  uriStyle: UriStyle;
  /** PEM certificates to trust for the endpoint, in addition to the system ones */
  tlsCaChain?: string[];
  /**
   * the storage class of the backup data (s3-integrator's storage-class), only ever one a restore reads at once
   * (storage-class.ts); markers, manifests and indexes are written as STANDARD. Absent: the bucket's default.
   */
  storageClass?: string;
  /** backup-immutability (immutability.ts): every object a backup needs is written under Object Lock retention */
  immutability?: Immutability;
  /** which track of s3-integrator gave these settings (absent for the CLI): messages name that track's fix */
  track?: S3Track;
}

/** s3-integrator 1/stable (interface v0) or 2/edge (interface v1). */
export type S3Track = 1 | 2;

/** What the relation currently gives: the shape of the status and of an action's "S3 is not ready" failure. */
export type S3Readiness =
  | { state: 'no-relation' }
  | { state: 'waiting'; message: string }
  | { state: 'invalid'; problem: string }
  | { state: 'ready'; settings: S3Settings };

/**
 * The bucket we ask for when s3-bucket is empty. It must not depend on the relation or the model: a bucket named
 * after the relation id (the v0 library's `relation-<id>`) moves with every re-integration and differs in a
 * blue/green target, so earlier backups would not be found. No dots, so s3-integrator 2 may create it.
 */
export const DEFAULT_REQUESTED_BUCKET = 'kubeflow-backups';

/** Names s3-integrator 2 accepts for a bucket it creates (object-storage-integrators s3/src/core/domain.py BUCKET_REGEX). */
const TRACK2_CREATABLE_BUCKET = /^(?!xn--)(?!.+-s3alias$)[a-z0-9][a-z0-9-]{1,61}[a-z0-9]$/;

/** What our leader writes into its application databag: understood by both tracks of s3-integrator. */
export function requirerRequest(wanted: { bucket: string; path: string }): Record<string, string> {
  return {
    bucket: wanted.bucket || DEFAULT_REQUESTED_BUCKET,
    path: wanted.path,
    'lib-version': S3_LIB_VERSION,
    'requested-secrets': JSON.stringify(['access-key', 'secret-key']),
  };
}

/**
 * A databag value as text. Neither track JSON-encodes scalars (data-platform-libs v0 s3.py `update_connection_info`
 * dumps only `attributes` and `tls-ca-chain`; object-storage-integrators writes its config as strings), so a value is
 * never JSON-decoded: a 20-digit key or `1e5` stays as written.
 */
function asText(raw: string | undefined): string | undefined {
  return raw === undefined ? undefined : raw.trim();
}

const BUCKET_NAME = /^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/;
const PEM = /-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/;
const STORAGE_CLASS = /^[A-Za-z0-9_-]{1,64}$/;

const ProviderFields = z.object({
  'access-key': z.string().optional(),
  'secret-key': z.string().optional(),
  bucket: z.string().optional(),
  endpoint: z.string().optional(),
  region: z.string().optional(),
  path: z.string().optional(),
  's3-uri-style': z.string().optional(),
  'storage-class': z.string().optional(),
  'tls-ca-chain': z.string().optional(),
  'secret-extra': z.string().optional(),
  'lib-version': z.string().optional(),
});

/** Keys the provider writes once it has answered; a databag with none of them means "not yet". */
const ANSWER_KEYS = ['access-key', 'secret-key', 'secret-extra', 'endpoint', 'bucket', 'region', 'tls-ca-chain'];

export interface ProviderAnswer {
  /** the provider application's databag */
  databag: Record<string, string>;
  /** the content of the `secret-extra` secret (track 2), when there is one and it could be read */
  secret?: Record<string, string>;
}

/** Track 2 writes `lib-version` and its keys behind `secret-extra`; track 1 writes neither. */
export function trackOf(databag: Record<string, string>): S3Track {
  return databag['secret-extra'] !== undefined || databag['lib-version'] !== undefined ? 2 : 1;
}

/** How keys reach s3-integrator on each track: an action on track 1, a granted secret in its config on track 2. */
export function credentialsFix(track: S3Track | undefined): string {
  if (track === 2) return 'put the keys in a Juju secret, juju grant-secret it to s3-integrator and juju config s3-integrator credentials=<secret-uri>';
  if (track === 1) return 'set the keys with the sync-s3-credentials action of s3-integrator';
  return 'set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY';
}

/**
 * What to say while s3-integrator has not answered. Track 2 answers only once it has found or created the requested
 * bucket, and stays silent when it cannot (no CreateBucket right, a name taken elsewhere, a name it refuses):
 * object-storage-integrators s3/src/events/provider.py `reconcile_buckets`. Track 1 answers as soon as it has keys.
 */
export function waitingForProvider(requestedBucket: string): string {
  if (!TRACK2_CREATABLE_BUCKET.test(requestedBucket)) {
    return `waiting for s3-integrator: its track 2 cannot create "${requestedBucket.slice(0, 70)}" (a-z, 0-9 and -, 3-63 long); set s3-bucket here or bucket on s3-integrator`;
  }
  return `waiting for s3-integrator: it needs credentials and a bucket it can find or create ("${requestedBucket}" asked); set s3-bucket here or bucket on s3-integrator`;
}

const invalid = (problem: string): S3Readiness => ({ state: 'invalid', problem });

/**
 * Turns the provider's answer into settings, or names the first problem a user can act on.
 * `defaults` are what we asked for, used when the provider leaves a field out.
 */
export function settingsFromProvider(answer: ProviderAnswer, defaults: { bucket: string; path: string }): S3Readiness {
  const fields = ProviderFields.safeParse(answer.databag);
  if (!fields.success) return invalid('s3-integrator sent a databag that is not a map of strings');
  const bag = fields.data;
  if (!ANSWER_KEYS.some((key) => bag[key as keyof typeof bag] !== undefined)) {
    return { state: 'waiting', message: waitingForProvider(defaults.bucket) };
  }
  const track = trackOf(answer.databag);
  const fromSecret = answer.secret ?? {};
  const accessKey = bag['secret-extra'] !== undefined ? asText(fromSecret['access-key']) : asText(bag['access-key']);
  const secretKey = bag['secret-extra'] !== undefined ? asText(fromSecret['secret-key']) : asText(bag['secret-key']);
  const where = bag['secret-extra'] !== undefined ? "s3-integrator's credentials secret" : 's3-integrator';
  if (!accessKey && !secretKey) {
    if (bag['secret-extra'] === undefined && bag['access-key'] === undefined && bag['secret-key'] === undefined && !bag.endpoint && !bag.bucket) {
      return { state: 'waiting', message: waitingForProvider(defaults.bucket) };
    }
    return invalid(`${where} has no access-key and secret-key; ${credentialsFix(track)}`);
  }
  if (!accessKey) return invalid(`${where} has no access-key; ${credentialsFix(track)}`);
  if (!secretKey) return invalid(`${where} has no secret-key; ${credentialsFix(track)}`);

  const endpointText = asText(bag.endpoint) || undefined;
  let endpoint: string | undefined;
  if (endpointText) {
    let url: URL | undefined;
    try {
      url = new URL(endpointText);
    } catch {
      url = undefined;
    }
    if (!url || (url.protocol !== 'http:' && url.protocol !== 'https:') || !url.hostname) {
      return invalid(`the S3 endpoint "${endpointText.replace(/\/\/[^@/]*@/, '//')}" is not an http(s) URL; fix the endpoint option of s3-integrator`);
    }
    if (url.username || url.password) return invalid('the S3 endpoint carries credentials in its URL; give them as access-key and secret-key instead');
    endpoint = url.toString().replace(/\/$/, '');
  }

  const bucket = asText(bag.bucket) || defaults.bucket;
  if (!BUCKET_NAME.test(bucket) || bucket.includes('..')) {
    return invalid(`the bucket name "${bucket.slice(0, 70)}" is not a valid S3 bucket name; fix the bucket option of s3-integrator`);
  }

  const region = asText(bag.region) || 'us-east-1';
  if (!/^[A-Za-z0-9-]{1,64}$/.test(region)) return invalid(`the S3 region "${region.slice(0, 70)}" is not a region name; fix the region option of s3-integrator`);

  const styleText = asText(bag['s3-uri-style']);
  const style = parseUriStyle(styleText);
  if (!style) return invalid(`s3-uri-style "${(styleText ?? '').slice(0, 40)}" is not one of ${URI_STYLE_VALUES}; fix it on s3-integrator`);
  const addressing = resolveAddressing({ endpoint, region, style });

  const rawPath = bag.path !== undefined ? asText(bag.path)! : defaults.path;
  const path = rawPath.replace(/^\/+|\/+$/g, '');
  if (path.includes('//') || /[\u0000-\u001f]/.test(path)) return invalid(`the S3 path "${path.slice(0, 70)}" is not a valid key prefix; fix the path option of s3-integrator`);

  const settings: S3Settings = { accessKey, secretKey, bucket, path, region, uriStyle: addressing.uriStyle, track };
  if (addressing.endpoint) settings.endpoint = addressing.endpoint;
  const storageClass = asText(bag['storage-class']);
  if (storageClass) {
    if (!STORAGE_CLASS.test(storageClass)) return invalid(`the storage class "${storageClass.slice(0, 40)}" is not a storage class name; fix the storage-class option of s3-integrator`);
    const use = storageClassUse(storageClass);
    if (!use.readable) return invalid(use.problem);
    settings.storageClass = storageClass;
  }

  if (bag['tls-ca-chain'] !== undefined) {
    const chain = parseCaChain(bag['tls-ca-chain']);
    if (typeof chain === 'string') return invalid(chain);
    if (chain.length > 0) settings.tlsCaChain = chain;
  }
  return { state: 'ready', settings };
}

/** A JSON list of PEM certificates, or the one-sentence problem with it. */
export function parseCaChain(raw: string): string[] | string {
  // No chain: the key unset, empty, the JSON of an empty string (what resetting tls-ca-chain on s3-integrator 1 leaves:
  // its config-changed hands "" to update_connection_info, which JSON-dumps list options), or an empty list.
  if (raw.trim() === '') return [];
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch {
    return 'tls-ca-chain from s3-integrator is not JSON; set it to a JSON list of PEM certificates';
  }
  if (value === '') return [];
  if (!Array.isArray(value) || !value.every((item) => typeof item === 'string')) {
    return 'tls-ca-chain from s3-integrator is not a JSON list of PEM certificates';
  }
  if (!value.every((pem) => PEM.test(pem))) return 'tls-ca-chain from s3-integrator holds an entry that is not a PEM certificate';
  return value;
}
