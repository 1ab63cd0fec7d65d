// field.ErrorList as the Kubeflow webhooks write it and send it (kubernetes/apimachinery pkg/util/validation/field/
// errors.go: Error() is "<field>: <body>", the body "Invalid value: <value>: <detail>", "Required value: <detail>",
// "Forbidden: <detail>", "Unsupported value: <value>: supported values: ..."; ToAggregate (pkg/util/errors) gives the one
// message alone and several as "[a, b]", duplicates dropped).
export interface FieldError { field: string; text: string }

/**
 * how field.Error's ErrorBody prints a value: numbers and booleans with %v, strings with %q, anything else with %#v
 * (a []string as `[]string{"a", "b"}`). A struct's %#v (Go's type names and field layout) is not reproduced: it is
 * printed as JSON, and tests match the sentence around it.
 */
function printed(value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(value);
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  if (Array.isArray(value) && value.every((v) => typeof v === 'string')) return `[]string{${value.map((v) => JSON.stringify(v)).join(', ')}}`;
  return JSON.stringify(value);
}

export const invalid = (field: string, value: unknown, detail: string): FieldError => ({ field, text: `Invalid value: ${printed(value)}${detail ? `: ${detail}` : ''}` });
export const required = (field: string, detail: string): FieldError => ({ field, text: `Required value${detail ? `: ${detail}` : ''}` });
export const forbidden = (field: string, detail: string): FieldError => ({ field, text: `Forbidden${detail ? `: ${detail}` : ''}` });
export const notSupported = (field: string, value: string, supported: readonly string[]): FieldError =>
  ({ field, text: `Unsupported value: ${printed(value)}: supported values: ${supported.map((s) => printed(s)).join(', ')}` });

/** ErrorList.ToAggregate().Error(), or undefined for no errors */
export function aggregate(errors: readonly FieldError[]): string | undefined {
  const messages = [...new Set(errors.map((e) => `${e.field}: ${e.text}`))];
  if (messages.length === 0) return undefined;
  return messages.length === 1 ? messages[0] : `[${messages.join(', ')}]`;
}
