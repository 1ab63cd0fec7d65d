// The volume engines by name: the one place a name (volume-mover-engine, --mover-engine, a run's options) becomes the
// implementation that stores PVC contents so.
import type { VolumeEntry } from '../archive/manifest.ts';
import { ENGINE_NAMES, parseEngineName, type EngineName, type VolumeEngine } from './engine.ts';
import { rcloneEngine } from './rclone-engine.ts';
import { resticEngine } from './restic/engine.ts';

const ENGINES: Readonly<Record<EngineName, VolumeEngine>> = { rclone: rcloneEngine, restic: resticEngine };

/** The engine a setting names; a name it does not know is one sentence naming `setting`. */
export function engineNamed(name: string, setting = 'volume-mover-engine'): VolumeEngine {
  return ENGINES[parseEngineName(name, setting)];
}

/** Every engine, in the order a restore runs them (plain files, then restic repositories, as before there were engines). */
export const ALL_ENGINES: readonly VolumeEngine[] = ENGINE_NAMES.map((name) => ENGINES[name]);

/** The engine holding a PVC's data as a backup's entry records it; a PVC without an entry: plain files, as ever. */
export function engineHolding(entry: Pick<VolumeEntry, 'restic'> | undefined): VolumeEngine {
  return ALL_ENGINES.find((engine) => engine.holds(entry ?? {})) ?? rcloneEngine;
}

export { rcloneEngine, resticEngine };
