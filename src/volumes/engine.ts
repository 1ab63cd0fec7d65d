// The volume engines: the ways PVC contents are stored in the bucket. Each implements VolumeEngine: plain files copied
// by rclone (./rclone-engine.ts) and per-namespace restic repositories (./restic/engine.ts); ./engines.ts hands out
// the implementation of a name. This module holds what the charm's hooks and the CLI's option parsing need without
// loading a mover: the engines' names, their pinned images (the one place each is written) and how the image of an
// engine's Jobs is chosen.
import type { VolumeEntry } from '../archive/manifest.ts';
import type { KubeClient } from '../kube/client.ts';
import type { KubeObject } from '../kube/types.ts';
import type { BackupStore } from '../store/backup-store.ts';
import type { S3Settings } from '../store/settings.ts';
import type { GatewayRequest } from './gateway-pod.ts';
import type { VolumeKube } from './kube-port.ts';
import type { MoveOperation } from './labels.ts';
import type { GatewayImages, PvcRef, ResticMoveOptions, VolumeProgress, VolumeResult } from './move-types.ts';
export type { GatewayImages } from './move-types.ts';
import type { ResourceList } from './resources.ts';
import type { ReuseTrust } from './reuse.ts';
import type { MoverS3Settings } from './settings.ts';

export const ENGINE_NAMES = ['rclone', 'restic'] as const;
export type EngineName = (typeof ENGINE_NAMES)[number];

/**
 * Each engine's image, official and pinned by tag, so that a backup taken today is restorable by the same mover
 * tomorrow. rclone's (Alpine, busybox) also runs the movers' gateway and the control-plane copies; restic 0.14 is the
 * oldest restic that reads and writes repository format 2.
 */
export const PINNED_IMAGES: Readonly<Record<EngineName, string>> = {
  rclone: 'docker.io/rclone/rclone:1.68.2',
  restic: 'docker.io/restic/restic:0.14.0',
};
export const RCLONE_IMAGE = PINNED_IMAGES.rclone;
/**
 * The restore gateway's image (src/volumes/restic/restore-gateway.ts): the official node image, Alpine with Node.js,
 * npm, yarn and busybox (docker-library/node `24/alpine3.22/Dockerfile`), which runs the gateway's bundle from a
 * ConfigMap. Node 24, as the charm's own code.
 */
export const NODE_GATEWAY_IMAGE = 'docker.io/library/node:24.9.0-alpine3.22';
export const RESTIC_IMAGE = PINNED_IMAGES.restic;

/** The name of an engine as a setting gives it (`volume-mover-engine`, `--mover-engine`), or one sentence naming the setting. */
export function parseEngineName(text: string, setting: string): EngineName {
  const name = ENGINE_NAMES.find((known) => known === text);
  if (!name) throw new Error(`${setting} must be ${ENGINE_NAMES.join(' or ')}, not ${text}.`);
  return name;
}

/** What chooses an engine's image: the configured engine (unset: rclone) and `volume-mover-image` ('' or unset: none). */
export interface ImageConfig {
  engine?: EngineName | undefined;
  image?: string | undefined;
}

/**
 * The image of `engine`'s Jobs under `config`, one rule for every engine:
 * - `volume-mover-image` names the image of the configured engine's Jobs only; the other engine (restoring, checking
 *   or pruning data the other kind of backup wrote) runs its pinned image;
 * - unset or empty, the engine's pinned image;
 * - set to another engine's pinned image (the rclone image was volume-mover-image's default before it was empty), the
 *   engine's pinned image too: that image cannot run this engine.
 */
export function imageOf(engine: EngineName, config: ImageConfig): string {
  const configured = config.image?.trim() ?? '';
  if ((config.engine ?? 'rclone') !== engine || configured === '') return PINNED_IMAGES[engine];
  const pinnedElsewhere = ENGINE_NAMES.some((other) => other !== engine && PINNED_IMAGES[other] === configured);
  return pinnedElsewhere ? PINNED_IMAGES[engine] : configured;
}

