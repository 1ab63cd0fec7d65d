// The one addressing rule for every S3 client of this project (the AWS SDK client, the status probe, rclone in the
// volume movers and in the control-plane Jobs, the CLI): which endpoint a request goes to, and whether the bucket is
// a host label (`<bucket>.<endpoint>`, "virtual-hosted") or the first path segment (`<endpoint>/<bucket>`).
//
// Why this rule: Canonical's guides point s3-integrator at AWS with `endpoint=https://s3.amazonaws.com` and a region,
// and no `s3-uri-style`; their consumers default to host style and build the regional endpoint from the region
// (canonical/postgresql-operator src/backups.py: `_retrieve_s3_parameters` defaults `s3-uri-style` to "host",
// `_construct_endpoint` swaps the global AWS endpoint for the region's). Path style against s3.amazonaws.com is
// answered with 301 PermanentRedirect for every bucket outside us-east-1. Other stores (MinIO, Ceph RGW, s3rver)
// are addressed by IP or by a name without per-bucket DNS, where only path style works.
import { isIP } from 'node:net';

export type UriStyle = 'path' | 'host';

/**
 * What s3-uri-style (or the CLI's --uri-style) may say. boto's `addressing_style` calls host style "virtual" and
 * the rule below "auto"; s3-integrator passes its option through unchecked (its config.yaml has no allowed values),
 * so both spellings reach us. Empty means auto. Undefined: a value we do not know.
 */
export function parseUriStyle(text: string | undefined): UriStyle | 'auto' | undefined {
  const value = (text ?? '').trim().toLowerCase();
  if (value === '' || value === 'auto') return 'auto';
  if (value === 'path') return 'path';
  if (value === 'host' || value === 'virtual') return 'host';
  return undefined;
}

export const URI_STYLE_VALUES = '"path", "host", "virtual" or "auto"';

function hostnameOf(endpoint: string): string | undefined {
  try {
    return new URL(endpoint).hostname.replace(/^\[|\]$/g, '').toLowerCase();
  } catch {
    return undefined;
  }
}

/** An endpoint of AWS S3 itself (any of its host names); no endpoint at all means AWS too. */
export function isAwsEndpoint(endpoint: string | undefined): boolean {
  if (endpoint === undefined) return true;
  const host = hostnameOf(endpoint);
  return host !== undefined && /(^|\.)amazonaws\.com(\.cn)?$/.test(host);
}

// The plain S3 service names AWS documents: the global `s3.amazonaws.com`, the regional `s3.<region>.amazonaws.com`
// and the legacy dash form `s3-<region>.amazonaws.com` (China: `.amazonaws.com.cn`). FIPS, dual-stack, access-point
// and other special names are kept as they are given.
const PLAIN_AWS_S3_HOST = /^s3(?:[.-][a-z0-9-]+)?\.amazonaws\.com(?:\.cn)?$/;

/** AWS's regional S3 endpoint for a region (China's regions live under amazonaws.com.cn). */
export function awsRegionalEndpoint(region: string): string {
  return `https://s3.${region}.amazonaws.com${region.startsWith('cn-') ? '.cn' : ''}`;
}

/** The endpoint requests go to: the given one, or for AWS's plain S3 names the regional endpoint of `region`. */
export function effectiveEndpoint(settings: { endpoint?: string | undefined; region: string }): string {
  return settings.endpoint ?? awsRegionalEndpoint(settings.region);
}

/**
 * Applies the rule to what s3-integrator (or the CLI) said:
 * - an endpoint that is one of AWS's plain S3 names over https is dropped: every client then uses the region's own
 *   endpoint (the SDK derives it, and so follows a region redirect to the bucket's region);
 * - an explicit "path" or "host" is kept, except that an IP address cannot carry a bucket label (path);
 * - "auto" (or nothing) is host style for AWS and path style for every other endpoint.
 */
export function resolveAddressing(input: { endpoint?: string | undefined; region: string; style: UriStyle | 'auto' }): { endpoint?: string; uriStyle: UriStyle } {
  const host = input.endpoint === undefined ? undefined : hostnameOf(input.endpoint);
  const plainAws = input.endpoint !== undefined && host !== undefined && PLAIN_AWS_S3_HOST.test(host) && input.endpoint.startsWith('https:') && new URL(input.endpoint).pathname.replace(/\/+$/, '') === '';
  const endpoint = plainAws ? undefined : input.endpoint;
  const byIp = host !== undefined && isIP(host) !== 0;
  const style: UriStyle = byIp ? 'path' : input.style === 'auto' ? (isAwsEndpoint(endpoint) ? 'host' : 'path') : input.style;
  return { ...(endpoint === undefined ? {} : { endpoint }), uriStyle: style };
}

/**
 * Whether a request for `bucket` really goes host style: a dotted bucket over TLS stays in the path, as the AWS SDK
 * does (a certificate's wildcard covers one label), and so does any IP endpoint.
 */
export function bucketInHost(settings: { bucket: string; endpoint?: string | undefined; region: string; uriStyle: UriStyle }): boolean {
  if (settings.uriStyle !== 'host') return false;
  const url = new URL(effectiveEndpoint(settings));
  if (isIP(url.hostname.replace(/^\[|\]$/g, '')) !== 0) return false;
  return !(url.protocol === 'https:' && settings.bucket.includes('.'));
}
