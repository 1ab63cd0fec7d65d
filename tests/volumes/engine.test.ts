// The volume engines as one interface (src/volumes/engine.ts): each engine by its name, the image its Jobs run under a
// config, and what an open run gives the orchestration before any Job starts (each namespace's Secret, which first
// movers run alone). No cluster, no bucket: the oracle is written out here, image by image and row by row.
import { expect } from 'chai';
import { parseEngineName, type ImageConfig } from '../../src/volumes/engine.ts';
import { engineNamed } from '../../src/volumes/engines.ts';
import type { VolumeKube } from '../../src/volumes/kube-port.ts';
import type { EngineRunRequest } from '../../src/volumes/engine.ts';

const RCLONE = 'docker.io/rclone/rclone:1.68.2';
const RESTIC = 'docker.io/restic/restic:0.14.0';
const MIRROR = 'registry.internal:5000/mirror/mover:1';

/** No call reaches the cluster before a run's first mover: any call fails the test. */
const noKube = new Proxy({}, { get: (_target, name) => () => { throw new Error(`the cluster was called (${String(name)})`); } }) as VolumeKube;

const s3 = { endpoint: 'https://s3.example:9000', bucket: 'backups', path: 'kf', accessKey: 'AKIAEXAMPLE', secretKey: 'wJalrXUtnFEMI' };

function request(extra: Partial<EngineRunRequest> = {}): EngineRunRequest {
  return {
    backupId: 'kf-20250131-142500-a1b2c3', pvcs: [{ namespace: 'alice', name: 'ws' }, { namespace: 'bob', name: 'ws' }], s3,
    startTimeoutSeconds: 60, progressIntervalMs: 1000, onCopying: () => undefined, signal: new AbortController().signal, ...extra,
  };
}

function secretData(secret: { data?: unknown; stringData?: unknown }): Record<string, string> {
  const data = (secret.stringData ?? {}) as Record<string, string>;
  const encoded = (secret.data ?? {}) as Record<string, string>;
  return { ...data, ...Object.fromEntries(Object.entries(encoded).map(([k, v]) => [k, Buffer.from(v, 'base64').toString()])) };
}

describe('volumes: the engines behind one interface', function () {
  it('finds each engine by its name, and refuses another name in one sentence naming the setting', function () {
    expect(engineNamed('rclone').name).to.equal('rclone');
    expect(engineNamed('restic').name).to.equal('restic');
    expect(() => engineNamed('kopia')).to.throw('volume-mover-engine must be rclone or restic, not kopia.');
    expect(() => parseEngineName('Restic', '--mover-engine')).to.throw('--mover-engine must be rclone or restic, not Restic.');
  });

  it('pins each engine to its own official image, and keys only restic data to the encryption key', function () {
    expect(engineNamed('rclone')).to.include({ defaultImage: RCLONE, keyed: false });
    expect(engineNamed('restic')).to.include({ defaultImage: RESTIC, keyed: true });
  });

  it('runs the configured image for the configured engine only, and each engine\'s own image otherwise', function () {
    const rows: Array<[engine: string, config: ImageConfig, image: string]> = [
      // volume-mover-image left empty (its default) or unset: each engine its own
      ['restic', { engine: 'restic', image: '' }, RESTIC],
      ['rclone', { engine: 'rclone', image: '' }, RCLONE],
      ['restic', { engine: 'restic' }, RESTIC],
      ['rclone', {}, RCLONE],
      // set: the configured engine's Jobs run it, the other engine's (older backups of the other kind) their own
      ['restic', { engine: 'restic', image: MIRROR }, MIRROR],
      ['rclone', { engine: 'restic', image: MIRROR }, RCLONE],
      ['rclone', { engine: 'rclone', image: MIRROR }, MIRROR],
      ['restic', { engine: 'rclone', image: MIRROR }, RESTIC],
      ['rclone', { image: MIRROR }, MIRROR],
      // set to the other engine's own image (the rclone image was this option's default once): it cannot run this engine
      ['restic', { engine: 'restic', image: RCLONE }, RESTIC],
      ['rclone', { engine: 'rclone', image: RESTIC }, RCLONE],
      ['restic', { engine: 'restic', image: ` ${MIRROR} ` }, MIRROR],
    ];
    for (const [name, config, image] of rows) expect(engineNamed(name).imageFor(config), `${name} under ${JSON.stringify(config)}`).to.equal(image);
  });

  it('rclone: a run without a gateway gives each namespace a Secret with the bucket credentials, and starts its movers together', async function () {
    const run = await engineNamed('rclone').open(noKube, 'backup', request());
    try {
      const secret = run.secret('kfu-creds', 'alice');
      expect(secret.metadata).to.include({ name: 'kfu-creds', namespace: 'alice' });
      expect(Object.values(secretData(secret as never))).to.include(s3.secretKey);
      expect(run.opensAlone('alice')).to.equal(false);
    } finally {
      await run.close();
    }
  });

  it('restic: refuses a run without passwords, gives each namespace its own password, and runs a new repository\'s first mover alone', async function () {
    try {
      await engineNamed('restic').open(noKube, 'backup', request());
      expect.fail('opened without passwords');
    } catch (error) {
      expect((error as Error).message).to.equal('The restic mover needs the repository password.');
    }
    const restic = {
      password: (namespace: string) => `password-of-${namespace}`,
      parents: new Map([['bob/ws', 'f'.repeat(64)]]),
      listBucket: async function* () { /* nothing listed */ },
    };
    const backup = await engineNamed('restic').open(noKube, 'backup', request({ restic }));
    try {
      expect(Object.values(secretData(backup.secret('kfu-creds', 'alice') as never))).to.include('password-of-alice').and.not.include('password-of-bob');
      // alice has no parent snapshot, so her repository may not exist yet; bob's does
      expect(backup.opensAlone('alice')).to.equal(true);
      expect(backup.opensAlone('bob')).to.equal(false);
    } finally {
      await backup.close();
    }
    const restore = await engineNamed('restic').open(noKube, 'restore', request({ restic }));
    try {
      expect(restore.opensAlone('alice')).to.equal(false);
    } finally {
      await restore.close();
    }
  });
});
