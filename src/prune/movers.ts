// Volume-mover Jobs and their Secrets, and the restic movers' gateway (its Job, Secret and Service in the model's
// namespace), outlive a run that was killed: all carry the mover labels with the backup id, so any older than the grace
// period (no run takes that long to start) can be found and removed.
import type { KubeClient } from '../kube/client.ts';
import type { KubeObject } from '../kube/types.ts';
import { moverSelector } from '../volumes/labels.ts';

/** services: the restic movers' repository gateway (src/volumes/restic/gateway.ts) of a killed run */
export type MoverKind = 'jobs' | 'secrets' | 'services';

/** The two calls cleanup needs, across every namespace. */
export interface MoverPort {
  list(kind: MoverKind, labelSelector: string): Promise<KubeObject[]>;
  delete(kind: MoverKind, namespace: string, name: string): Promise<void>;
}

export interface MoverCleanup {
  jobs: number;
  secrets: number;
  services?: number;
}

export function moverPortOf(kube: KubeClient): MoverPort {
  const resourceOf = async (kind: MoverKind) => {
    const resource = await kube.findByResource(kind === 'jobs' ? 'batch' : '', kind);
    if (!resource) throw new Error(`The cluster does not serve ${kind}.`);
    return resource;
  };
  return {
    list: async (kind, labelSelector) => (await kube.listAll(await resourceOf(kind), { labelSelector })).items,
    delete: async (kind, namespace, name) => {
      // Background propagation: a Job takes its Pods along.
      await kube.delete(await resourceOf(kind), name, namespace, { propagationPolicy: 'Background' }).catch((error: unknown) => {
        if ((error as { status?: number }).status !== 404) throw error;
      });
    },
  };
}

export async function removeMoverLeftovers(port: MoverPort, options: { graceMs: number; now: Date; dryRun: boolean }): Promise<MoverCleanup> {
  const removed: MoverCleanup = { jobs: 0, secrets: 0 };
  for (const kind of ['jobs', 'secrets', 'services'] as const) {
    for (const object of await port.list(kind, moverSelector())) {
      const created = Date.parse(object.metadata.creationTimestamp ?? '');
      if (Number.isNaN(created) || options.now.getTime() - created < options.graceMs) continue;
      if (!options.dryRun) await port.delete(kind, object.metadata.namespace ?? '', object.metadata.name ?? '');
      removed[kind] = (removed[kind] ?? 0) + 1;
    }
  }
  return removed;
}