/** How mover Jobs are run: `volume-mover-*` config of the charm, `--mover-*` flags of the CLI. */
export interface MoverConfig {
  /**
   * `volume-mover-image`, `--mover-image`: the image of the configured engine's Jobs; '' for the engine's pinned image
   * (imageOf)
   */
  image: string;
  concurrency: number;
  /** seconds a mover's Pod may take to start running */
  startTimeoutSeconds: number;
  /** requests = limits of each mover, e.g. `cpu=1,memory=1Gi`; '' sets none */
  resources: string;
  /**
   * 'restic' (volume-mover-engine, the charm's and the CLI's default): volume data in per-namespace restic
   * repositories; 'rclone' or unset: plain files
   */
  engine?: EngineName;
  /**
   * where the restic key Job runs (the charm's model namespace, the CLI's --job-namespace): it gives repositories
   * written before the passwords were per namespace their own (src/volumes/restic/rekey.ts), and never runs in a
   * profile namespace
   */
  jobNamespace?: string;
  /**
   * `volume-snapshot-class`, `--volume-snapshot-class`: the VolumeSnapshotClass of a backup's snapshots ('' or unset:
   * each driver's default); a backup reads from snapshots only where the config gives `jobNamespace` (./snapshot)
   */
  snapshotClass?: string | undefined;
  /**
   * how a restore fills the PVCs it creates: 'handover' (the default where `jobNamespace` is set), each filled in a
   * claim of `jobNamespace` and its volume handed to the PVC (src/volumes/rebind.ts), so no mover runs in a profile
   * namespace; 'in-namespace', a mover in the PVC's namespace mounts it, for a cluster that refuses the hand-over
   */
  restoreVolumesBy?: 'handover' | 'in-namespace';
  /**
   * an image with rclone for the movers' gateway (the charm's control-plane-rclone-image), and the setting that names
   * it; the gateway runs in `jobNamespace`, so that no bucket credential enters a profile namespace
   */
  gateway?: GatewayImages;
}

/** What a volume step (./steps.ts) gives its engine to prepare a run: the cluster, the location, the config, the trust. */
export interface StepContext {
  kube: KubeClient;
  s3: S3Settings;
  config: MoverConfig;
  /** the encryption key, and which earlier backups a backup may start from */
  trust: ReuseTrust;
  backupId: string;
  pvcs: ReadonlyArray<{ namespace: string; name: string }>;
}

/** The engine's part of a backup step: its options of the run, the verb of its progress lines, each PVC's manifest entry. */
export interface BackupPreparation {
  options: Pick<EngineRunRequest, 'copyFrom' | 'restic'>;
  verb: string;
  entry(result: VolumeResult): Promise<VolumeEntry>;
  /** called once the run is over, whatever happened */
  close(): void;
}

/** A way of storing PVC contents: what its movers run, how a run reaches the bucket, and what each mover reports. */
export interface VolumeEngine {
  readonly name: EngineName;
  /** the image its Jobs run unless volume-mover-image names another (imageOf) */
  readonly defaultImage: string;
  /**
   * its data is encrypted under a password derived from encryption-key: a key the store does not open with yet blocks a
   * backup of volumes (src/charm/restic-key.ts)
   */
  readonly keyed: boolean;
  /** the noun of its run's gateway, for the sentence of one that does not start */
  readonly gatewayNoun: string;
  /** the image of its Jobs under `config` (imageOf) */
  imageFor(config: ImageConfig): string;
  /** whether a backup's entry of a PVC is this engine's data, so that a restore of the PVC runs this engine */
  holds(entry: Pick<VolumeEntry, 'restic'>): boolean;
  /** backup: what this engine needs before its movers run (earlier backups to start from, repositories to open) */
  prepareBackup(context: StepContext & { store: BackupStore }): Promise<BackupPreparation>;
  /** restore: this engine's options of the run filling `context.pvcs`, from the authenticated manifest's `archived` entries */
  prepareRestore(context: StepContext, archived: readonly VolumeEntry[]): Promise<Pick<EngineRunRequest, 'restic'>>;
  /**
   * Opens one run of `operation`: checks the run's options, starts its gateway when the request has one, and returns
   * what builds each namespace's Secret and runs each PVC's mover; the run is closed whatever happens.
   */
  open(kube: VolumeKube, operation: MoveOperation, request: EngineRunRequest): Promise<EngineRun>;
}

