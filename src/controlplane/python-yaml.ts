// Relation data that Python charms write with PyYAML (serialized-data-interface's `yaml.safe_dump`) is YAML 1.1 as
// PyYAML reads it, not YAML 1.2 and not quite the `yaml` package's 1.1 schema either. PyYAML quotes a string only when
// its own resolver would read the plain text as something else, so a plain scalar that PyYAML resolves to a string IS
// that string: `1e3` is a string to PyYAML (its floats need a dot) but the number 1000 to YAML 1.2 and to the `yaml`
// package in 1.1 mode. A MinIO secret-key like that would otherwise be refused or, worse, rewritten.
import { isScalar, parseDocument, visit } from 'yaml';

// The plain-scalar types of the YAML 1.1 type repository (yaml.org/type: bool, float, int, merge, null, timestamp,
// value) as PyYAML's Resolver narrows them (yaml/pyyaml lib/yaml/resolver.py): a float needs a dot and a signed
// exponent, an int may be octal `017` or sexagesimal `1:20`, `yes`/`on` are booleans.
const PYYAML_IMPLICIT: RegExp[] = [
  /^(?:yes|Yes|YES|no|No|NO|true|True|TRUE|false|False|FALSE|on|On|ON|off|Off|OFF)$/,
  /^(?:[-+]?(?:[0-9][0-9_]*)\.[0-9_]*(?:[eE][-+][0-9]+)?|\.[0-9][0-9_]*(?:[eE][-+][0-9]+)?|[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+\.[0-9_]*|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))$/,
  /^(?:[-+]?0b[0-1_]+|[-+]?0[0-7_]+|[-+]?(?:0|[1-9][0-9_]*)|[-+]?0x[0-9a-fA-F_]+|[-+]?[1-9][0-9_]*(?::[0-5]?[0-9])+)$/,
  /^(?:<<)$/,
  /^(?:~|null|Null|NULL|)$/,
  /^(?:[0-9]{4}-[0-9]{2}-[0-9]{2}|[0-9]{4}-[0-9]{1,2}-[0-9]{1,2}(?:[Tt]|[ \t]+)[0-9]{1,2}:[0-9]{2}:[0-9]{2}(?:\.[0-9]*)?(?:[ \t]*(?:Z|[-+][0-9]{1,2}(?::[0-9]{2})?))?)$/,
  /^(?:=)$/,
];

/** True when PyYAML reads this plain (unquoted) scalar as a string. */
export function pyyamlReadsAsString(plain: string): boolean {
  return !PYYAML_IMPLICIT.some((pattern) => pattern.test(plain));
}

/**
 * Parses a document a Python charm wrote with PyYAML, giving each scalar the type PyYAML would. Throws the `yaml`
 * package's error on text that is not YAML.
 */
export function parsePythonYaml(text: string): unknown {
  const document = parseDocument(text, { version: '1.1', uniqueKeys: false });
  if (document.errors.length > 0) throw document.errors[0];
  visit(document, {
    Scalar(_key, node) {
      if (isScalar(node) && node.type === 'PLAIN' && typeof node.source === 'string' && pyyamlReadsAsString(node.source)) node.value = node.source;
    },
  });
  return document.toJS();
}
