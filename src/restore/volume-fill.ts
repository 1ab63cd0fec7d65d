// The restore's volume phase: which PVCs get their archived data, and the fill mark that makes that survive a crash.
// A PVC this run creates with data to fill goes in carrying the mark (src/volumes/fill-mark.ts); the fill then takes
// every marked PVC of the restored namespaces, so a rerun finishes what a crashed run left unfilled, and a PVC that
// existed before any restore (never marked) keeps its data.
import type { VolumeEntry } from '../archive/manifest.ts';
import { neutralWording, type Wording } from '../errors/remedy.ts';
import type { ProgressSink, RestoredPvc } from '../steps.ts';
import type { ApiResource, KubeObject } from '../kube/types.ts';
import { FILL_SELECTOR, withFillMark } from '../volumes/fill-mark.ts';
import type { RestoreKube } from './kube-port.ts';
import type { Preflight, SpooledStep } from './preflight.ts';

export interface PvcName {
  namespace: string;
  name: string;
}

/** What the fill needs of the restore request: whether volumes are wanted, and the mover step that fills them. */
export interface VolumeFillRequest {
  includeVolumes?: boolean;
  /** how the edge words the settings a note names */
  wording?: Wording;
  /** `archived`: the authenticated manifest's volume index (which data, and for restic which snapshot, each PVC has) */
  volumes?: ((backupId: string, pvcs: PvcName[], progress: ProgressSink, archived: readonly VolumeEntry[]) => Promise<{ restored: number; pvcs?: RestoredPvc[] }>) & { readonly handsOver?: boolean };
}

export interface VolumeFillOutcome {
  volumes: { restored: number; note?: string };
  warnings: string[];
}

export function isPvcStep(step: SpooledStep): boolean {
  return step.resource === 'persistentvolumeclaims' && step.group === '';
}

export class VolumeFill {
  /** `namespace/name` of every PVC whose data the backup holds (unbound claims held none) */
  private readonly archivedData: ReadonlySet<string>;
  /** PVCs this run created without the data source they named, since their data comes from the backup */
  private readonly sourcesDropped: string[] = [];

  constructor(
    private readonly kube: Pick<RestoreKube, 'findByResource' | 'listAll'>,
    private readonly preflight: Pick<Preflight, 'backupId' | 'manifest' | 'steps' | 'namespaces'>,
    private readonly request: VolumeFillRequest,
    private readonly dry: boolean,
    private readonly say: ProgressSink,
  ) {
    this.archivedData = new Set((preflight.manifest?.volumes ?? []).filter((v) => !v.unbound).map((v) => `${v.namespace}/${v.pvc}`));
  }

  /** whether this run fills volumes: then the restore stops each namespace after its PVCs until they are filled */
  fills(): boolean {
    return !this.dry && this.request.includeVolumes !== false && this.request.volumes !== undefined && this.archivedData.size > 0;
  }

  /** A PVC this run creates and will fill goes in with the fill mark, so that a crash before the fill ends is repaired by a rerun. */
  withMarkIfFilled(resource: ApiResource, object: KubeObject): KubeObject {
    if (resource.resource !== 'persistentvolumeclaims' || resource.group !== '' || !this.fills()) return object;
    if (!this.holdsData(object.metadata.namespace ?? '', object.metadata.name ?? '')) return object;
    return withFillMark(this.withoutDataSource(object), this.preflight.backupId, { handover: this.request.volumes?.handsOver === true });
  }

  /**
   * A claim made from a snapshot or another claim (spec.dataSource, spec.dataSourceRef) that the movers fill goes in
   * without its source, as Velero writes a claim whose data a pod volume backup holds (vmware-tanzu/velero
   * pkg/restore/actions/pvc_action.go, Execute; pkg/restore/actions/csi/pvc_action.go, executeWithoutPVRestore): in a
   * fresh cluster the snapshot it names does not exist, so the provisioner would never make its volume (kubernetes-csi
   * external-provisioner pkg/controller/controller.go, getSnapshotSource) and the mover could never mount it; where
   * it still exists, it holds other data than the backup.
   */
  private withoutDataSource(object: KubeObject): KubeObject {
    const spec = object.spec as { dataSource?: unknown; dataSourceRef?: unknown } | undefined;
    if (!spec || (spec.dataSource === undefined && spec.dataSourceRef === undefined)) return object;
    const { dataSource: _source, dataSourceRef: _ref, ...rest } = spec;
    this.sourcesDropped.push(`${object.metadata.namespace}/${object.metadata.name}`);
    return { ...object, spec: rest };
  }