/** One run of movers as the orchestration (./mover.ts) has checked it, for the engine to open. */
export interface EngineRunRequest {
  backupId: string;
  pvcs: readonly PvcRef[];
  s3: MoverS3Settings;
  /** the image of the movers; unset, the engine's pinned image */
  image?: string | undefined;
  startTimeoutSeconds: number;
  /** how often a running mover's stats are read */
  progressIntervalMs: number;
  /** a running mover's stats, for the run's one progress gate */
  onCopying: (copying: NonNullable<VolumeProgress['copying']>) => void;
  /** stops every mover: the caller's signal, or the run's first failure */
  signal: AbortSignal;
  /** backup, plain files: `namespace/pvc` → an earlier complete backup holding that PVC (./reuse.ts) */
  copyFrom?: ReadonlyMap<string, string> | undefined;
  /** the restic engine's own options: passwords, parents, pinned snapshots */
  restic?: ResticMoveOptions | undefined;
  /** the run's gateway, through which the movers reach the bucket (./gateway-pod.ts): none, they hold the credentials */
  gateway?: GatewayRequest | undefined;
}

/** What every engine's mover Job of one PVC has: its name, place, Secret, bucket, deadline and resources. */
export interface MoverJobBase {
  name: string;
  /** the namespace of the PVC whose data the Job moves (its repository, its tags, its Secret's access) */
  namespace: string;
  /** the PVC whose data the Job moves */
  pvc: string;
  backupId: string;
  operation: MoveOperation;
  secretName: string;
  s3: MoverS3Settings;
  activeDeadlineSeconds: number;
  ttlSecondsAfterFinished: number;
  resources?: ResourceList | undefined;
  /**
   * a mover that runs outside the PVC's namespace: the Job runs in `namespace` (the model's) and mounts `claim`, made
   * there for it: a backup's claim provisioned from the PVC's snapshot (./snapshot), or a restore's claim filled there
   * and then handed over to the PVC (./rebind.ts); `namespace` and `pvc` above still name the user's PVC, whose data
   * it is. Unset: the Job runs in the PVC's namespace and mounts the PVC.
   */
  mount?: { namespace: string; claim: string } | undefined;
}

/** One PVC for the engine's mover, checked and placed by the orchestration. */
export interface MoverTask {
  pvcRef: PvcRef;
  /** the claim as it was read: a restore's fill mark comes off it once the mover is done */
  pvc: KubeObject;
  /** the node the mover is pinned to, next to a ReadWriteOnce user */
  nodeName?: string | undefined;
  job: MoverJobBase;
  /** the result's fields every engine reports alike */
  base: Pick<VolumeResult, 'namespace' | 'pvc' | 'operation' | 'location'>;
  /** `bucket/prefix/backups/<id>/volumes/<ns>/<pvc>`: where a PVC's plain files lie */
  path: string;
  /** when the PVC's move began (Date.now()) */
  started: number;
}

/** An open run of one engine: each namespace's Secret, each PVC's mover, and the close that stops its gateway. */
export interface EngineRun {
  /** the Secret named `name` of `namespace`'s movers (bucket credentials, or the gateway's access, and passwords) */
  secret(name: string, namespace: string): KubeObject;
  /** whether `namespace`'s first mover must run alone before the others start (it may create the namespace's store) */
  opensAlone(namespace: string): boolean;
  /** runs one PVC's mover to its end: its result, or a throw naming why it failed */
  move(kube: VolumeKube, task: MoverTask): Promise<VolumeResult>;
  /** stops what the run started (its gateway, its bucket client); called once, whatever happened */
  close(): Promise<void>;
}
