// Flags of backup and snapshot-profiles that choose what is state, matching the charm's config options.
import type { MoverConfig } from '../../volumes/steps.ts';
import type { OptionTable, Values } from '../usage.ts';
import { positiveInteger, stringValue, UsageError } from '../usage.ts';
import { DEFAULT_MOVER_RESOURCES, parseMoverResources } from '../../volumes/resources.ts';
import { DEFAULT_START_TIMEOUT_SECONDS } from '../../volumes/settings.ts';

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
  'mover-image': { type: 'string', placeholder: '<image>', description: 'image of the volume mover Jobs (rclone; with --mover-engine restic, left at this default: restic/restic:0.14.0)', default: 'docker.io/rclone/rclone:1.68.2' },
  'mover-concurrency': { type: 'string', placeholder: '<n>', description: 'volume mover Jobs running at once', default: '2' },
  'mover-start-timeout': { type: 'string', placeholder: '<seconds>', description: 'how long a mover Pod may take to start running before the run fails naming why (image pull, scheduler, quota)', default: '300' },
  'mover-resources': { type: 'string', placeholder: '<list>', description: 'CPU and memory of each mover, set as requests and limits (e.g. cpu=500m,memory=512Mi; empty for none)', default: DEFAULT_MOVER_RESOURCES },
  'gateway-image': { type: 'string', placeholder: '<image>', description: 'image with rclone of the movers\' gateway, which runs in --job-namespace and alone holds the bucket credentials', default: 'docker.io/rclone/rclone:1.68.2' },
};

export const DEFAULT_PROTECTED_GROUPS = 'kubeflow.org,tensorboard.kubeflow.org,serving.kserve.io';
export const DEFAULT_SELECTOR = 'app.kubernetes.io/part-of=kubeflow-profile';
export const DEFAULT_MOVER_IMAGE = 'docker.io/rclone/rclone:1.68.2';

/** The --mover-* flags as the shared volume steps take them (src/volumes/steps.ts). */
export function moverConfigFrom(values: Values): MoverConfig {
  return {
    image: stringValue(values, 'mover-image') ?? DEFAULT_MOVER_IMAGE,
    concurrency: positiveInteger(values, 'mover-concurrency', 2, 64),
    startTimeoutSeconds: positiveInteger(values, 'mover-start-timeout', DEFAULT_START_TIMEOUT_SECONDS, 86_400),
    resources: moverResources(values),
    engine: moverEngine(values),
    gateway: { image: stringValue(values, 'gateway-image') ?? DEFAULT_MOVER_IMAGE, imageSetting: '--gateway-image' },
  };
}

function moverEngine(values: Values): 'rclone' | 'restic' {
  const engine = stringValue(values, 'mover-engine') ?? 'restic';
  if (engine !== 'rclone' && engine !== 'restic') throw new UsageError(`--mover-engine must be rclone or restic, not ${engine}.`);
  return engine;
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
