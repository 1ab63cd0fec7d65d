// Flags of backup and snapshot-profiles that choose what is state, matching the charm's config options.
import type { MoverConfig } from '../../volumes/steps.ts';
import type { OptionTable, Values } from '../usage.ts';
import { positiveInteger, stringValue, UsageError } from '../usage.ts';
import { DEFAULT_MOVER_RESOURCES, parseMoverResources } from '../../volumes/resources.ts';
import { DEFAULT_START_TIMEOUT_SECONDS } from '../../volumes/settings.ts';
import { ENGINE_NAMES, NODE_GATEWAY_IMAGE, parseEngineName, PINNED_IMAGES, RCLONE_IMAGE, type EngineName } from '../../volumes/engine.ts';

export const selectionOptions: OptionTable = {
  'profile-namespace-selector': {
    type: 'string', placeholder: '<selector>', default: 'app.kubernetes.io/part-of=kubeflow-profile',
    description: 'label selector that marks profile namespaces, besides the namespaces Profiles own',
  },
  'include-resources': { type: 'string', placeholder: '<list>', description: 'only these resources (e.g. notebooks.kubeflow.org,persistentvolumeclaims)', default: 'every state kind' },
  'exclude-resources': { type: 'string', placeholder: '<list>', description: 'leave these resources out (e.g. secrets)', default: 'none' },
  'protected-crd-groups': {
    type: 'string', placeholder: '<list>', default: 'kubeflow.org,tensorboard.kubeflow.org,serving.kserve.io',
    description: 'API groups whose CRDs are recorded (versions, storedVersions) in the manifest and checked before an upgrade',
  },
};

export const moverOptions: OptionTable = {
  'mover-engine': { type: 'string', placeholder: 'restic|rclone', description: 'how PVC data is stored: per-namespace restic repositories, encrypted under the encryption key (restic), or plain files (rclone)', default: 'restic' },
  'mover-image': {
    type: 'string', placeholder: '<image>', default: `the engine's own: ${ENGINE_NAMES.map((name) => `${PINNED_IMAGES[name]} (${name})`).join(', ')}`,
    description: 'image of the --mover-engine\'s Jobs; Jobs of the other engine (restoring or checking the other kind of backup) run its own',
  },
  'mover-concurrency': { type: 'string', placeholder: '<n>', description: 'volume mover Jobs running at once', default: '2' },
  'mover-start-timeout': { type: 'string', placeholder: '<seconds>', description: 'how long a mover Pod may take to start running before the run fails naming why (image pull, scheduler, quota)', default: '300' },
  'mover-resources': { type: 'string', placeholder: '<list>', description: 'CPU and memory of each mover, set as requests and limits (e.g. cpu=500m,memory=512Mi; empty for none)', default: DEFAULT_MOVER_RESOURCES },
  'volume-snapshot-class': {
    type: 'string', placeholder: '<name>', default: 'each CSI driver\'s default class',
    description: 'VolumeSnapshotClass of the snapshots PVCs are read from (in --job-namespace, point in time); a PVC whose driver has none is copied live',
  },
  'restore-gateway-image': { type: 'string', placeholder: '<image>', description: `image with Node.js 24 of a restic restore's gateway (default ${NODE_GATEWAY_IMAGE}), for a registry mirror` },
  'gateway-image': { type: 'string', placeholder: '<image>', description: 'image with rclone of the movers\' gateway, which runs in --job-namespace and alone holds the bucket credentials', default: RCLONE_IMAGE },
};

export const DEFAULT_PROTECTED_GROUPS = 'kubeflow.org,tensorboard.kubeflow.org,serving.kserve.io';
export const DEFAULT_SELECTOR = 'app.kubernetes.io/part-of=kubeflow-profile';

/** The --mover-* flags as the shared volume steps take them (src/volumes/steps.ts). */
export function moverConfigFrom(values: Values): MoverConfig {
  return {
    // unset: '' , the engine's pinned image (src/volumes/engine.ts imageOf)
    image: stringValue(values, 'mover-image') ?? '',
    concurrency: positiveInteger(values, 'mover-concurrency', 2, 64),
    startTimeoutSeconds: positiveInteger(values, 'mover-start-timeout', DEFAULT_START_TIMEOUT_SECONDS, 86_400),
    resources: moverResources(values),
    engine: moverEngine(values),
    snapshotClass: stringValue(values, 'volume-snapshot-class') ?? '',
    gateway: {
      image: stringValue(values, 'gateway-image') ?? RCLONE_IMAGE, imageSetting: '--gateway-image',
      restoreImage: stringValue(values, 'restore-gateway-image'), restoreImageSetting: '--restore-gateway-image',
    },
  };
}

function moverEngine(values: Values): EngineName {
  try {
    return parseEngineName(stringValue(values, 'mover-engine') ?? 'restic', '--mover-engine');
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
}

function moverResources(values: Values): string {
  const text = stringValue(values, 'mover-resources') ?? DEFAULT_MOVER_RESOURCES;
  try {
    parseMoverResources(text);
  } catch (error) {
    throw new UsageError(`--mover-resources must be a list like ${DEFAULT_MOVER_RESOURCES}: ${(error as Error).message}.`);
  }
  return text;
}
