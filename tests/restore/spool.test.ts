import { expect } from 'chai';
import { mkdtemp, readdir, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { Spool } from '../../src/restore/spool.ts';
import type { KubeObject } from '../../src/kube/types.ts';

const cm = (namespace: string, name: string, value = name): KubeObject => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace }, data: { value } });

describe('restore spool', () => {
  let spool: Spool;
  beforeEach(async () => { spool = await Spool.create(); });
  afterEach(async () => { await spool.remove(); });

  it('reads one namespace of one step back in archive order, with the source uid, however the items were interleaved', async () => {
    // archive order: by kind, namespaces interleaved
    await spool.append('configmaps@v1', 'a', 'uid-a1', cm('a', 'a1'));
    await spool.append('configmaps@v1', 'b', 'uid-b1', cm('b', 'b1'));
    await spool.append('configmaps@v1', 'a', undefined, cm('a', 'a2'));
    await spool.append('secrets@v1', 'a', 'uid-s', { apiVersion: 'v1', kind: 'Secret', metadata: { name: 's', namespace: 'a' } });
    await spool.append('configmaps@v1', 'a', 'uid-a3', cm('a', 'a3', 'ü → multi-byte text keeps the byte ranges right'));
    await spool.seal();
    const a = await spool.readNamespace('configmaps@v1', 'a');
    expect(a.map((i) => [i.uid, i.object.metadata.name])).to.deep.equal([['uid-a1', 'a1'], [undefined, 'a2'], ['uid-a3', 'a3']]);
    expect(a[2]!.object.data).to.deep.equal({ value: 'ü → multi-byte text keeps the byte ranges right' });
    expect((await spool.readNamespace('configmaps@v1', 'b')).map((i) => i.object.metadata.name)).to.deep.equal(['b1']);
    expect((await spool.readNamespace('secrets@v1', 'a')).map((i) => i.uid)).to.deep.equal(['uid-s']);
    expect(await spool.readNamespace('secrets@v1', 'b')).to.deep.equal([]);
    expect(await spool.readNamespace('rolebindings@v1', 'a')).to.deep.equal([]);
    expect(spool.count('configmaps@v1')).to.equal(4);
    expect(spool.namespaces('configmaps@v1').sort()).to.deep.equal(['a', 'b']);
  });

  it('reads a whole step, or only the namespaces asked for', async () => {
    for (const ns of ['a', 'b', 'c']) for (const n of [1, 2]) await spool.append('configmaps@v1', ns, undefined, cm(ns, `${ns}${n}`));
    await spool.seal();
    const names = async (namespaces?: ReadonlySet<string>) => {
      const out: string[] = [];
      for await (const item of spool.read('configmaps@v1', namespaces)) out.push(item.object.metadata.name!);
      return out.sort();
    };
    expect(await names()).to.deep.equal(['a1', 'a2', 'b1', 'b2', 'c1', 'c2']);
    expect(await names(new Set(['c', 'a']))).to.deep.equal(['a1', 'a2', 'c1', 'c2']);
  });

  it('serializes an object when it is appended, so the caller may share or change it afterwards', async () => {
    const object = cm('a', 'x', 'before');
    await spool.append('configmaps@v1', 'a', undefined, object);
    (object.data as Record<string, string>).value = 'after';
    await spool.seal();
    expect((await spool.readNamespace('configmaps@v1', 'a'))[0]!.object.data).to.deep.equal({ value: 'before' });
  });

  it('keeps its file in a private folder and removes the folder', async () => {
    const parent = await mkdtemp(join(tmpdir(), 'spool-test-'));
    try {
      const own = await Spool.create(parent);
      const [folder] = await readdir(parent);
      expect((await stat(join(parent, folder!))).mode & 0o777).to.equal(0o700);
      await own.append('configmaps@v1', 'a', undefined, cm('a', 'x'));
      await own.seal();
      await own.readNamespace('configmaps@v1', 'a');
      await own.remove();
      expect(await readdir(parent)).to.deep.equal([]);
    } finally {
      await rm(parent, { recursive: true, force: true });
    }
  });
});
