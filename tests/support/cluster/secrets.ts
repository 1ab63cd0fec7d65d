// What the API server does with a Secret on every write, before it stores it:
// - `stringData` is write-only: each of its values overwrites the same key of `data`, base64-encoded, and the field
//   itself is never stored nor returned (kubernetes/kubernetes pkg/apis/core/v1/conversion.go,
//   Convert_v1_Secret_To_core_Secret; the field's doc in staging/src/k8s.io/api/core/v1/types.go);
// - ValidateSecret (kubernetes/kubernetes pkg/apis/core/validation/validation.go), on create and on every update
//   (ValidateSecretUpdate calls it): every data key is a config key (staging/src/k8s.io/apimachinery/pkg/util/
//   validation/validation.go, IsConfigMapKey), and each built-in type requires its keys or annotation. The field paths
//   keep upstream's quirks: basic-auth and ssh-auth build theirs from the literal "data[%s]".
import type { KubeObject } from '../../../src/kube/types.ts';
import { invalidValue, required, type FieldError } from './errors.ts';

const CONFIG_KEY = /^[-._a-zA-Z0-9]+$/;
const CONFIG_KEY_MESSAGE = "a valid config key must consist of alphanumeric characters, '-', '_' or '.' (e.g. 'key.name',  or 'KEY_NAME',  or 'key-name', regex used for validation is '[-._a-zA-Z0-9]+')";
const REDACTED = '<secret contents redacted>';

/** Moves `stringData` into `data` in place, as the conversion from v1 does; stringData wins over data. */
export function mergeStringData(secret: KubeObject): void {
  const stringData = secret.stringData as Record<string, unknown> | undefined | null;
  delete secret.stringData;
  if (!stringData || typeof stringData !== 'object') return;
  const data = { ...((secret.data ?? {}) as Record<string, string>) };
  for (const [key, value] of Object.entries(stringData)) data[key] = Buffer.from(String(value), 'utf8').toString('base64');
  secret.data = data;
}

function configKeyProblems(key: string): string[] {
  const out: string[] = [];
  if (key.length > 253) out.push('must be no more than 253 characters');
  if (!CONFIG_KEY.test(key)) out.push(CONFIG_KEY_MESSAGE);
  if (key === '.') out.push("must not be '.'");
  else if (key === '..') out.push("must not be '..'");
  else if (key.startsWith('..')) out.push("must not start with '..'");
  return out;
}

/** Go's encoding/json verdict on a document, in its words for the two common failures; undefined when it parses. */
function jsonProblem(bytes: Buffer): string | undefined {
  const text = bytes.toString('utf8');
  try {
    const parsed: unknown = JSON.parse(text);
    // the server unmarshals into map[string]interface{}: any other top-level value is refused
    if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed))
      return `json: cannot unmarshal ${Array.isArray(parsed) ? 'array' : parsed === null ? 'null' : typeof parsed === 'string' ? 'string' : typeof parsed === 'number' ? 'number' : 'bool'} into Go value of type map[string]interface {}`;
    return undefined;
  } catch {
    const first = text.trimStart()[0];
    return first === undefined || /^[[{"\d-]|t|f|n/.test(first) ? 'unexpected end of JSON input' : `invalid character '${first}' looking for beginning of value`;
  }
}

export function validateSecret(secret: KubeObject): FieldError[] {
  const errors: FieldError[] = [];
  const data = (secret.data ?? {}) as Record<string, string>;
  for (const key of Object.keys(data)) for (const problem of configKeyProblems(key)) errors.push(invalidValue(`data[${key}]`, key, problem));
  const has = (key: string) => Object.hasOwn(data, key);
  const bytes = (key: string) => Buffer.from(data[key] ?? '', 'base64');
  const annotations = secret.metadata.annotations ?? {};
  switch (secret.type as string | undefined) {
    case 'kubernetes.io/service-account-token':
      // the uid annotation and the token are the token controller's to add; only the account's name is required
      if (!annotations['kubernetes.io/service-account.name']) errors.push(required('metadata.annotations[kubernetes.io/service-account.name]'));
      break;
    case 'kubernetes.io/dockercfg':
    case 'kubernetes.io/dockerconfigjson': {
      const key = secret.type === 'kubernetes.io/dockercfg' ? '.dockercfg' : '.dockerconfigjson';
      if (!has(key)) {
        errors.push(required(`data[${key}]`));
        break;
      }
      const problem = jsonProblem(bytes(key));
      if (problem) errors.push(invalidValue(`data[${key}]`, REDACTED, problem));
      break;
    }
    case 'kubernetes.io/basic-auth':
      // either key may be empty, but one must be present
      if (!has('username') && !has('password')) errors.push(required('data[%s][username]'), required('data[%s][password]'));
      break;
    case 'kubernetes.io/ssh-auth':
      if (bytes('ssh-privatekey').length === 0) errors.push(required('data[%s][ssh-privatekey]'));
      break;
    case 'kubernetes.io/tls':
      if (!has('tls.crt')) errors.push(required('data[tls.crt]'));
      if (!has('tls.key')) errors.push(required('data[tls.key]'));
      break;
    default:
      break;
  }
  return errors;
}
