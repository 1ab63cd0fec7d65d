import { expect } from 'chai';
import { mkdtemp, readdir, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { Spool } from '../../src/restore/spool.ts';
import type { KubeObject } from '../../src/kube/types.ts';

const cm = (namespace: string, name: string, value = name, uid?: string): KubeObject => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace, ...(uid ? { uid } : {}) }, data: { value } });

/** Spools an object as the archive would hold it: compact JSON text. */
function put(spool: Spool, step: string, namespace: string, object: KubeObject, text = JSON.stringify(object)): Promise<void> {
  return spool.append(step, namespace, Buffer.from(text), object);
}

describe('restore spool', () => {
  let spool: Spool;
  beforeEach(async () => { spool = await Spool.create(); });
  afterEach(async () => { await spool.remove(); });

  it('reads one namespace of one step back in archive order, with the source uid, however the items were interleaved', async () => {
    // archive order: by kind, namespaces interleaved
    await put(spool, 'configmaps@v1', 'a', cm('a', 'a1', 'a1', 'uid-a1'));
    await put(spool, 'configmaps@v1', 'b', cm('b', 'b1', 'b1', 'uid-b1'));
    await put(spool, 'configmaps@v1', 'a', cm('a', 'a2'));
    await put(spool, 'secrets@v1', 'a', { apiVersion: 'v1', kind: 'Secret', metadata: { name: 's', namespace: 'a', uid: 'uid-s' } });
    await put(spool, 'configmaps@v1', 'a', cm('a', 'a3', 'ü → multi-byte text keeps the byte ranges right', 'uid-a3'));
    await spool.seal();
    const a = spool.readNamespace('configmaps@v1', 'a');
    expect(a.map((i) => [i.uid, i.object.metadata.name])).to.deep.equal([['uid-a1', 'a1'], [undefined, 'a2'], ['uid-a3', 'a3']]);
    // what the restore writes carries no source uid; the item keeps it apart
    expect(a[0]!.object.metadata.uid).to.equal(undefined);
    expect(a[2]!.object.data).to.deep.equal({ value: 'ü → multi-byte text keeps the byte ranges right' });
    expect(spool.readNamespace('configmaps@v1', 'b').map((i) => i.object.metadata.name)).to.deep.equal(['b1']);
    expect(spool.readNamespace('secrets@v1', 'a').map((i) => i.uid)).to.deep.equal(['uid-s']);
    expect(spool.readNamespace('secrets@v1', 'b')).to.deep.equal([]);
    expect(spool.readNamespace('rolebindings@v1', 'a')).to.deep.equal([]);
    expect(spool.count('configmaps@v1')).to.equal(4);
    expect(spool.namespaces('configmaps@v1').sort()).to.deep.equal(['a', 'b']);
  });

  it('reads a whole step, or only the namespaces asked for', async () => {
    for (const ns of ['a', 'b', 'c']) for (const n of [1, 2]) await put(spool, 'configmaps@v1', ns, cm(ns, `${ns}${n}`));
    await spool.seal();
    const names = async (namespaces?: ReadonlySet<string>) => {
      const out: string[] = [];
      for await (const item of spool.read('configmaps@v1', namespaces)) out.push(item.object.metadata.name!);
      return out.sort();
    };
    expect(await names()).to.deep.equal(['a1', 'a2', 'b1', 'b2', 'c1', 'c2']);
    expect(await names(new Set(['c', 'a']))).to.deep.equal(['a1', 'a2', 'c1', 'c2']);
  });

  it('gives each object back as the restore writes it, with the uid it had in the source cluster', async () => {
    const archived: KubeObject = {
      apiVersion: 'v1',
      kind: 'PersistentVolumeClaim',
      metadata: {
        name: 'workspace', namespace: 'a', uid: 'uid-pvc', resourceVersion: '42', creationTimestamp: '2026-01-01T00:00:00Z',
        managedFields: [{ manager: 'kubectl' }], annotations: { 'pv.kubernetes.io/bind-completed': 'yes', keep: 'me' },
        ownerReferences: [
          { apiVersion: 'kubeflow.org/v1', kind: 'Notebook', name: 'nb', uid: 'uid-nb' },
          { apiVersion: 'kubeflow.org/v1', kind: 'Profile', name: 'a', uid: 'uid-profile', controller: true },
        ],
      },
      spec: { volumeName: 'pv-of-the-source', resources: { requests: { storage: '1Gi' } } },
      status: { phase: 'Bound' },
    } as KubeObject;
    await put(spool, 'persistentvolumeclaims@v1', 'a', archived);
    await spool.seal();
    const [item] = spool.readNamespace('persistentvolumeclaims@v1', 'a');
    expect(item!.uid).to.equal('uid-pvc');
    expect(item!.object).to.deep.equal({
      apiVersion: 'v1',
      kind: 'PersistentVolumeClaim',
      metadata: {
        name: 'workspace', namespace: 'a', annotations: { keep: 'me' },
        ownerReferences: [{ apiVersion: 'kubeflow.org/v1', kind: 'Notebook', name: 'nb', uid: 'uid-nb' }],
      },
      spec: { resources: { requests: { storage: '1Gi' } } },
    });
  });

  it('keeps the archived status of a kind whose controller reads it only when there is one to write', async () => {
    const job = (name: string, status?: unknown): KubeObject => ({ apiVersion: 'kubeflow.org/v1', kind: 'PyTorchJob', metadata: { name, namespace: 'a' }, spec: {}, ...(status === undefined ? {} : { status }) } as KubeObject);
    await put(spool, 'pytorchjobs.kubeflow.org@v1', 'a', job('done', { conditions: [{ type: 'Succeeded', status: 'True' }] }));
    await put(spool, 'pytorchjobs.kubeflow.org@v1', 'a', job('empty', {}));
    await put(spool, 'pytorchjobs.kubeflow.org@v1', 'a', job('none'));
    await put(spool, 'configmaps@v1', 'a', { ...cm('a', 'c'), status: { x: 1 } } as KubeObject);
    await spool.seal();
    const jobs = spool.readNamespace('pytorchjobs.kubeflow.org@v1', 'a');
    expect(jobs.map((i) => [i.object.metadata.name, i.status])).to.deep.equal([
      ['done', { conditions: [{ type: 'Succeeded', status: 'True' }] }], ['empty', undefined], ['none', undefined],
    ]);
    expect(spool.readNamespace('configmaps@v1', 'a')[0]!.status).to.equal(undefined);
  });

  it('keeps lines intact when an archived text spans lines (pretty-printed) or the spool is written in many batches', async () => {
    const pretty = cm('a', 'pretty', 'line one\nline two', 'uid-pretty');
    await put(spool, 'configmaps@v1', 'a', cm('a', 'before'));
    await put(spool, 'configmaps@v1', 'a', pretty, JSON.stringify(pretty, null, 2));
    // ~3 MiB of objects: a dozen batches, with namespaces interleaved across their boundaries
    const big = 'x'.repeat(10_000);
    for (let i = 0; i < 300; i++) await put(spool, 'configmaps@v1', i % 2 ? 'b' : 'a', cm(i % 2 ? 'b' : 'a', `big-${i}`, `${i}${big}`));
    await spool.seal();
    const a = spool.readNamespace('configmaps@v1', 'a');
    expect(a.slice(0, 2).map((i) => [i.object.metadata.name, i.object.data])).to.deep.equal([['before', { value: 'before' }], ['pretty', { value: 'line one\nline two' }]]);
    expect(a[1]!.uid).to.equal('uid-pretty');
    const b = spool.readNamespace('configmaps@v1', 'b');
    expect(a).to.have.length(152);
    expect(b).to.have.length(150);
    expect(b.every((item, n) => item.object.metadata.name === `big-${2 * n + 1}` && (item.object.data as { value: string }).value === `${2 * n + 1}${big}`)).to.equal(true);
  });

  it('gives every namespace its own lines whatever order they are read in, across the blocks its reads take', async () => {
    // ~400 KiB in three steps filed one after another, 400 namespaces each: several read blocks per step, and lines
    // that straddle a block's end; read in the file's order, backwards, and in a shuffled order
    const namespaces = Array.from({ length: 400 }, (_, i) => `ns-${String(i).padStart(3, '0')}`);
    const steps = ['configmaps@v1', 'secrets@v1', 'services@v1'];
    for (const step of steps) for (const ns of namespaces) for (const n of [1, 2]) await put(spool, step, ns, cm(ns, `${step}-${n}`, `${ns} ${step} ${n} ${'ü'.repeat((ns.length * n) % 97)}`));
    await spool.seal();
    const check = async (order: readonly string[]) => {
      for (const ns of order) {
        for (const step of steps) {
          const items = spool.readNamespace(step, ns);
          expect(items.map((i) => [i.object.metadata.namespace, i.object.metadata.name, (i.object.data as { value: string }).value.split(' ').slice(0, 3).join(' ')]))
            .to.deep.equal([1, 2].map((n) => [ns, `${step}-${n}`, `${ns} ${step} ${n}`]));
        }
      }
    };
    await check(namespaces);
    await check([...namespaces].reverse());
    await check(namespaces.map((ns, i) => [ns, (i * 7919) % namespaces.length] as const).sort((x, y) => x[1] - y[1]).map(([ns]) => ns));
  });

  it('keeps its file in a private folder and removes the folder', async () => {
    const parent = await mkdtemp(join(tmpdir(), 'spool-test-'));
    try {
      const own = await Spool.create(parent);
      const [folder] = await readdir(parent);
      expect((await stat(join(parent, folder!))).mode & 0o777).to.equal(0o700);
      await put(own, 'configmaps@v1', 'a', cm('a', 'x'));
      await own.seal();
      own.readNamespace('configmaps@v1', 'a');
      await own.remove();
      expect(await readdir(parent)).to.deep.equal([]);
    } finally {
      await rm(parent, { recursive: true, force: true });
    }
  });
});
