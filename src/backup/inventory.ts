// What the backup records about the cluster beside the objects: the Juju model's applications and their workload
// images (to redeploy the same revisions on blue/green), and the CRDs with their storedVersions (the upgrade hazard).
import type { BackupKube } from './kube-port.ts';
import type { KubeObject } from '../kube/types.ts';
import type { ApplicationEntry, CrdSnapshot } from '../archive/manifest.ts';

const appLabels = ['app.kubernetes.io/name', 'app.juju.is/created-by'];

function podImages(workload: KubeObject): string[] {
  const spec = (workload.spec as { template?: { spec?: { containers?: Array<{ image?: string }>; initContainers?: Array<{ image?: string }> } } } | undefined)?.template?.spec;
  return [...(spec?.initContainers ?? []), ...(spec?.containers ?? [])].map((c) => c.image).filter((i): i is string => typeof i === 'string');
}

/** The applications of the Juju model (its namespace): one entry per application with every image it runs. */
export async function modelInventory(kube: BackupKube, modelNamespace: string | undefined): Promise<ApplicationEntry[]> {
  if (!modelNamespace) return [];
  const byApp = new Map<string, Set<string>>();
  for (const resourceName of ['statefulsets', 'deployments']) {
    const resource = await kube.findByResource('apps', resourceName);
    if (!resource) continue;
    for await (const page of kube.listPages(resource, { namespace: modelNamespace })) {
      for (const workload of page) {
        const labels = workload.metadata.labels ?? {};
        const app = appLabels.map((l) => labels[l]).find(Boolean) ?? workload.metadata.name!;
        const images = byApp.get(app) ?? new Set<string>();
        for (const image of podImages(workload)) images.add(image);
        byApp.set(app, images);
      }
    }
  }
  return [...byApp.entries()].sort(([a], [b]) => a.localeCompare(b)).map(([name, images]) => ({ name, images: [...images].sort() }));
}

/** The CRDs of the given groups with their versions and storedVersions. */
export async function crdSnapshot(kube: BackupKube, groups: readonly string[]): Promise<CrdSnapshot[]> {
  const resource = await kube.findByResource('apiextensions.k8s.io', 'customresourcedefinitions');
  if (!resource) return [];
  const wanted = new Set(groups);
  const found: CrdSnapshot[] = [];
  for await (const page of kube.listPages(resource)) {
    for (const crd of page) {
      const spec = crd.spec as { group?: string; versions?: Array<{ name: string; served?: boolean; storage?: boolean }> } | undefined;
      if (!spec?.group || !wanted.has(spec.group)) continue;
      const status = crd.status as { storedVersions?: string[] } | undefined;
      found.push({
        name: crd.metadata.name!,
        group: spec.group,
        versions: (spec.versions ?? []).map((v) => ({ name: v.name, served: v.served ?? false, storage: v.storage ?? false })),
        storedVersions: status?.storedVersions ?? [],
      });
    }
  }
  return found.sort((a, b) => a.name.localeCompare(b.name));
}
