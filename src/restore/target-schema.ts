// What the target's schema did to an object the restore sent: the fields it dropped (pruned) are those the object
// sent holds and the server's answer — to a real write or a dryRun=All one — does not. Defaults the server added are
// not drops; list items are compared one by one only when the list kept its length.
import type { KubeObject } from '../kube/types.ts';

/** the paths (`spec.explainer.alibi`) the answer lacks, outside metadata and status */
export function droppedFields(sent: KubeObject, answer: KubeObject): string[] {
  const out: string[] = [];
  const path: Array<string | number> = [];
  for (const key in sent) {
    if (key === 'metadata' || key === 'status' || key === 'apiVersion' || key === 'kind' || !Object.hasOwn(sent, key)) continue;
    path.push(key);
    if (!(key in answer)) out.push(pathText(path));
    else collect(sent[key], answer[key], path, out);
    path.pop();
  }
  return out;
}

/**
 * Walks what was sent beside what was kept. The path is a stack of its parts, written out only for a field that was
 * dropped: a restore compares every object it creates, nearly always finding nothing (docs/performance.md).
 */
function collect(sent: unknown, kept: unknown, path: Array<string | number>, out: string[]): void {
  if (sent === null || typeof sent !== 'object') return;
  if (Array.isArray(sent)) {
    if (!Array.isArray(kept) || kept.length !== sent.length) return;
    for (let i = 0; i < sent.length; i++) {
      path.push(i);
      collect(sent[i], kept[i], path, out);
      path.pop();
    }
    return;
  }
  if (kept === null || typeof kept !== 'object' || Array.isArray(kept)) return;
  for (const key in sent) {
    if (!Object.hasOwn(sent, key)) continue;
    path.push(key);
    if (!(key in kept)) out.push(pathText(path));
    else collect((sent as Record<string, unknown>)[key], (kept as Record<string, unknown>)[key], path, out);
    path.pop();
  }
}

/** `spec.containers[0].image` */
function pathText(path: ReadonlyArray<string | number>): string {
  let text = '';
  for (const part of path) text += typeof part === 'number' ? `[${part}]` : text ? `.${part}` : part;
  return text;
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
