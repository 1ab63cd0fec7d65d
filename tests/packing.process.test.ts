// The packed charm is what Juju gets: it must unzip with its modes and run on its own Node.
import { expect } from 'chai';
import { accessSync, constants, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa } from 'execa';
import { parse } from 'yaml';
import { packCharm } from '../scripts/pack.ts';
import { ensureCharmBuilt } from './support/juju/charm-build.ts';
import { runDispatch, unitStatus } from './support/juju/harness.ts';
import { S3_RELATION_ID, s3Relation, track1Data } from './support/juju/scenarios.ts';
import { emptyState } from './support/juju/state.ts';
import { unpackCharm } from './support/juju/unpack.ts';
import { startS3Server } from './support/s3/server.ts';

describe('packed charm', function () {
  let work: string;
  let unpacked: string;
  let names: string[];

  before(async function () {
    // The charm's build is shared by every mocha worker (one builds, the others wait for it): under a loaded machine
    // that wait alone can outlast mocha's default 60 s.
    this.timeout(300_000);
    work = mkdtempSync(join(tmpdir(), 'packed-charm-'));
    const charmDir = await ensureCharmBuilt();
    const file = await packCharm({ charmDir, output: join(work, 'kubeflow-upgrader.charm'), storeRuntime: true });
    unpacked = join(work, 'unpacked');
    names = await unpackCharm(file, unpacked);
  });
  after(() => rmSync(work, { recursive: true, force: true }));

  it('holds dispatch, the YAML files, manifest.yaml, the bundle and bin/node, with executable modes kept', () => {
    expect(names).to.include.members(['dispatch', 'metadata.yaml', 'actions.yaml', 'config.yaml', 'manifest.yaml', 'lib/charm.mjs', 'lib/service.mjs', 'bin/node']);
    for (const executable of ['dispatch', 'bin/node', 'lib/charm.mjs']) accessSync(join(unpacked, executable), constants.X_OK);
    expect(statSync(join(unpacked, 'bin/node')).isSymbolicLink()).to.equal(false);
    const manifest = parse(readFileSync(join(unpacked, 'manifest.yaml'), 'utf8')) as { bases: { name: string; channel: string }[] };
    expect(manifest.bases[0]).to.include({ name: 'ubuntu', channel: '24.04' });
  });

  it('ships Node.js 24 and a dispatch whose last word is a relative executable path (charmcraft entrypoint linter)', async () => {
    const { stdout } = await execa(join(unpacked, 'bin/node'), ['--version']);
    expect(stdout).to.match(/^v24\./);
    const lastLine = readFileSync(join(unpacked, 'dispatch'), 'utf8').trim().split('\n').at(-1)!;
    const entrypoint = lastLine.split(/\s+/).at(-1)!;
    expect(entrypoint).to.match(/^\.\//);
    accessSync(join(unpacked, entrypoint), constants.X_OK);
  });

  it('runs install and update-status through its own dispatch', async () => {
    const s3 = await startS3Server({ buckets: ['kubeflow-backups'] });
    try {
      const installed = await runDispatch(unpacked, emptyState({ relations: [s3Relation(track1Data(s3, 'kubeflow-backups'))] }), { event: 'install' });
      expect(installed.exitCode).to.equal(0);
      expect(installed.state.relations[0]!.localAppData).to.include({ 'lib-version': '1.0' });
      const updated = await runDispatch(unpacked, installed.state, { event: 'update-status' });
      expect(updated.exitCode).to.equal(0);
      expect(unitStatus(updated.state)?.status).to.equal('active');
      expect(S3_RELATION_ID).to.equal(updated.state.relations[0]!.id);
    } finally {
      await s3.stop();
    }
  });
});
