// A VolumeKube whose Jobs run on this machine (runJobLocally): objects kept in memory, a finished Job gets the
// Complete/Failed condition and a Pod carrying the container's termination message, as the kubelet would leave it.
import type { KubeObject } from '../../src/kube/types.ts';
import type { MoverResource, VolumeKube } from '../../src/volumes/kube-port.ts';
import { runJobLocally } from './local-job.ts';

export class LocalJobKube implements VolumeKube {
  readonly objects = new Map<string, KubeObject>();
  /** every Secret ever created, for the "no Secret left behind" check */
  readonly secretsCreated: string[] = [];

  private key(resource: MoverResource, namespace: string, name: string) {
    return `${resource.resource}/${namespace}/${name}`;
  }

  async get(resource: MoverResource, namespace: string, name: string) {
    return this.objects.get(this.key(resource, namespace, name));
  }

  /**
   * As the API server lists: namespace '' is every namespace, and a selector term is `key=value` or `key` alone (the
   * label exists), terms joined by commas (kubernetes/apimachinery pkg/labels/selector.go).
   */
  async list(resource: MoverResource, namespace: string, labelSelector?: string) {
    const terms = (labelSelector ?? '').split(',').filter(Boolean).map((term) => term.split('='));
    return [...this.objects.entries()]
      .filter(([k]) => k.startsWith(namespace ? `${resource.resource}/${namespace}/` : `${resource.resource}/`))
      .map(([, o]) => o)
      .filter((o) => terms.every(([label, value]) => (value === undefined ? o.metadata.labels?.[label!] !== undefined : o.metadata.labels?.[label!] === value)));
  }

  async create(resource: MoverResource, object: KubeObject) {
    const ns = object.metadata.namespace!;
    const name = object.metadata.name!;
    if (this.objects.has(this.key(resource, ns, name))) throw Object.assign(new Error(`${resource.resource} ${name} already exists`), { status: 409 });
    this.objects.set(this.key(resource, ns, name), object);
    if (resource.resource === 'secrets') this.secretsCreated.push(name);
    if (resource.resource === 'jobs') {
      const secrets = [...this.objects.values()].filter((o) => o.kind === 'Secret');
      const run = await runJobLocally(object, secrets);
      const type = run.exitCode === 0 ? 'Complete' : 'Failed';
      object.status = { conditions: [{ type, status: 'True' }] };
      this.objects.set(this.key({ ...resource, resource: 'pods' }, ns, `${name}-pod`), {
        apiVersion: 'v1', kind: 'Pod', metadata: { name: `${name}-pod`, namespace: ns, labels: { 'job-name': name } },
        status: { containerStatuses: [{ name: 'copy', state: { terminated: { exitCode: run.exitCode, message: run.terminationMessage } } }] },
      });
    }
    return object;
  }

  async mergePatch(resource: MoverResource, namespace: string, name: string, patch: unknown) {
    const object = this.objects.get(this.key(resource, namespace, name));
    if (!object) throw Object.assign(new Error(`${resource.resource} ${name} not found`), { status: 404 });
    const metadata = (patch as { metadata?: { labels?: Record<string, string | null>; annotations?: Record<string, string | null> } }).metadata ?? {};
    for (const field of ['labels', 'annotations'] as const) {
      const merged: Record<string, string> = { ...(object.metadata[field] ?? {}) };
      for (const [k, v] of Object.entries(metadata[field] ?? {})) if (v === null) delete merged[k]; else merged[k] = v;
      object.metadata[field] = merged;
    }
    return object;
  }

  async podLog() {
    return ''; // these Jobs have finished by the time anyone could read a log
  }

  async delete(resource: MoverResource, namespace: string, name: string) {
    this.objects.delete(this.key(resource, namespace, name));
    if (resource.resource === 'jobs') this.objects.delete(this.key({ ...resource, resource: 'pods' }, namespace, `${name}-pod`));
  }

  async waitFor(resource: MoverResource, namespace: string, name: string, done: (o: KubeObject | undefined) => boolean) {
    const object = await this.get(resource, namespace, name);
    if (!done(object)) throw new Error(`${name} never finished`);
    return object;
  }

  remaining(kind: string): string[] {
    return [...this.objects.values()].filter((o) => o.kind === kind).map((o) => o.metadata.name!);
  }
}
