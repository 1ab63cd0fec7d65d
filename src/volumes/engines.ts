// The volume engines by name: the one place a name (volume-mover-engine, --mover-engine, a run's options) becomes the
// implementation that stores PVC contents so.
import { parseEngineName, type EngineName, type VolumeEngine } from './engine.ts';
import { rcloneEngine } from './rclone-engine.ts';
import { resticEngine } from './restic/engine.ts';

const ENGINES: Readonly<Record<EngineName, VolumeEngine>> = { rclone: rcloneEngine, restic: resticEngine };

/** The engine a setting names; a name it does not know is one sentence naming `setting`. */
export function engineNamed(name: string, setting = 'volume-mover-engine'): VolumeEngine {
  return ENGINES[parseEngineName(name, setting)];
}

export { rcloneEngine, resticEngine };
