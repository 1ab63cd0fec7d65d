// field.ErrorList as the Kubeflow webhooks write it and send it (kubernetes/apimachinery pkg/util/validation/field/
// errors.go: Error() is "<field>: <body>", the body "Invalid value: <value>: <detail>", "Required value: <detail>",
// "Forbidden: <detail>", "Unsupported value: <value>: supported values: ..."; ToAggregate (pkg/util/errors) gives the one
// message alone and several as "[a, b]", duplicates dropped).
export interface FieldError { field: string; text: string }

/** how field.Invalid prints a value: strings quoted as Go's %q does, numbers as they are */
function printed(value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(value);
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
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
