// Ready-made pieces of state: an s3-integrator relation on either track, and a secret.
import type { Databag, FakeJujuState, FakeRelation } from './state.ts';
import { Track1Integrator, Track2Integrator, type S3IntegratorConfig } from './s3-integrator.ts';

export const S3_RELATION_ID = 's3-credentials:7';

export function s3Relation(remoteAppData: Databag = {}, localAppData: Databag = {}): FakeRelation {
  return {
    id: S3_RELATION_ID,
    endpoint: 's3-credentials',
    remoteApp: 's3-integrator',
    remoteUnits: ['s3-integrator/0'],
    localAppData,
    localUnitData: {},
    remoteAppData,
    remoteUnitsData: { 's3-integrator/0': {} },
  };
}

/** The s3-integrator options a test sets besides the keys (its config.yaml), as track 1 or 2 takes them. */
export type IntegratorOptions = Omit<S3IntegratorConfig, 'endpoint' | 'accessKey' | 'secretKey'> & { endpoint?: string };

/**
 * Track 1's databag for a consumer asking for `bucket`, as the provider model writes it (s3-integrator.ts
 * Track1Integrator, from canonical/s3-integrator src/charm.py): region us-east-1, path `backups` and path style unless
 * `options` say otherwise. `malformed` is laid over the answer for the cases no provider writes (a test of the
 * charm's robustness), and says so at the call.
 */
export function track1Data(s3: { endpoint: string; accessKeyId: string; secretAccessKey: string }, bucket: string, options: IntegratorOptions = {}, malformed: Databag = {}): Databag {
  const config: S3IntegratorConfig = { endpoint: s3.endpoint, accessKey: s3.accessKeyId, secretKey: s3.secretAccessKey, region: 'us-east-1', path: 'backups', 's3-uri-style': 'path', ...options };
  return { ...Track1Integrator.firstAnswer(config, bucket), ...malformed };
}

export const TRACK2_SECRET = 'secret:cta0s3integrator0000001';

/** Track 2 after it found `bucket`: the databag and the keys' secret as the provider model writes them (Track2Integrator). */
export function track2(state: FakeJujuState, s3: { endpoint: string; accessKeyId: string; secretAccessKey: string }, bucket: string): FakeJujuState {
  const { databag, secret } = Track2Integrator.databag({ endpoint: s3.endpoint, accessKey: s3.accessKeyId, secretKey: s3.secretAccessKey, region: 'us-east-1', path: 'backups', 's3-uri-style': 'path' }, bucket);
  state.secrets[TRACK2_SECRET] = { revisions: [secret] };
  state.relations = [s3Relation(databag)];
  return state;
}
