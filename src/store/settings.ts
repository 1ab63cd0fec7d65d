// S3 settings from s3-integrator, on both tracks of the `s3` interface (juju.md): what the requirer asks for,
// and how the provider's answer (plain keys on track 1, `secret-extra` on track 2) becomes validated S3Settings.
import { z } from 'zod';

export const S3_ENDPOINT = 's3-credentials';
export const S3_LIB_VERSION = '1.0';

export interface S3Settings {
  accessKey: string;
  secretKey: string;
  bucket: string;
  /** key prefix inside the bucket, without leading or trailing slashes ('' for the bucket root) */
  path: string;
  /** absent for AWS itself */
  endpoint?: string;
  region: string;
  uriStyle: 'path' | 'host';
  /** PEM certificates to trust for the endpoint, in addition to the system ones */
  tlsCaChain?: string[];
  storageClass?: string;
}

/** What the relation currently gives: the shape of the status and of an action's "S3 is not ready" failure. */
export type S3Readiness =
  | { state: 'no-relation' }
  | { state: 'waiting'; message: string }
  | { state: 'invalid'; problem: string }
  | { state: 'ready'; settings: S3Settings };

/** What our leader writes into its application databag: understood by both tracks of s3-integrator. */
export function requirerRequest(relationId: string, wanted: { bucket: string; path: string }): Record<string, string> {
  const number = relationId.split(':')[1] ?? relationId;
  return {
    bucket: wanted.bucket || `relation-${number}`,
    path: wanted.path,
    'lib-version': S3_LIB_VERSION,
    'requested-secrets': JSON.stringify(['access-key', 'secret-key']),
  };
}

/** s3-integrator sends JSON-encoded values on some versions and raw strings on others. */
export function decodeValue(raw: string): unknown {
  try {
    return JSON.parse(raw);
  } catch {
    return raw;
  }
}

function asText(raw: string | undefined): string | undefined {
  if (raw === undefined) return undefined;
  const value = decodeValue(raw);
  if (typeof value === 'string') return value.trim();
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  return undefined;
}

const BUCKET_NAME = /^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/;
const PEM = /-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/;

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
});

/** Keys the provider writes once it has answered; a databag with none of them means "not yet". */
const ANSWER_KEYS = ['access-key', 'secret-key', 'secret-extra', 'endpoint', 'bucket', 'region', 'tls-ca-chain'];

export interface ProviderAnswer {
  /** the provider application's databag */
  databag: Record<string, string>;
  /** the content of the `secret-extra` secret (track 2), when there is one and it could be read */
  secret?: Record<string, string>;
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
  // A value that decodes to a list or a map where text is expected is garbage, not "unset".
  for (const key of ['access-key', 'secret-key', 'bucket', 'endpoint', 'region', 'path', 's3-uri-style', 'storage-class'] as const) {
    if (bag[key] !== undefined && asText(bag[key]) === undefined) return invalid(`${key} from s3-integrator is not a plain value`);
  }
  if (!ANSWER_KEYS.some((key) => bag[key as keyof typeof bag] !== undefined)) {
    return { state: 'waiting', message: 'waiting for s3-integrator to send credentials' };
  }
  const fromSecret = answer.secret ?? {};
  const accessKey = bag['secret-extra'] !== undefined ? asText(fromSecret['access-key']) : asText(bag['access-key']);
  const secretKey = bag['secret-extra'] !== undefined ? asText(fromSecret['secret-key']) : asText(bag['secret-key']);
  const where = bag['secret-extra'] !== undefined ? "s3-integrator's credentials secret" : 's3-integrator';
  if (!accessKey && !secretKey) {
    if (bag['secret-extra'] === undefined && bag['access-key'] === undefined && bag['secret-key'] === undefined && !bag.endpoint && !bag.bucket) {
      return { state: 'waiting', message: 'waiting for s3-integrator to send credentials' };
    }
    return invalid(`${where} has no access-key and secret-key; set them with the sync-s3-credentials action of s3-integrator`);
  }
  if (!accessKey) return invalid(`${where} has no access-key; set it with the sync-s3-credentials action of s3-integrator`);
  if (!secretKey) return invalid(`${where} has no secret-key; set it with the sync-s3-credentials action of s3-integrator`);

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

  const style = asText(bag['s3-uri-style']) || 'path';
  if (style !== 'path' && style !== 'host') return invalid(`s3-uri-style "${style.slice(0, 40)}" is neither "path" nor "host"; fix it on s3-integrator`);

  const rawPath = bag.path !== undefined ? asText(bag.path) : defaults.path;
  if (rawPath === undefined) return invalid('the S3 path from s3-integrator is not a string');
  const path = rawPath.replace(/^\/+|\/+$/g, '');
  if (path.includes('//') || /[\u0000-\u001f]/.test(path)) return invalid(`the S3 path "${path.slice(0, 70)}" is not a valid key prefix; fix the path option of s3-integrator`);

  const settings: S3Settings = { accessKey, secretKey, bucket, path, region, uriStyle: style };
  if (endpoint) settings.endpoint = endpoint;
  const storageClass = asText(bag['storage-class']);
  if (storageClass) settings.storageClass = storageClass;

  if (bag['tls-ca-chain'] !== undefined && bag['tls-ca-chain'].trim() !== '') {
    const chain = parseCaChain(bag['tls-ca-chain']);
    if (typeof chain === 'string') return invalid(chain);
    if (chain.length > 0) settings.tlsCaChain = chain;
  }
  return { state: 'ready', settings };
}

/** A JSON list of PEM certificates, or the one-sentence problem with it. */
export function parseCaChain(raw: string): string[] | string {
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch {
    return 'tls-ca-chain from s3-integrator is not JSON; set it to a JSON list of PEM certificates';
  }
  if (!Array.isArray(value) || !value.every((item) => typeof item === 'string')) {
    return 'tls-ca-chain from s3-integrator is not a JSON list of PEM certificates';
  }
  if (!value.every((pem) => PEM.test(pem))) return 'tls-ca-chain from s3-integrator holds an entry that is not a PEM certificate';
  return value;
}
