// What PyYAML's `yaml.safe_dump` writes for the flat documents Kubeflow's Python charms put into relation data: a
// (upstream: yaml/pyyaml lib/yaml/representer.py, resolver.py and emitter.py)
// mapping (keys sorted, as safe_dump's sort_keys=True does) or a list of scalars. A string is written plain unless
// PyYAML's resolver would read the plain text as another type, or the emitter's scalar analysis rules plain out
// (leading indicator or document marker, ': ' or ' #', surrounding spaces, line breaks); then it is single-quoted
// (yaml/pyyaml lib/yaml/representer.py SafeRepresenter, lib/yaml/emitter.py analyze_scalar/choose_scalar_style,
// lib/yaml/resolver.py). Non-ASCII text is outside what these models write and is refused rather than guessed.
// The resolver is this model's own, written from PyYAML's (never the product's src/controlplane/python-yaml.ts, which this
// model exists to check), and tests/controlplane/python-yaml.test.ts holds it to fixtures PyYAML itself produced.

/**
 * PyYAML's implicit resolvers for a plain scalar (yaml/pyyaml lib/yaml/resolver.py, Resolver.add_implicit_resolver):
 * what does not match any of them reads as a string. YAML 1.1: yes/no/on/off are booleans, 0-prefixed digits octal
 * ints, `1:20` a sexagesimal int, a float needs a dot (so `1e3` is a string), `_` may separate digits.
 */
const IMPLICIT: RegExp[] = [
  // bool
  /^(?:yes|Yes|YES|no|No|NO|true|True|TRUE|false|False|FALSE|on|On|ON|off|Off|OFF)$/,
  // float
  /^(?:[-+]?(?:[0-9][0-9_]*)\.[0-9_]*(?:[eE][-+][0-9]+)?|\.[0-9][0-9_]*(?:[eE][-+][0-9]+)?|[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+\.[0-9_]*|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))$/,
  // int
  /^(?:[-+]?0b[0-1_]+|[-+]?0[0-7_]+|[-+]?(?:0|[1-9][0-9_]*)|[-+]?0x[0-9a-fA-F_]+|[-+]?[1-9][0-9_]*(?::[0-5]?[0-9])+)$/,
  // merge
  /^(?:<<)$/,
  // null
  /^(?:~|null|Null|NULL|)$/,
  // timestamp
  /^(?:[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]|[0-9][0-9][0-9][0-9]-[0-9][0-9]?-[0-9][0-9]?(?:[Tt]|[ \t]+)[0-9][0-9]?:[0-9][0-9]:[0-9][0-9](?:\.[0-9]*)?(?:[ \t]*(?:Z|[-+][0-9][0-9]?(?::[0-9][0-9])?))?)$/,
  // value
  /^(?:=)$/,
];

function readsAsString(plain: string): boolean {
  return !IMPLICIT.some((pattern) => pattern.test(plain));
}

type Scalar = string | number | boolean | null;

function scalar(value: Scalar): string {
  if (value === null) return 'null';
  if (typeof value === 'boolean') return value ? 'true' : 'false';
  if (typeof value === 'number') return String(value);
  if (!/^[\x20-\x7e]*$/.test(value)) throw new Error(`pyyaml-dump models printable ASCII only, not ${JSON.stringify(value)}`);
  const plainAllowed = value !== ''
    && !/^[\s#,[\]{}&*!|>'"%@`]/.test(value)
    && !/^[-?:](\s|$)/.test(value)
    // a document indicator at the start (emitter.py analyze_scalar: startswith '---' or '...')
    && !/^(?:---|\.\.\.)/.test(value)
    && !/:(\s|$)|\s#|\s$/.test(value)
    && readsAsString(value);
  return plainAllowed ? value : `'${value.replace(/'/g, "''")}'`;
}

/** safe_dump of a flat mapping or a list of scalars, byte for byte as PyYAML writes it. */
export function pyyamlSafeDump(value: Record<string, Scalar> | Scalar[]): string {
  if (Array.isArray(value)) return value.map((item) => `- ${scalar(item)}\n`).join('');
  return Object.keys(value).sort().map((key) => `${scalar(key)}: ${scalar(value[key]!)}\n`).join('');
}
