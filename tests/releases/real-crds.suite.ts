// The CI release suite: the blue/green scenario of tests/restore/releases.process.test.ts for each ordered forward pair of
// CKF releases (adjacent steps and skips), on the real CRD files of each release instead of the release profiles. The files are not part of this
// repository: .ci/run points KUBEFLOW_CRDS_DIR at <dir>/<release>/*.yaml (the shared reference data beside the clone).
// Named *.suite.ts so that `npm test` on a fresh clone, which has no such directory, does not load it.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { releaseStep } from '../restore/release-step.ts';
import { RELEASES, forwardPairs } from '../support/cluster/kubeflow/releases.ts';
import { upstreamFacts } from './upstream-facts.ts';

const dir = process.env.KUBEFLOW_CRDS_DIR;
if (!dir) throw new Error('KUBEFLOW_CRDS_DIR is not set: it must name the directory holding one folder of real CRD files per CKF release (1.8, 1.9, 1.10, 1.11).');
for (const release of RELEASES) {
  if (!existsSync(join(dir, release))) throw new Error(`KUBEFLOW_CRDS_DIR=${dir} has no folder ${release}: it must hold one folder of real CRD files per CKF release.`);
}

describe('blue/green across CKF releases (real CRD files)', () => {
  for (const [from, to] of forwardPairs()) {
    upstreamFacts({ kind: 'files', dir }, from, to);
    releaseStep({ kind: 'files', dir }, from, to);
  }
});
