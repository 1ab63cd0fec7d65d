// How much of a restic repository's data verify-backup reads, as restic 0.14's `check` takes it (restic/restic
// cmd/restic/cmd_check.go at v0.14.0, checkFlags): plain `check` reads the index, the snapshots and every tree, and
// lists the packs with their sizes, but reads no data pack; `--read-data` reads and checks every pack (its sha256 is
// its name, then each blob's MAC); `--read-data-subset` reads a part of them: a group `n/t` (t at most 256, the packs
// whose first id byte modulo t is n-1), a random `x%` (above 0, at most 100) or a random share of that many bytes
// (`500M`; suffixes b k m g t, upper or lower case, a plain number is bytes). Input is checked here, before any Job.
import { neutralWording, type Wording } from '../../errors/remedy.ts';

export type ReadData = { mode: 'none' } | { mode: 'full' } | { mode: 'subset'; subset: string };

/** The values read-data takes, for the sentence that refuses another. */
export const READ_DATA_FORMS = 'none, full, a percentage of the packs (10%), a group n/t with t at most 256 (1/5), or a size (500M)';

const GROUP_MAX = 256;

/** The value as restic would take it, or undefined when restic 0.14 would refuse it (or we do, being stricter). */
export function parseReadData(text: string): ReadData | undefined {
  const value = text.trim();
  if (value === 'none' || value === '') return { mode: 'none' };
  if (value === 'full') return { mode: 'full' };
  const group = /^(\d{1,3})\/(\d{1,3})$/.exec(value);
  if (group) {
    const [n, t] = [Number(group[1]), Number(group[2])];
    return n >= 1 && t >= 1 && n <= t && t <= GROUP_MAX ? { mode: 'subset', subset: `${n}/${t}` } : undefined;
  }
  const percent = /^(\d{1,3}(?:\.\d{1,3})?)%$/.exec(value);
  if (percent) {
    const x = Number(percent[1]);
    return x > 0 && x <= 100 ? { mode: 'subset', subset: value } : undefined;
  }
  const size = /^(\d{1,15})([bBkKmMgGtT]?)$/.exec(value);
  if (size) return Number(size[1]) > 0 ? { mode: 'subset', subset: value } : undefined;
  return undefined;
}

/** restic check's flag for it, or undefined for a plain check. */
export function readDataFlag(readData: ReadData): string | undefined {
  if (readData.mode === 'full') return '--read-data';
  if (readData.mode === 'subset') return `--read-data-subset=${readData.subset}`;
  return undefined;
}

/** What the check read, for results: the structure only (and how to read the data), all data, or a part. */
export function describeReadData(readData: ReadData, wording: Wording = neutralWording): string {
  if (readData.mode === 'full') return 'structure and all data';
  if (readData.mode === 'subset') return `structure and data (${readData.subset})`;
  return `structure only (index, snapshots, trees; no data pack read: ${wording.term({ term: 'read-data', value: 'full' })} reads them)`;
}
