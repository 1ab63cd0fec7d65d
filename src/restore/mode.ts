// How a restore pass treats the target: one value, where two booleans (a planning pass, and whether that plan asks the
// server) once encoded three modes and every branch had to read both.
export type WriteMode =
  /** writes: creates, status writes, updates the conflict policy makes, the volume fill */
  | 'write'
  /** dry-run: nothing is stored; every create and every update the policy makes is asked of the target with dryRun=All */
  | 'dry-run'
  /** the pass conflict-policy=fail makes before any write: compares with the live objects, asks and writes nothing */
  | 'conflict-scan';

/** whether the pass stores anything in the target */
export function writes(mode: WriteMode): boolean {
  return mode === 'write';
}
