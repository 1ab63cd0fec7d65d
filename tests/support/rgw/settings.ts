// The product's S3Settings for a running radosgw (tests/support/rgw/server.ts): path style, as s3-integrator gives
// an IP endpoint (src/store/addressing.ts), and the zonegroup's name as the region, which radosgw's SigV4 check accepts
// (upstream: github.com/ceph/ceph src/rgw/rgw_auth_s3.cc). Simulates nothing.
import type { S3Settings } from '../../../src/store/settings.ts';
import type { RgwHandle } from './server.ts';

export function rgwSettings(rgw: Pick<RgwHandle, 'endpoint' | 'region' | 'accessKeyId' | 'secretAccessKey'>, bucket: string, path = ''): S3Settings {
  return { endpoint: rgw.endpoint, region: rgw.region, accessKey: rgw.accessKeyId, secretKey: rgw.secretAccessKey, bucket, path, uriStyle: 'path' };
}
