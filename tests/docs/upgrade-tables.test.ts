// docs/upgrades.md, "Across releases": every row of every release-step table is checked against the release profiles
// the embedded cluster serves — a kind refused is served in N and in no version in N+1, a field dropped is kept by N
// and pruned by N+1, an object refused is accepted by N and refused by N+1, a kind kept keeps every served version.
// A row without a check here fails: the tables cannot say more than is tested.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect } from 'chai';
import type { KubeObject } from '../../src/kube/types.ts';
import { Cluster, CRD_REF, NS_REF } from '../support/cluster/cluster.ts';
import { releaseCrds, type Release } from '../support/cluster/kubeflow/releases.ts';

interface Row { step: string; from: Release; to: Release; kind: string; verdict: string }

function tableRows(): Row[] {
  const text = readFileSync(join(import.meta.dirname, '..', '..', 'docs', 'upgrades.md'), 'utf8');
  const section = text.slice(text.indexOf('## Across releases'), text.indexOf('## What this tool does not cover'));
  const rows: Row[] = [];
  let step: { from: Release; to: Release } | undefined;
  for (const line of section.split('\n')) {
    const heading = /^### (\d+\.\d+) → (\d+\.\d+)$/.exec(line);
    if (heading) step = { from: heading[1] as Release, to: heading[2] as Release };
    const cells = line.split('|').slice(1, -1).map((c) => c.trim());
    if (!step || cells.length !== 3 || cells[0] === 'kind' || cells[0]!.startsWith('---')) continue;
    rows.push({ step: `${step.from} → ${step.to}`, ...step, kind: cells[0]!, verdict: cells[1]! });
  }
  return rows;
}

function clusterOf(release: Release): Cluster {
  const cluster = new Cluster();
  cluster.create(NS_REF, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'alice' } });
  for (const crd of releaseCrds(release)) cluster.create(CRD_REF, crd);
  return cluster;
}

function versions(release: Release, kind: string): string[] {
  const crd = releaseCrds(release).find((c) => (c.spec as { names: { kind: string } }).names.kind === kind);
  return crd ? (crd.spec as { versions: { name: string }[] }).versions.map((v) => v.name) : [];
}

/** creates `object` on a fresh cluster of `release`: the stored object, or the server's refusal as an Error */
function createOn(release: Release, object: KubeObject): KubeObject | Error {
  const cluster = clusterOf(release);
  const def = cluster.resourceByKind(object.apiVersion.split('/')[0]!, object.kind)!;
  try {
    return cluster.create(def, object);
  } catch (error) {
    return error as Error;
  }
}

function at(object: unknown, path: string): unknown {
  let value = object;
  for (const segment of path.split('.')) {
    if (value === undefined) return undefined;
    value = segment.endsWith('[0]') ? (value as Record<string, unknown[]>)[segment.slice(0, -3)]?.[0] : (value as Record<string, unknown>)[segment];
  }
  return value;
}

const meta = { name: 'x', namespace: 'alice' };
const claimsVolume = [{ name: 'v', ephemeral: { volumeClaimTemplate: { spec: { resources: { requests: { storage: '1Gi' }, claims: [{ name: 'gpu' }] } } } } }];
const isvc = (spec: Record<string, unknown>): KubeObject => ({ apiVersion: 'serving.kserve.io/v1beta1', kind: 'InferenceService', metadata: meta, spec });
const ap = (spec: Record<string, unknown>): KubeObject => ({ apiVersion: 'security.istio.io/v1beta1', kind: 'AuthorizationPolicy', metadata: meta, spec });

/** a field N keeps and N+1 prunes: the object that carries it and where */
const drops: Record<string, { object: KubeObject; path: string }> = {
  'spec.explainer.alibi': { object: isvc({ predictor: {}, explainer: { alibi: { type: 'AnchorTabular' } } }), path: 'spec.explainer.alibi' },
  '…ReplicaSpecs.*.template.spec.volumes[].ephemeral.volumeClaimTemplate.spec.resources.claims': {
    object: { apiVersion: 'kubeflow.org/v1', kind: 'PyTorchJob', metadata: meta, spec: { pytorchReplicaSpecs: { Master: { template: { spec: { volumes: claimsVolume } } } } } },
    path: 'spec.pytorchReplicaSpecs.Master.template.spec.volumes[0].ephemeral.volumeClaimTemplate.spec.resources.claims',
  },
  'spec.predictor.volumes[].ephemeral.volumeClaimTemplate.spec.resources.claims': {
    object: isvc({ predictor: { volumes: claimsVolume } }), path: 'spec.predictor.volumes[0].ephemeral.volumeClaimTemplate.spec.resources.claims',
  },
  'spec.predictor.workerSpec.size': { object: isvc({ predictor: { workerSpec: { size: 2 } } }), path: 'spec.predictor.workerSpec.size' },
};

/** an object N accepts and N+1 refuses, per row */
const refusals: Record<string, KubeObject> = {
  'Notebook|refuses a Notebook without containers or with a container without `image`': {
    apiVersion: 'kubeflow.org/v1', kind: 'Notebook', metadata: meta, spec: { template: { spec: { containers: [{ name: 'nb' }] } } },
  },
  'AuthorizationPolicy|refuses a policy with a `when` condition without `key`': ap({ rules: [{ when: [{ values: ['x'] }] }] }),
  'AuthorizationPolicy|refuses a policy with more than one of `selector`, `targetRef`, `targetRefs`': ap({ selector: { matchLabels: { app: 'x' } }, targetRefs: [{ kind: 'Service', group: '', name: 'x' }] }),
};

describe('docs/upgrades.md: the release-step tables hold on the release profiles', () => {
  const rows = tableRows();
  it('has a table for each consecutive pair', () => {
    expect([...new Set(rows.map((r) => r.step))]).to.deep.equal(['1.8 → 1.9', '1.9 → 1.10', '1.10 → 1.11']);
  });
  for (const row of rows) {
    it(`${row.step}: ${row.kind} — ${row.verdict}`, () => {
      if (row.verdict === 'refuses the kind') {
        expect(versions(row.from, row.kind), `served in ${row.from}`).not.to.deep.equal([]);
        expect(versions(row.to, row.kind), `served in ${row.to}`).to.deep.equal([]);
        return;
      }
      if (row.verdict === 'keeps') {
        expect(versions(row.to, row.kind), 'every version still served').to.include.members(versions(row.from, row.kind));
        return;
      }
      const dropped = /^drops `(.+)`$/.exec(row.verdict)?.[1];
      if (dropped) {
        const check = drops[dropped];
        expect(check, `a check for the dropped field ${dropped}`).not.to.equal(undefined);
        const before = createOn(row.from, check!.object);
        const after = createOn(row.to, check!.object);
        expect(before).not.to.be.instanceOf(Error);
        expect(after).not.to.be.instanceOf(Error);
        expect(at(before, check!.path), `kept by ${row.from}`).not.to.equal(undefined);
        expect(at(after, check!.path), `dropped by ${row.to}`).to.equal(undefined);
        return;
      }
      const refused = refusals[`${row.kind}|${row.verdict}`];
      expect(refused, `a check for "${row.verdict}"`).not.to.equal(undefined);
      expect(createOn(row.from, refused!), `accepted by ${row.from}`).not.to.be.instanceOf(Error);
      const answer = createOn(row.to, refused!);
      expect(answer, `refused by ${row.to}`).to.be.instanceOf(Error);
      expect((answer as Error).message).to.contain(`${row.kind}.`).and.to.contain('is invalid');
    });
  }
});