  /** Fills the marked PVCs; `created` are the PVCs this run made, for the notes of a dry run and of a run without a mover. */
  async fill(created: readonly PvcName[]): Promise<VolumeFillOutcome> {
    const { request, preflight } = this;
    const warnings: string[] = [];
    const done = (note: string | undefined, restored = 0): VolumeFillOutcome => ({ volumes: { restored, ...(note ? { note } : {}) }, warnings });
    if (request.includeVolumes === false) return done(`${(request.wording ?? neutralWording).term({ term: 'volumes-off' })}: no volume data was restored`);
    if (this.archivedData.size === 0) {
      return done(preflight.manifest?.volumes.length ? 'the backup holds no volume data (its PVCs were never bound)' : 'the backup holds no volume data');
    }
    const createdWithData = created.filter((p) => this.holdsData(p.namespace, p.name));
    if (this.dry) {
      return done(createdWithData.length ? `would fill ${createdWithData.length} new PVC(s) with their archived data` : 'no new PVC to fill: PVCs that already existed keep their data');
    }
    if (!request.volumes) {
      const note = createdWithData.length ? `${createdWithData.length} new PVC(s) were created empty: no volume mover is configured` : 'no new PVC to fill';
      if (createdWithData.length) warnings.push(note);
      return done(note);
    }
    // The mark, not this run's list of creations, says what to fill: a PVC created by a run that crashed before its
    // fill ended still carries it, and one that existed before any restore never does.
    const marked = await this.markedPvcs();
    const fill = marked.filter((p) => this.holdsData(p.namespace, p.name));
    for (const p of marked) {
      if (!this.holdsData(p.namespace, p.name)) warnings.push(`PVC ${p.namespace}/${p.name} waits to be filled, but backup ${preflight.backupId} holds no data for it; it was left as it is`);
    }
    if (fill.length === 0) return done('no PVC to fill: PVCs that already existed keep their data');
    const resumed = fill.length - createdWithData.filter((p) => fill.some((f) => f.namespace === p.namespace && f.name === p.name)).length;
    await this.say(`filling ${fill.length} PVC(s) with their archived data${resumed > 0 ? ` (${resumed} left unfilled by an earlier run)` : ''}`);
    if (this.sourcesDropped.length > 0) {
      warnings.push(`${this.sourcesDropped.length} PVC(s) made from a snapshot or another claim were created without that data source and filled from the backup instead: ${this.sourcesDropped.join(', ')}`);
    }
    const result = await request.volumes(preflight.backupId, fill, (m) => this.say(m), preflight.manifest?.volumes ?? []);
    // a PVC filled by a mover in its own namespace (not handed over from the model's: src/volumes/rebind.ts) is named
    const inNamespace = (result.pvcs ?? []).filter((p) => p.restoredBy === 'in-namespace').map((p) => `${p.namespace}/${p.pvc}`);
    if (inNamespace.length > 0 && request.volumes.handsOver) warnings.push(`${inNamespace.length} PVC(s) were filled by a mover in their own namespace, not handed over: ${inNamespace.join(', ')}`);
    return done(undefined, result.restored);
  }

  private holdsData(namespace: string, name: string): boolean {
    return this.archivedData.has(`${namespace}/${name}`);
  }

  /** PVCs of the restored namespaces that still carry the fill mark: made by this run or by one that did not finish filling them. */
  private async markedPvcs(): Promise<PvcName[]> {
    const resource = this.preflight.steps.find(isPvcStep)?.target ?? await this.kube.findByResource('', 'persistentvolumeclaims');
    if (!resource) return [];
    const namespaces = this.preflight.namespaces;
    const found: KubeObject[] = [];
    if (namespaces.size <= 3) {
      for (const namespace of namespaces) found.push(...(await this.kube.listAll(resource, { namespace, labelSelector: FILL_SELECTOR })).items);
    } else {
      found.push(...(await this.kube.listAll(resource, { labelSelector: FILL_SELECTOR })).items.filter((o) => namespaces.has(o.metadata.namespace ?? '')));
    }
    return found.filter((o) => !o.metadata.deletionTimestamp).map((o) => ({ namespace: o.metadata.namespace ?? '', name: o.metadata.name ?? '' }));
  }
}
