// Turns a nested result object into action-set keys Juju accepts: dot-separated kebab-case parts, string values.
import { ACTION_KEY_PART, RESERVED_ACTION_KEYS } from '../juju/hook-tools.ts';

/** camelCase and odd characters become kebab-case; what still cannot be a key part is an error (a bug, not input). */
export function toKeyPart(name: string): string {
  const part = name
    .replace(/([a-z0-9])([A-Z])/g, '$1-$2')
    .toLowerCase()
    .replace(/[^a-z0-9-]+/g, '-')
    .replace(/-+/g, '-')
    .replace(/^-|-$/g, '');
  if (!ACTION_KEY_PART.test(part)) throw new Error(`"${name}" cannot become an action result key`);
  return part;
}

export function flattenResults(record: Record<string, unknown>): Record<string, string> {
  const out: Record<string, string> = {};
  const visit = (value: unknown, key: string): void => {
    if (value === undefined || value === null) return;
    if (value instanceof Date) out[key] = value.toISOString();
    else if (Array.isArray(value)) value.forEach((item, index) => visit(item, `${key}.${index}`));
    else if (typeof value === 'object') {
      for (const [name, inner] of Object.entries(value as Record<string, unknown>)) visit(inner, key ? `${key}.${toKeyPart(name)}` : toKeyPart(name));
    } else out[key] = String(value);
  };
  visit(record, '');
  for (const key of Object.keys(out)) {
    if (RESERVED_ACTION_KEYS.has(key)) throw new Error(`"${key}" is reserved by Juju and cannot be an action result key`);
  }
  return out;
}
