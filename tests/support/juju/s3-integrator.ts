// s3-integrator's side of the relation, as each track decides what to write, so a test can run our requirer against
// the provider's real choices instead of a fixed databag:
// - track 1: canonical/s3-integrator src/charm.py `_on_credential_requested` with data-platform-libs
//   lib/charms/data_platform_libs/v0/s3.py `S3Provider._on_relation_changed` (it answers only when `bucket` is
//   *added* to the requirer's databag; the bucket it sends is its own stored one, which is its `bucket` option or else
//   the first bucket any consumer asked for; list options are JSON-dumped, everything else written as is);
// - track 2: canonical/object-storage-integrators s3/src/events/provider.py `reconcile_buckets` (its `bucket` option,
//   which must exist or be creatable, else the bucket each relation asks for, found or created; nothing is written for
//   a relation whose bucket it cannot create or whose name does not match core/domain.py BUCKET_REGEX), with the keys
//   in a secret behind `secret-extra` (lib/charms/data_platform_libs/v0/data_interfaces.py).
import { CreateBucketCommand, HeadBucketCommand, S3Client } from '@aws-sdk/client-s3';
import type { Databag, FakeJujuState } from './state.ts';
import { TRACK2_SECRET } from './scenarios.ts';

/** s3_lib.py LIBAPI.LIBPATCH of track 2's library. */
const TRACK2_LIB_VERSION = '1.0';

/** s3-integrator's config options that reach the relation (both tracks' config.yaml), with its keys. */
export interface S3IntegratorConfig {
  endpoint: string;
  accessKey: string;
  secretKey: string;
  bucket?: string;
  region?: string;
  path?: string;
  's3-uri-style'?: string;
  'storage-class'?: string;
  /**
   * PEM certificates (the option itself is base64 of a PEM file; the charm parses it into this list), or '' for the
   * option reset, which track 1 still hands to update_connection_info and so writes JSON-dumped as `""`
   */
  'tls-ca-chain'?: string[] | '';
}

const OPTIONAL = ['region', 'path', 's3-uri-style', 'storage-class'] as const;

/** Track 1: a provider application with the state charm.py keeps in its peer databag. */
export class Track1Integrator {
  /** charm.py's `app` peer key "bucket": the bucket option, or the first bucket any consumer asked for */
  storedBucket: string | undefined;
  /** the requirer databags seen per relation, for the lib's added/changed diff */
  private readonly lastSeen = new Map<string, Databag>();

  constructor(readonly config: S3IntegratorConfig) {
    this.storedBucket = config.bucket || undefined;
  }

  /** Another consumer (postgresql, mysql…) integrated earlier and asked for `bucket`. */
  consumerAsked(relationId: string, bucket: string): void {
    this.react(relationId, { bucket });
  }

  /**
   * What the provider writes into its application databag after our relation-changed, or undefined when it does not
   * react (no `bucket` added since it last looked). Applied to the fake state's remote databag.
   */
  answer(state: FakeJujuState, relationId: string): Databag | undefined {
    const relation = state.relations.find((r) => r.id === relationId)!;
    const written = this.react(relationId, relation.localAppData);
    if (written) Object.assign(relation.remoteAppData, written);
    return written;
  }

  private react(relationId: string, requirer: Databag): Databag | undefined {
    const before = this.lastSeen.get(relationId) ?? {};
    this.lastSeen.set(relationId, { ...requirer });
    if (before.bucket !== undefined || requirer.bucket === undefined) return undefined; // "bucket" not added
    const bucket = this.storedBucket ?? requirer.bucket;
    this.storedBucket = bucket;
    // An empty option is not written (s3-integrator src/charm.py _on_config_changed skips "" values): AWS has no endpoint.
    const answer: Databag = { 'access-key': this.config.accessKey, 'secret-key': this.config.secretKey, ...(this.config.endpoint ? { endpoint: this.config.endpoint } : {}), bucket };
    for (const option of OPTIONAL) if (this.config[option]) answer[option] = this.config[option]!;
    if (this.config['tls-ca-chain'] !== undefined) answer['tls-ca-chain'] = JSON.stringify(this.config['tls-ca-chain']);
    return answer;
  }

