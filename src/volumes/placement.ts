// Where a mover Pod may run. A ReadWriteOnce volume in use is attached to one node: the mover must go there too.
import type { KubeObject } from '../kube/types.ts';
import { PODS, type VolumeKube } from './kube-port.ts';

export interface Placement {
  nodeName?: string;
  /** why the volume cannot be copied right now, as one sentence */
  blocked?: string;
}

function mountsClaim(pod: KubeObject, claim: string): boolean {
  const volumes = ((pod.spec as { volumes?: unknown[] } | undefined)?.volumes ?? []) as { persistentVolumeClaim?: { claimName?: string } }[];
  return volumes.some((v) => v.persistentVolumeClaim?.claimName === claim);
}

export async function placementFor(kube: VolumeKube, pvc: KubeObject): Promise<Placement> {
  const namespace = pvc.metadata.namespace ?? '';
  const name = pvc.metadata.name ?? '';
  const modes = ((pvc.spec as { accessModes?: string[] } | undefined)?.accessModes ?? []);
  const singleNode = modes.includes('ReadWriteOnce') || modes.includes('ReadWriteOncePod');
  if (!singleNode) return {};
  const pods = await kube.list(PODS, namespace);
  const user = pods.find((p) => {
    const phase = (p.status as { phase?: string } | undefined)?.phase;
    return (phase === 'Running' || phase === 'Pending') && mountsClaim(p, name) && !p.metadata.deletionTimestamp
      && Boolean((p.spec as { nodeName?: string } | undefined)?.nodeName);
  });
  if (!user) return {};
  if (modes.includes('ReadWriteOncePod')) {
    return { blocked: `it is ReadWriteOncePod and Pod ${user.metadata.name} holds it; stop that workload and retry` };
  }
  return { nodeName: (user.spec as { nodeName: string }).nodeName };
}
