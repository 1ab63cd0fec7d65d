// Where the demo says its backup went: once through the charm's own settings, from the answer its s3-integrator gives.
// The demo's s3-integrator is the real one's defaults (no `path`), so the charm's `s3-path` is the prefix and the
// location names the Velero layout's `backups/` folder once: s3://kubeflow-backups/kubeflow-upgrader/backups/<id>/.
// Before, the tests' usual answer (`path: backups`) made it print s3://kubeflow-backups/backups/backups/<id>/.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect } from 'chai';
import { parse as parseYaml } from 'yaml';
import { demoS3Databag, S3_PREFIX } from '../../demo/s3.ts';
import { openBackupStore } from '../../src/store/open.ts';
import { requirerRequest, settingsFromProvider } from '../../src/store/settings.ts';

const s3 = { endpoint: 'http://127.0.0.1:9000', accessKeyId: 'demo-key', secretAccessKey: 'demo-secret' };
const BUCKET = 'kubeflow-backups';
const ID = 'kf-20261208-000113-7f9813';
const config = parseYaml(readFileSync(join(import.meta.dirname, '..', '..', 'config.yaml'), 'utf8')) as { options: Record<string, { default?: unknown }> };

describe('demo: the backup location it prints', () => {
  const databag = demoS3Databag(s3, BUCKET);
  const asked = requirerRequest({ bucket: '', path: String(config.options['s3-path']!.default) });
  const readiness = settingsFromProvider({ databag }, { bucket: asked.bucket!, path: asked.path! });

  it("answers as s3-integrator with its defaults: no path of its own, so the charm's s3-path is the prefix", () => {
    expect(databag).not.to.have.property('path');
    expect(readiness.state).to.equal('ready');
    if (readiness.state !== 'ready') return;
    expect(readiness.settings.path).to.equal(config.options['s3-path']!.default);
    expect(S3_PREFIX, 'the prefix the demo prints for the CLI').to.equal(readiness.settings.path);
  });

  it('names the backups/ folder once in the location backup-state reports', () => {
    if (readiness.state !== 'ready') throw new Error(`not ready: ${JSON.stringify(readiness)}`);
    const store = openBackupStore(readiness.settings);
    const location = store.url(store.keys(ID).folder);
    expect(location).to.equal(`s3://${BUCKET}/${S3_PREFIX}/backups/${ID}/`);
    expect(location.split('/').filter((segment) => segment === 'backups')).to.have.length(1);
  });
});