  /** What a fresh track 1 with this config writes for the first consumer that asks for `requestedBucket`. */
  static firstAnswer(config: S3IntegratorConfig, requestedBucket: string): Databag {
    return new Track1Integrator(config).react('first', { bucket: requestedBucket })!;
  }
}

/** object-storage-integrators s3/src/core/domain.py BUCKET_REGEX (an empty name is allowed there, not asked for here). */
const TRACK2_BUCKET = /^(?!xn--)(?!.+-s3alias$)[a-z0-9][a-z0-9-]{1,61}[a-z0-9]$/;

/** Track 2: reconcile_buckets against a real S3 endpoint (it creates buckets with the keys it was given). */
export class Track2Integrator {
  constructor(readonly config: S3IntegratorConfig, private readonly options: { mayCreateBuckets: boolean } = { mayCreateBuckets: true }) {}

  private client(): S3Client {
    return new S3Client({
      endpoint: this.config.endpoint,
      region: this.config.region || 'us-east-1',
      forcePathStyle: true,
      credentials: { accessKeyId: this.config.accessKey, secretAccessKey: this.config.secretKey },
    });
  }

  /** ensure_bucket: found, or created when allowed and verified. */
  private async ensureBucket(client: S3Client, bucket: string): Promise<boolean> {
    try {
      await client.send(new HeadBucketCommand({ Bucket: bucket }));
      return true;
    } catch {
      if (!this.options.mayCreateBuckets) return false;
      try {
        await client.send(new CreateBucketCommand({ Bucket: bucket }));
        await client.send(new HeadBucketCommand({ Bucket: bucket }));
        return true;
      } catch {
        return false;
      }
    }
  }

  /**
   * relation-created on the provider side: the library writes its version first, before anything else
   * (object-storage-integrators s3/src/s3_lib.py S3ProviderEventHandlers._on_relation_created_event, `lib-version`:
   * `f"{LIBAPI}.{LIBPATCH}"`, 1.0), which is how a requirer tells track 2 from track 1.
   */
  relationCreated(state: FakeJujuState, relationId: string): Databag {
    const relation = state.relations.find((r) => r.id === relationId)!;
    Object.assign(relation.remoteAppData, { 'lib-version': TRACK2_LIB_VERSION });
    return { 'lib-version': TRACK2_LIB_VERSION };
  }

  /** What it writes for a bucket it found or created: the databag, and the keys' secret content. */
  static databag(config: S3IntegratorConfig, bucket: string, requestedPath = ''): { databag: Databag; secret: Databag } {
    const data: Databag = config.endpoint ? { endpoint: config.endpoint } : {};
    for (const option of OPTIONAL) if (config[option]) data[option] = config[option]!;
    if (config['tls-ca-chain'] !== undefined) data['tls-ca-chain'] = JSON.stringify(config['tls-ca-chain']);
    data.path = config.path || requestedPath || '';
    if (data.path === '') delete data.path;
    data.bucket = bucket;
    return { databag: { ...data, 'lib-version': TRACK2_LIB_VERSION, 'secret-extra': TRACK2_SECRET }, secret: { 'access-key': config.accessKey, 'secret-key': config.secretKey } };
  }

  /** Reconciles our relation: writes its databag and the keys' secret, or writes nothing. Returns what it wrote. */
  async answer(state: FakeJujuState, relationId: string): Promise<Databag | undefined> {
    const relation = state.relations.find((r) => r.id === relationId)!;
    const request = relation.localAppData;
    // The provider reads nothing of a requirer that has not written `bucket` or `lib-version` yet.
    if (request.bucket === undefined && request['lib-version'] === undefined) return undefined;
    const client = this.client();
    try {
      let bucket: string;
      if (this.config.bucket) {
        if (!(await this.ensureBucket(client, this.config.bucket))) return undefined;
        bucket = this.config.bucket;
      } else {
        if (!request.bucket || !TRACK2_BUCKET.test(request.bucket)) return undefined;
        if (!(await this.ensureBucket(client, request.bucket))) return undefined;
        bucket = request.bucket;
      }
      const { databag, secret } = Track2Integrator.databag(this.config, bucket, request.path);
      state.secrets[TRACK2_SECRET] = { revisions: [secret] };
      Object.assign(relation.remoteAppData, databag);
      return databag;
    } finally {
      client.destroy();
    }
  }
}
