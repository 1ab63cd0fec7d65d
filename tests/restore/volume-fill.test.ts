// The restore's volume phase, one row per case: what it fills, and the note and warnings it leaves in the outcome.
// The fill takes the PVCs that carry the fill mark (a crash-interrupted run's included), never a PVC without it.
import { expect } from 'chai';
import type { ApiResource, KubeObject } from '../../src/kube/types.ts';
import type { Manifest } from '../../src/archive/manifest.ts';
import { VolumeFill, type PvcName, type VolumeFillRequest } from '../../src/restore/volume-fill.ts';
import { FILL_SELECTOR } from '../../src/volumes/fill-mark.ts';

const PVCS: ApiResource = { group: '', version: 'v1', resource: 'persistentvolumeclaims', kind: 'PersistentVolumeClaim', namespaced: true } as ApiResource;

function pvc(namespace: string, name: string, marked: boolean): KubeObject {
  const [key, value] = FILL_SELECTOR.split('=') as [string, string];
  return { apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata: { namespace, name, labels: marked ? { [key]: value } : {} } };
}

/** Answers LISTs of PVCs as the API server would: only those matching the fill mark's selector. */
function kubeHolding(pvcs: KubeObject[]) {
  return {
    findByResource: async () => PVCS,
    listAll: async (_resource: ApiResource, options: { namespace?: string; labelSelector?: string } = {}) => {
      const [key, value] = (options.labelSelector ?? '').split('=');
      const items = pvcs.filter((o) => (!options.namespace || o.metadata.namespace === options.namespace) && (!key || o.metadata.labels?.[key] === value));
      return { items, resourceVersion: '1' };
    },
  };
}

const volumesOf = (...names: Array<[string, string, boolean?]>) =>
  names.map(([namespace, pvc, unbound]) => ({ namespace, pvc, ...(unbound ? { unbound: true } : {}) })) as unknown as Manifest['volumes'];

interface Row {
  name: string;
  archived: Manifest['volumes'];
  cluster: KubeObject[];
  created: PvcName[];
  request: 'mover' | 'no-mover' | 'excluded';
  dry?: boolean;
  filled: PvcName[] | undefined;
  note: string | undefined;
  warnings: string[];
}

const alice = (name: string): PvcName => ({ namespace: 'alice', name });

const rows: Row[] = [
  { name: 'include-volumes=false restores no data', archived: volumesOf(['alice', 'ws']), cluster: [], created: [alice('ws')], request: 'excluded',
    filled: undefined, note: 'volumes left out: no volume data was restored', warnings: [] },
  { name: 'a backup without volumes says so', archived: volumesOf(), cluster: [], created: [], request: 'mover',
    filled: undefined, note: 'the backup holds no volume data', warnings: [] },
  { name: 'a backup of only unbound PVCs holds no data', archived: volumesOf(['alice', 'ws', true]), cluster: [], created: [alice('ws')], request: 'mover',
    filled: undefined, note: 'the backup holds no volume data (its PVCs were never bound)', warnings: [] },
  { name: 'a dry run names how many new PVCs it would fill', archived: volumesOf(['alice', 'ws']), cluster: [], created: [alice('ws')], request: 'mover', dry: true,
    filled: undefined, note: 'would fill 1 new PVC(s) with their archived data', warnings: [] },
  { name: 'without a mover, new PVCs stay empty and a warning says so', archived: volumesOf(['alice', 'ws']), cluster: [], created: [alice('ws')], request: 'no-mover',
    filled: undefined, note: '1 new PVC(s) were created empty: no volume mover is configured', warnings: ['1 new PVC(s) were created empty: no volume mover is configured'] },
  { name: 'fills the marked PVC this run made', archived: volumesOf(['alice', 'ws']), cluster: [pvc('alice', 'ws', true)], created: [alice('ws')], request: 'mover',
    filled: [alice('ws')], note: undefined, warnings: [] },
  { name: 'fills a PVC an earlier, interrupted run left marked, though this run made nothing', archived: volumesOf(['alice', 'ws']), cluster: [pvc('alice', 'ws', true)], created: [], request: 'mover',
    filled: [alice('ws')], note: undefined, warnings: [] },
  { name: 'leaves a PVC that existed before (never marked) with its data', archived: volumesOf(['alice', 'ws']), cluster: [pvc('alice', 'ws', false)], created: [], request: 'mover',
    filled: undefined, note: 'no PVC to fill: PVCs that already existed keep their data', warnings: [] },
  { name: 'warns about a marked PVC the backup holds no data for, and leaves it', archived: volumesOf(['alice', 'ws']), cluster: [pvc('alice', 'other', true)], created: [], request: 'mover',
    filled: undefined, note: 'no PVC to fill: PVCs that already existed keep their data',
    warnings: ['PVC alice/other waits to be filled, but backup kf-20260101-100000-abcdef holds no data for it; it was left as it is'] },
];

