// The steps the engines call for what lies outside the Kubernetes API: the volume movers (src/volumes) and the
// control-plane copies (src/controlplane). Typed here, under the engines, so that the steps implement them without
// importing the engines that call them; each is a function, the one port style of a step.
import type { KubeObject } from './kube/types.ts';
import type { ControlPlaneOutcome, Manifest, VolumeEntry } from './archive/manifest.ts';

/** A long run's progress lines: the charm's action log, the CLI's stderr. */
export type ProgressSink = (message: string) => void | Promise<void>;

/** A PVC the backup keeps, handed to the volume step. */
export interface PvcRef {
  namespace: string;
  name: string;
  object: KubeObject;
}

/** Copies PVC contents for a backup (src/volumes); returns one manifest entry per PVC or throws naming the PVC. */
export type VolumeStep = (backupId: string, pvcs: PvcRef[], progress: ProgressSink) => Promise<VolumeEntry[]>;

/** Copies the control-plane data (src/controlplane); returns what it covered and what it could not. */
export type ControlPlaneStep = (backupId: string, progress: ProgressSink) => Promise<ControlPlaneOutcome>;

/**
 * Fills PVCs from the backup (src/volumes); returns what it did or throws naming the PVC. `archived` is the volume
 * index of the manifest the preflight read and authenticated: a step reading it again from the bucket would trust
 * whatever is there by then (e.g. a substituted restic snapshot id).
 */
export type RestoreVolumeStep = ((
  backupId: string, pvcs: Array<{ namespace: string; name: string }>, progress: ProgressSink, archived: readonly VolumeEntry[],
) => Promise<{ restored: number; bytes?: number; pvcs?: RestoredPvc[] }>) & {
  /**
   * the step fills each PVC in the model's namespace and hands its volume over (src/volumes/rebind.ts): the restore
   * then creates the PVCs it fills reserved for that (src/volumes/fill-mark.ts withFillMark)
   */
  readonly handsOver?: boolean;
};

/** How one PVC's data was restored: handed over from the model's namespace (and as which volume), or in its namespace. */
export interface RestoredPvc {
  namespace: string;
  pvc: string;
  restoredBy: 'handover' | 'in-namespace';
  volume?: string;
}

/**
 * Restores the control-plane data (src/controlplane), before any Profile. `manifest` is the one the preflight read and
 * authenticated: a step reading it again from the bucket would trust whatever is there by then.
 */
export type RestoreControlPlaneStep = (backupId: string, progress: ProgressSink, manifest: Manifest | null) => Promise<{ restored: number; notes: string[] }>;
