// The unpacked charm the dispatch tests run: built once per test process, and again only when a source changed.
import { buildCharm, defaultCharmDir, isBuildFresh } from '../../../scripts/build.ts';

let building: Promise<string> | undefined;

export function ensureCharmBuilt(): Promise<string> {
  building ??= isBuildFresh(defaultCharmDir) ? Promise.resolve(defaultCharmDir) : buildCharm({ outDir: defaultCharmDir });
  return building;
}
