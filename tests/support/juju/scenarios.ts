// Ready-made pieces of state: an s3-integrator relation on either track, and a secret.
import type { Databag, FakeJujuState, FakeRelation } from './state.ts';

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

/** Track 1: credentials and settings as plain strings in the provider's application databag. */
export function track1Data(s3: { endpoint: string; accessKeyId: string; secretAccessKey: string }, bucket: string, extra: Databag = {}): Databag {
  return {
    'access-key': s3.accessKeyId,
    'secret-key': s3.secretAccessKey,
    bucket,
    endpoint: s3.endpoint,
    region: 'us-east-1',
    path: 'backups',
    's3-uri-style': 'path',
    ...extra,
  };
}

export const TRACK2_SECRET = 'secret:cta0s3integrator0000001';

/** Track 2: plain fields in the databag, credentials behind `secret-extra`. */
export function track2(state: FakeJujuState, s3: { endpoint: string; accessKeyId: string; secretAccessKey: string }, bucket: string): FakeJujuState {
  state.secrets[TRACK2_SECRET] = { revisions: [{ 'access-key': s3.accessKeyId, 'secret-key': s3.secretAccessKey }] };
  state.relations = [
    s3Relation({ 'lib-version': '1.0', bucket, endpoint: s3.endpoint, region: 'us-east-1', path: 'backups', 's3-uri-style': 'path', 'secret-extra': TRACK2_SECRET }),
  ];
  return state;
}
