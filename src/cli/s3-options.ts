// S3 settings the way the AWS CLI finds them: the location as s3://bucket/prefix, the endpoint and region from flags or
// AWS_ENDPOINT_URL_S3 / AWS_ENDPOINT_URL / AWS_REGION, and credentials only from AWS_ACCESS_KEY_ID and
// AWS_SECRET_ACCESS_KEY — never from a flag, so they stay out of shell history and `ps`.
import { readFileSync } from 'node:fs';
import { parseUriStyle, resolveAddressing, URI_STYLE_VALUES } from '../store/addressing.ts';
import { parseCaChain } from '../store/settings.ts';
import { parseImmutability } from '../store/immutability.ts';
import type { S3Settings } from '../store/settings.ts';
import type { OptionTable, Values } from './usage.ts';
import { stringValue, UsageError } from './usage.ts';

export const s3Options: OptionTable = {
  's3-url': { type: 'string', placeholder: 's3://<bucket>[/<prefix>]', description: 'where backups live: the bucket and an optional key prefix (required)', env: ['KFU_S3_URL'] },
  endpoint: { type: 'string', placeholder: '<url>', description: 'S3 endpoint for MinIO, Ceph RGW and other S3-compatible stores', default: 'AWS S3 of the region', env: ['AWS_ENDPOINT_URL_S3', 'AWS_ENDPOINT_URL'] },
  region: { type: 'string', placeholder: '<region>', description: 'S3 region', default: 'us-east-1', env: ['AWS_REGION', 'AWS_DEFAULT_REGION'] },
  'uri-style': { type: 'string', placeholder: '<style>', description: 'path (<endpoint>/<bucket>), host or virtual (<bucket>.<endpoint>), or auto: host for AWS, path for any other endpoint', default: 'auto' },
  'path-style': { type: 'boolean', description: 'the same as --uri-style path' },
  immutability: { type: 'string', placeholder: '<duration> [governance]', description: 'immutable backups with S3 Object Lock: e.g. 30d (COMPLIANCE) or 30d governance; every object a backup needs is retained that long, and prune keeps a retained backup and says when it can go (the bucket must have Object Lock)', default: 'off', env: ['KFU_IMMUTABILITY'] },
  'ca-file': { type: 'string', placeholder: '<path>', description: 'PEM file of CA certificates to trust for the endpoint, besides the system ones', env: ['AWS_CA_BUNDLE'] },
};

const BUCKET = /^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/;

/** The first environment variable of `names` that is set and not empty. */
export function fromEnv(env: NodeJS.ProcessEnv, names: readonly string[] = []): string | undefined {
  for (const name of names) {
    const value = env[name];
    if (value !== undefined && value.trim() !== '') return value.trim();
  }
  return undefined;
}

export function parseS3Url(text: string): { bucket: string; path: string } {
  const match = /^s3:\/\/([^/]+)(?:\/(.*))?$/.exec(text.trim());
  if (!match) throw new UsageError(`--s3-url must look like s3://<bucket>/<prefix>, not "${text}".`);
  const bucket = match[1]!;
  if (!BUCKET.test(bucket) || bucket.includes('..')) throw new UsageError(`"${bucket}" in --s3-url is not a valid S3 bucket name.`);
  const path = (match[2] ?? '').replace(/^\/+|\/+$/g, '');
  if (path.includes('//')) throw new UsageError(`The prefix "${path}" in --s3-url has an empty segment ("//").`);
  return { bucket, path };
}

export function s3SettingsFrom(values: Values, env: NodeJS.ProcessEnv): S3Settings {
  const url = stringValue(values, 's3-url') ?? fromEnv(env, s3Options['s3-url']!.env);
  if (!url) throw new UsageError('--s3-url s3://<bucket>/<prefix> is required (or set KFU_S3_URL).');
  const { bucket, path } = parseS3Url(url);
  const accessKey = fromEnv(env, ['AWS_ACCESS_KEY_ID']);
  const secretKey = fromEnv(env, ['AWS_SECRET_ACCESS_KEY']);
  if (!accessKey || !secretKey) {
    const missing = [!accessKey && 'AWS_ACCESS_KEY_ID', !secretKey && 'AWS_SECRET_ACCESS_KEY'].filter(Boolean).join(' and ');
    throw new UsageError(`S3 credentials come from the environment: set ${missing}.`);
  }
  const region = stringValue(values, 'region') ?? fromEnv(env, s3Options.region!.env) ?? 'us-east-1';
  if (!/^[A-Za-z0-9-]{1,64}$/.test(region)) throw new UsageError(`"${region}" is not an S3 region name.`);
  const styleText = values['path-style'] === true ? 'path' : stringValue(values, 'uri-style');
  const style = parseUriStyle(styleText);
  if (!style) throw new UsageError(`--uri-style must be one of ${URI_STYLE_VALUES}, not "${styleText}".`);
  const endpointText = stringValue(values, 'endpoint') ?? fromEnv(env, s3Options.endpoint!.env);
  let endpoint: string | undefined;
  if (endpointText !== undefined) {
    let parsed: URL | undefined;
    try {
      parsed = new URL(endpointText);
    } catch {
      parsed = undefined;
    }
    if (!parsed || !['http:', 'https:'].includes(parsed.protocol)) throw new UsageError(`The S3 endpoint "${endpointText.replace(/\/\/[^@/]*@/, '//')}" is not an http(s) URL.`);
    if (parsed.username || parsed.password) throw new UsageError('The S3 endpoint must not carry credentials; set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY instead.');
    endpoint = parsed.toString().replace(/\/$/, '');
  }
  // The charm's rule (store/addressing.ts), so the CLI reads the bucket the charm wrote the same way.
  const addressing = resolveAddressing({ endpoint, region, style });
  const settings: S3Settings = { accessKey, secretKey, bucket, path, region, uriStyle: addressing.uriStyle };
  if (addressing.endpoint) settings.endpoint = addressing.endpoint;
  const caFile = stringValue(values, 'ca-file') ?? fromEnv(env, s3Options['ca-file']!.env);
  if (caFile !== undefined) settings.tlsCaChain = readCaFile(caFile);
  const immutability = parseImmutability(stringValue(values, 'immutability') ?? fromEnv(env, s3Options.immutability!.env), '--immutability');
  if (!immutability.ok) throw new UsageError(immutability.problem);
  if (immutability.immutability) settings.immutability = immutability.immutability;
  return settings;
}

function readCaFile(path: string): string[] {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch {
    throw new UsageError(`The CA file ${path} cannot be read.`);
  }
  const pems = text.match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g) ?? [];
  const checked = parseCaChain(JSON.stringify(pems));
  if (typeof checked === 'string' || checked.length === 0) throw new UsageError(`The CA file ${path} holds no PEM certificate.`);
  return checked;
}

