// The version recorded in every backup's manifest: the package's, so a CLI backup and a charm backup say who wrote them.
import { readFileSync } from 'node:fs';

function packageVersion(): string {
  try {
    const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version?: string };
    return pkg.version ?? '0.0.0';
  } catch {
    return '0.0.0';
  }
}

export const TOOL_VERSION = `kubeflow-upgrader-cli ${packageVersion()}`;
