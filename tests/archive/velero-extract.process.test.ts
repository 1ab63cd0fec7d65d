// Our tarball, extracted as Velero's restore extracts it: by an unprivileged process (Velero's image runs as uid
// 65532), each parent folder made with the mode of the entry inside it. The extractor is
// tests/support/velero/extract-like-velero.mjs; it names the Velero files it follows.
import { expect } from 'chai';
import { spawn } from 'node:child_process';
import { chmodSync, chownSync, copyFileSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { gunzipSync, gzipSync } from 'node:zlib';
import tar from 'tar-stream';
import { build } from 'esbuild';
import { backupKeys } from '../../src/store/layout.ts';
import type { ObjectStore } from '../../src/store/objects.ts';
import type { S3ServerHandle } from '../support/s3/server.ts';
import { veleroRestoreOrder } from '../support/velero/restore-order.ts';
import { CONFIGMAPS, NOTEBOOKS, PROFILES, PVCS, ROLEBINDINGS, ROLES, SECRETS, boundPvc, colonRbac, notebook, profile, secret, startStore } from './fixtures.ts';
import { backupStore, startWriter } from '../support/backup-store.ts';

const VELERO_UID = 65532;
/** Velero's user when we may switch to it (CI runs as root); otherwise our own, which is not root either. */
const RUN_AS = process.getuid!() === 0 ? VELERO_UID : process.getuid!();
const extractorSource = new URL('../support/velero/extract-like-velero.mjs', import.meta.url).pathname;

/**
 * What uid 65532 runs, where it can reach it: the clone may lie where other users cannot enter (a `mktemp -d` folder,
 * /root), so this Node binary and the extractor, bundled with its one dependency, are staged in a folder of their own
 * that everyone may read and run.
 */
interface Staged { node: string; extractor: string; dir: string }
async function stageForVelero(): Promise<Staged> {
  const dir = mkdtempSync(join(tmpdir(), 'velero-tools-'));
  chmodSync(dir, 0o755);
  const node = join(dir, 'node');
  copyFileSync(process.execPath, node);
  chmodSync(node, 0o755);
  const extractor = join(dir, 'extract-like-velero.mjs');
  // tar-stream's CommonJS dependencies require Node's built-ins: the ES module bundle gives them a require to do it with
  await build({
    entryPoints: [extractorSource], bundle: true, platform: 'node', format: 'esm', outfile: extractor, logLevel: 'silent',
    banner: { js: "import { createRequire } from 'node:module'; const require = createRequire(import.meta.url);" },
  });
  chmodSync(extractor, 0o644);
  return { node, extractor, dir };
}
let staged: Staged;

interface Extraction {
  ok: boolean;
  uid: number;
  code?: string;
  message?: string;
  catalogue?: Record<string, Record<string, Record<string, { metadata: { name: string } }>>>;
}

/** Runs the Velero-like extractor on `tarball` as uid 65532, in a folder that user owns (as Velero's temp folder is). */
async function extractAsVelero(tarball: Buffer): Promise<Extraction> {
  const parent = mkdtempSync(join(tmpdir(), 'velero-extract-'));
  try {
    const file = join(parent, 'backup.tar.gz');
    writeFileSync(file, tarball, { mode: 0o644 });
    if (RUN_AS === VELERO_UID) chownSync(parent, VELERO_UID, VELERO_UID);
    const as = RUN_AS === VELERO_UID ? { uid: VELERO_UID, gid: VELERO_UID } : {};
    const child = spawn(staged.node, [staged.extractor, file, parent], { ...as, stdio: ['ignore', 'pipe', 'pipe'] });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout.on('data', (c: Buffer) => out.push(c));
    child.stderr.on('data', (c: Buffer) => err.push(c));
    const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
    if (code !== 0) throw new Error(`the extractor exited with ${code}: ${Buffer.concat(err).toString()}`);
    return JSON.parse(Buffer.concat(out).toString()) as Extraction;
  } finally {
    rmSync(parent, { recursive: true, force: true });
  }
}

/** The same tarball with every entry's mode replaced: the archives we wrote before, at 0644. */
async function withMode(gz: Buffer, mode: number): Promise<Buffer> {
  const extract = tar.extract();
  const pack = tar.pack();
  Readable.from([gunzipSync(gz)]).pipe(extract as never);
  const chunks: Buffer[] = [];
  pack.on('data', (c: unknown) => { chunks.push(c as Buffer); });
  const ended = new Promise<void>((resolve) => pack.on('end', () => resolve()));
  for await (const entry of extract) {
    const parts: Buffer[] = [];
    for await (const c of entry) parts.push(c as Buffer);
    pack.entry({ ...entry.header, mode }, Buffer.concat(parts));
  }
  pack.finalize();
  await ended;
  return gzipSync(Buffer.concat(chunks));
}

describe('archive: extracted by Velero rules as uid 65532', () => {
  let server: S3ServerHandle;
  let store: ObjectStore;
  let tarball: Buffer;
  before(async () => {
    staged = await stageForVelero();
    ({ server, store } = await startStore('velero-extract'));
    const w = await startWriter(backupStore(store), { toolVersion: '0.1.0', scope: { action: 'backup-state', namespaces: ['alice'] }, encryptionKey: 'correct horse battery staple',
    });
    await w.addItem(PROFILES, profile('alice'));
    await w.addItem(NOTEBOOKS, notebook('alice', 'nb-1'));
    await w.addItem(CONFIGMAPS, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'settings', namespace: 'alice' }, data: { a: 'b' } });
    await w.addItem(SECRETS, secret('alice', 'db', { password: 'hunter2' }));
    await w.addItem(PVCS, boundPvc('alice', 'workspace'));
    const rbac = colonRbac('alice');
    await w.addItem(ROLES, rbac.role);
    await w.addItem(ROLEBINDINGS, rbac.binding);
    const { id } = await w.commit();
    tarball = await store.getBytes(backupKeys(id).tarball);
  });
  after(async () => {
    await server?.stop();
    if (staged) rmSync(staged.dir, { recursive: true, force: true });
  });

  it('extracts and parses every item of our tarball but the sealed Secrets, names with ":" as they are', async () => {
    const result = await extractAsVelero(tarball);
    expect(result, result.message).to.include({ ok: true, uid: RUN_AS });
    expect(result.uid).to.not.equal(0);
    const catalogue = result.catalogue!;
    const names = (folder: string, ns: string) => Object.keys(catalogue[folder]?.[ns] ?? {});
    // no secrets/ folder at all: Velero would have written their ciphertext into the cluster as values
    expect(Object.keys(catalogue).sort()).to.deep.equal([
      'configmaps', 'notebooks.kubeflow.org', 'persistentvolumeclaims', 'profiles.kubeflow.org',
      'rolebindings.rbac.authorization.k8s.io', 'roles.rbac.authorization.k8s.io',
    ]);
    expect(names('profiles.kubeflow.org', '')).to.deep.equal(['alice']);
    expect(names('notebooks.kubeflow.org', 'alice')).to.deep.equal(['nb-1']);
    expect(names('rolebindings.rbac.authorization.k8s.io', 'alice')).to.deep.equal(['system:image-pullers']);
    expect(names('roles.rbac.authorization.k8s.io', 'alice')).to.deep.equal(['system:image-puller']);
    expect(catalogue['configmaps']!['alice']!['settings']!.metadata.name).to.equal('settings');
    const pvc = catalogue['persistentvolumeclaims']!['alice']!['workspace'] as unknown as { spec: Record<string, unknown>; metadata: { annotations: Record<string, string> } };
    // the writer archives what it is given; the backup engine unbinds a PVC first (tests/backup/engine.process.test.ts)
    expect(pvc.spec).to.include({ storageClassName: 'standard' });
    expect(pvc.metadata.annotations).to.include({ note: 'kept' });
  });

  it('would be restored by Velero before its Profiles exist, in namespaces Velero makes', async () => {
    const result = await extractAsVelero(tarball);
    const folders = Object.keys(result.catalogue!);
    // no Namespace items: Velero makes each namespace bare, before the first item in it
    expect(folders).to.not.include('namespaces');
    // Velero's priorities first, the rest alphabetically: Notebooks, and everything else of a profile namespace, are
    // created before any Profile, in namespaces the profile controller will then refuse as not its own
    expect(veleroRestoreOrder(folders)).to.deep.equal([
      'persistentvolumeclaims', 'roles.rbac.authorization.k8s.io', 'rolebindings.rbac.authorization.k8s.io', 'configmaps',
      'notebooks.kubeflow.org', 'profiles.kubeflow.org',
    ]);
  });

  it('without an encryption key, Secrets are in resources/, where Velero finds them', async () => {
    const w = await startWriter(backupStore(store), { toolVersion: '0.1.0', scope: { action: 'backup-state', namespaces: ['alice'] } });
    await w.addItem(PROFILES, profile('alice'));
    await w.addItem(SECRETS, secret('alice', 'db', { password: 'hunter2' }));
    const { id } = await w.commit();
    const result = await extractAsVelero(await store.getBytes(backupKeys(id).tarball));
    expect(Object.keys(result.catalogue!['secrets']!['alice']!)).to.deep.equal(['db']);
  });

  it('is the instrument that fails on 0644 entries, as a non-root Velero did on our old archives', async () => {
    const result = await extractAsVelero(await withMode(tarball, 0o644));
    expect(result).to.include({ ok: false, uid: RUN_AS, code: 'EACCES' });
  });
});
