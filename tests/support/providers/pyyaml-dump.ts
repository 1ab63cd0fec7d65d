// What PyYAML's `yaml.safe_dump` writes for the flat documents Kubeflow's Python charms put into relation data: a
// (upstream: yaml/pyyaml lib/yaml/representer.py, resolver.py and emitter.py)
// mapping (keys sorted, as safe_dump's sort_keys=True does) or a list of scalars. A string is written plain unless
// PyYAML's resolver would read the plain text as another type, or the emitter's scalar analysis rules plain out
// (leading indicator, ': ' or ' #', surrounding spaces, line breaks); then it is single-quoted
// (yaml/pyyaml lib/yaml/representer.py SafeRepresenter, lib/yaml/emitter.py analyze_scalar/choose_scalar_style,
// lib/yaml/resolver.py). Non-ASCII text is outside what these models write and is refused rather than guessed.
import { pyyamlReadsAsString } from '../../../src/controlplane/python-yaml.ts';

type Scalar = string | number | boolean | null;

function scalar(value: Scalar): string {
  if (value === null) return 'null';
  if (typeof value === 'boolean') return value ? 'true' : 'false';
  if (typeof value === 'number') return String(value);
  if (!/^[\x20-\x7e]*$/.test(value)) throw new Error(`pyyaml-dump models printable ASCII only, not ${JSON.stringify(value)}`);
  const plainAllowed = value !== ''
    && !/^[\s#,[\]{}&*!|>'"%@`]/.test(value)
    && !/^[-?:](\s|$)/.test(value)
    && !/:(\s|$)|\s#|\s$/.test(value)
    && pyyamlReadsAsString(value);
  return plainAllowed ? value : `'${value.replace(/'/g, "''")}'`;
}

/** safe_dump of a flat mapping or a list of scalars, byte for byte as PyYAML writes it. */
export function pyyamlSafeDump(value: Record<string, Scalar> | Scalar[]): string {
  if (Array.isArray(value)) return value.map((item) => `- ${scalar(item)}\n`).join('');
  return Object.keys(value).sort().map((key) => `${scalar(key)}: ${scalar(value[key]!)}\n`).join('');
}
