// The backup store as an rclone remote, for every Job that reaches it. rclone reads a whole remote definition from
// RCLONE_CONFIG_<REMOTE>_<OPTION> variables (rclone/rclone fs/config/configmap), so the credentials reach a container
// only as Secret-backed environment variables: never in args, never in the Job spec.

/** The store as a Job sees it: the endpoint is the one reachable from the cluster (store/addressing.ts). */
export interface StoreEndpoint {
  endpoint: string;
  region?: string | undefined;
  accessKey: string;
  secretKey: string;
  /** 'path' (default) or 'host' (virtual-hosted buckets) */
  uriStyle?: string | undefined;
  /** storage class of the objects rclone uploads (s3-integrator's storage-class) */
  storageClass?: string | undefined;
}

export interface RemoteEnvironment {
  /** the credentials: these go into the Secret */
  secret: Record<string, string>;
  /** everything else about the remote */
  plain: Record<string, string>;
}

/** `name` is the remote's name as scripts use it (`kfustore:`, `store:`). */
export function storeRemote(name: string, s3: StoreEndpoint): RemoteEnvironment {
  const at = `RCLONE_CONFIG_${name.toUpperCase()}_`;
  return {
    secret: { [`${at}ACCESS_KEY_ID`]: s3.accessKey, [`${at}SECRET_ACCESS_KEY`]: s3.secretKey },
    plain: {
      [`${at}TYPE`]: 's3',
      [`${at}PROVIDER`]: 'Other',
      [`${at}ENV_AUTH`]: 'false',
      [`${at}ENDPOINT`]: s3.endpoint,
      ...(s3.region ? { [`${at}REGION`]: s3.region } : {}),
      [`${at}FORCE_PATH_STYLE`]: String(s3.uriStyle !== 'host'),
      // The bucket exists (s3-integrator names it, the charm checked it); creating it needs rights a backup user
      // should not have.
      [`${at}NO_CHECK_BUCKET`]: 'true',
      // rclone's s3 option storage_class (--s3-storage-class): the class of every object it uploads.
      ...(s3.storageClass ? { [`${at}STORAGE_CLASS`]: s3.storageClass } : {}),
    },
  };
}
