// What a blue/green restore across CKF releases meets: the kinds a later release serves in no version and the fields
// its schemas no longer declare, each with its upstream source. Pure data: the release tests
// (tests/restore/release-step.ts) build their objects and expectations from it.
import { RELEASES, type Release } from './releases.ts';

/**
 * What a backup of release `since` meets in every release from `gone` on: a kind the target serves in no version, or a
 * field the target's schema no longer declares (and prunes). These are upstream facts, each with its source; the
 * release tests check each one against the CRDs the clusters serve (tests/releases/upstream-facts.ts: the real CRD
 * files in the CI release suite, the release profiles of ./releases.ts in `npm test`), and docs/operating.md's tables
 * state them (tests/docs/operating.test.ts).
 */
export interface ReleaseChange {
  /** the first release whose clusters hold such an object (serve the kind, declare the field) */
  since: Release;
  /** the first release whose clusters no longer do */
  gone: Release;
  change:
    | { unserved: { crd: string; version: string; kind: string } }
    | { dropped: { crd: string; version: string; path: string; object: 'sk' } };
  source: string;
}

export const RELEASE_CHANGES: readonly ReleaseChange[] = [
  {
    since: '1.8', gone: '1.9', change: { unserved: { crd: 'seldondeployments.machinelearning.seldon.io', version: 'v1', kind: 'SeldonDeployment' } },
    source: 'canonical/bundle-kubeflow releases/1.8/stable/kubeflow/bundle.yaml has seldon-controller-manager (seldon-core-operator track/1.17, src/templates/crd-v1.yaml.j2); releases/1.9/stable/bundle.yaml has none',
  },
  {
    since: '1.8', gone: '1.9', change: { dropped: { crd: 'inferenceservices.serving.kserve.io', version: 'v1beta1', path: 'spec.explainer.alibi', object: 'sk' } },
    source: 'canonical/kserve-operators track/0.11 (CKF 1.8) charms/kserve-controller/src/templates/crd_manifests.yaml.j2 declares explainer.alibi; track/0.13 (CKF 1.9, KServe 0.13, which removed the Alibi explainer) does not',
  },
  {
    since: '1.8', gone: '1.10', change: { unserved: { crd: 'mxjobs.kubeflow.org', version: 'v1', kind: 'MXJob' } },
    source: 'canonical/training-operator track/1.7 (CKF 1.8) and track/1.8 (CKF 1.9) src/templates/crds_manifests.yaml.j2 ship mxjobs.kubeflow.org; track/1.9 (CKF 1.10, 1.11) does not',
  },
  {
    since: '1.8', gone: '1.10',
    change: { dropped: { crd: 'inferenceservices.serving.kserve.io', version: 'v1beta1', path: 'spec.predictor.volumes[0].ephemeral.volumeClaimTemplate.spec.resources.claims', object: 'sk' } },
    source: 'canonical/kserve-operators track/0.11 and track/0.13 crd_manifests.yaml.j2 declare volumes[].ephemeral.volumeClaimTemplate.spec.resources.claims; track/0.14 (CKF 1.10) does not',
  },
  {
    since: '1.10', gone: '1.11', change: { dropped: { crd: 'inferenceservices.serving.kserve.io', version: 'v1beta1', path: 'spec.predictor.workerSpec.size', object: 'sk' } },
    source: 'canonical/kserve-operators track/0.14 (CKF 1.10) declares spec.predictor.workerSpec.size; track/0.15 (CKF 1.11) replaces it with pipelineParallelSize and tensorParallelSize',
  },
];

const at = (release: Release) => RELEASES.indexOf(release);

/** the changes a backup of `from` restored into `to` meets: those made on `from` and gone by `to` */
export function changesBetween(from: Release, to: Release): ReleaseChange[] {
  return RELEASE_CHANGES.filter((c) => at(c.since) <= at(from) && at(from) < at(c.gone) && at(c.gone) <= at(to));
}
