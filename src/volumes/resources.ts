// `volume-mover-resources`: what each mover container asks for and is held to. Requests equal limits (Guaranteed QoS),
// so a namespace ResourceQuota on either `requests.*` or `limits.*` can admit the Pod: the API server refuses a Pod
// that sets no limit for a resource a quota on `limits.*` tracks (kubernetes pkg/quota/v1/evaluator/core/pods.go).
const KEYS = ['cpu', 'memory', 'ephemeral-storage'] as const;
type Key = (typeof KEYS)[number];
const QUANTITY = /^(\d+(\.\d+)?|\.\d+)(m|k|M|G|T|P|E|Ki|Mi|Gi|Ti|Pi|Ei)?$/;

/**
 * rclone with 8 transfers and 16 checkers: one core keeps up with its hashing, and 1 GiB holds its buffers plus the
 * one-pass listing (--fast-list keeps every object of the tree in memory, about 1 KiB each).
 */
export const DEFAULT_MOVER_RESOURCES = 'cpu=1,memory=1Gi';

export type ResourceList = Partial<Record<Key, string>>;

/** `cpu=500m,memory=512Mi` → the list; '' → undefined (no requests or limits: the namespace's LimitRange decides). */
export function parseMoverResources(text: string): ResourceList | undefined {
  const trimmed = text.trim();
  if (trimmed === '') return undefined;
  const list: ResourceList = {};
  for (const part of trimmed.split(',').map((p) => p.trim()).filter(Boolean)) {
    const [key, value, ...rest] = part.split('=').map((p) => p.trim());
    if (!KEYS.includes(key as Key) || value === undefined || rest.length > 0) {
      throw new Error(`"${part}" is not <resource>=<quantity> with a resource of ${KEYS.join(', ')}`);
    }
    if (!QUANTITY.test(value)) throw new Error(`"${value}" is not a Kubernetes quantity (e.g. 500m, 1, 512Mi, 1Gi)`);
    if (list[key as Key] !== undefined) throw new Error(`${key} is given twice`);
    list[key as Key] = value;
  }
  return list;
}

/** The container's `resources`: the same list as requests and as limits. */
export function containerResources(list: ResourceList | undefined): Record<string, unknown> {
  return list ? { requests: { ...list }, limits: { ...list } } : {};
}