describe('restore: the volume fill', () => {
  for (const row of rows) {
    it(row.name, async () => {
      let filled: PvcName[] | undefined;
      const request: VolumeFillRequest = row.request === 'excluded' ? { includeVolumes: false }
        : row.request === 'no-mover' ? {}
        : { volumes: async (_id, pvcs) => { filled = pvcs; return { restored: pvcs.length }; } };
      const preflight = { backupId: 'kf-20260101-100000-abcdef', manifest: { volumes: row.archived } as Manifest, steps: [], namespaces: new Set(['alice']) };
      const fill = new VolumeFill(kubeHolding(row.cluster) as never, preflight, request, row.dry ?? false, () => undefined);
      const outcome = await fill.fill(row.created);
      expect(filled).to.deep.equal(row.filled);
      expect(outcome.volumes.note).to.equal(row.note);
      expect(outcome.volumes.restored).to.equal(row.filled?.length ?? 0);
      expect(outcome.warnings).to.deep.equal(row.warnings);
    });
  }

  it('marks a new PVC only when this run fills it and the backup holds its data', () => {
    const preflight = { backupId: 'kf-20260101-100000-abcdef', manifest: { volumes: volumesOf(['alice', 'ws']) } as Manifest, steps: [], namespaces: new Set(['alice']) };
    const mover: VolumeFillRequest = { volumes: async () => ({ restored: 0 }) };
    const marked = (fill: VolumeFill, name: string) => Object.keys(fill.withMarkIfFilled(PVCS, pvc('alice', name, false)).metadata.labels ?? {}).length > 0;
    expect(marked(new VolumeFill(kubeHolding([]) as never, preflight, mover, false, () => undefined), 'ws')).to.equal(true);
    expect(marked(new VolumeFill(kubeHolding([]) as never, preflight, mover, false, () => undefined), 'other')).to.equal(false);
    expect(marked(new VolumeFill(kubeHolding([]) as never, preflight, mover, true, () => undefined), 'ws')).to.equal(false);
    expect(marked(new VolumeFill(kubeHolding([]) as never, preflight, {}, false, () => undefined), 'ws')).to.equal(false);
  });

  it('reserves the PVC it marks for a hand-over (a selector no provisioner serves) only when the step hands over', () => {
    const preflight = { backupId: 'kf-20260101-100000-abcdef', manifest: { volumes: volumesOf(['alice', 'ws']) } as Manifest, steps: [], namespaces: new Set(['alice']) };
    const selector = (handsOver: boolean) => {
      const step = Object.assign(async () => ({ restored: 0 }), { handsOver });
      const sent = new VolumeFill(kubeHolding([]) as never, preflight, { volumes: step }, false, () => undefined).withMarkIfFilled(PVCS, pvc('alice', 'ws', false));
      return (sent.spec as { selector?: { matchLabels?: Record<string, string> } } | undefined)?.selector?.matchLabels;
    };
    expect(Object.keys(selector(true) ?? {})).to.deep.equal(['kubeflow-upgrader/handover']);
    expect(selector(false)).to.equal(undefined);
  });

  it('names the PVCs a hand-over step filled by a mover in their own namespace', async () => {
    const preflight = { backupId: 'kf-20260101-100000-abcdef', manifest: { volumes: volumesOf(['alice', 'ws'], ['alice', 'old']) } as Manifest, steps: [], namespaces: new Set(['alice']) };
    const step = Object.assign(async () => ({
      restored: 2,
      pvcs: [{ namespace: 'alice', pvc: 'ws', restoredBy: 'handover' as const, volume: 'pvc-1' }, { namespace: 'alice', pvc: 'old', restoredBy: 'in-namespace' as const }],
    }), { handsOver: true });
    const fill = new VolumeFill(kubeHolding([pvc('alice', 'ws', true), pvc('alice', 'old', true)]) as never, preflight, { volumes: step }, false, () => undefined);
    const outcome = await fill.fill([]);
    expect(outcome.warnings).to.deep.equal(['1 PVC(s) were filled by a mover in their own namespace, not handed over: alice/old']);
  });
});
