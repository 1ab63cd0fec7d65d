// What the target's schema did to an object the restore sent: the fields it dropped (pruned) are those the object
// sent holds and the server's answer — to a real write or a dryRun=All one — does not. Defaults the server added are
// not drops; list items are compared one by one only when the list kept its length.
import type { KubeObject } from '../kube/types.ts';

/** the paths (`spec.explainer.alibi`) the answer lacks, outside metadata and status */
export function droppedFields(sent: KubeObject, answer: KubeObject): string[] {
  const out: string[] = [];
  for (const [key, value] of Object.entries(sent)) {
    if (key === 'metadata' || key === 'status' || key === 'apiVersion' || key === 'kind') continue;
    if (!(key in answer)) out.push(key);
    else collect(value, answer[key], key, out);
  }
  return out;
}

function collect(sent: unknown, kept: unknown, path: string, out: string[]): void {
  if (sent === null || typeof sent !== 'object') return;
  if (Array.isArray(sent)) {
    if (!Array.isArray(kept) || kept.length !== sent.length) return;
    sent.forEach((item, i) => collect(item, kept[i], `${path}[${i}]`, out));
    return;
  }
  if (kept === null || typeof kept !== 'object' || Array.isArray(kept)) return;
  for (const [key, value] of Object.entries(sent)) {
    const at = `${path}.${key}`;
    if (!(key in kept)) out.push(at);
    else collect(value, (kept as Record<string, unknown>)[key], at, out);
  }
}

/** how the results name an object: `InferenceService alice/sk` */
export function objectLabel(object: KubeObject): string {
  const { namespace, name } = object.metadata;
  return `${object.kind} ${namespace ? `${namespace}/` : ''}${name ?? ''}`;
}

/** one sentence per dropped field: `InferenceService alice/sk: spec.explainer.alibi dropped by the target's schema` */
export function dropSentences(object: KubeObject, fields: readonly string[], dryRun: boolean): string[] {
  const label = objectLabel(object);
  return fields.map((field) => `${label}: ${field} ${dryRun ? 'would be dropped' : 'dropped'} by the target's schema`);
}
