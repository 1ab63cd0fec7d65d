import { expect } from 'chai';
import { KubeClient } from '../../src/kube/client.ts';
import { WaitTimeoutError, type WatchEvent } from '../../src/kube/watch.ts';
import type { ApiResource, KubeObject } from '../../src/kube/types.ts';
import { json, startScriptedApi, status, type ScriptedApi } from './scripted-api.ts';

const namespaces: ApiResource = { group: '', version: 'v1', resource: 'namespaces', kind: 'Namespace', namespaced: false, verbs: ['list', 'watch', 'get'], preferredVersion: 'v1', versions: ['v1'] };

function ns(phase: string, rv: string): KubeObject {
  return { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'alice', uid: 'u-alice', resourceVersion: rv }, status: { phase } };
}

/** A namespace whose phase moves from Pending to Active over a watch stream; 410 on the first watch when asked. */
async function namespaceServer(options: { expireFirstWatch?: boolean; neverActive?: boolean } = {}) {
  let watches = 0;
  return startScriptedApi((req, res) => {
    if (req.query.get('watch')) {
      watches++;
      if (options.expireFirstWatch && watches === 1) return json(res, 410, status(410, 'Expired', 'too old resource version'));
      res.writeHead(200, { 'Content-Type': 'application/json' });
      res.write(`${JSON.stringify({ type: 'MODIFIED', object: ns('Pending', '2') })}\n`);
      if (!options.neverActive) setTimeout(() => res.write(`${JSON.stringify({ type: 'MODIFIED', object: ns('Active', '3') })}\n`), 30);
      return;
    }
    if (req.path.endsWith('/alice')) return json(res, 200, ns('Pending', '1'));
    json(res, 200, { kind: 'NamespaceList', apiVersion: 'v1', metadata: { resourceVersion: '1' }, items: [{ metadata: ns('Pending', '1').metadata, status: { phase: 'Pending' } }] });
  });
}

describe('KubeClient watch and waitFor', () => {
  let api: ScriptedApi | undefined;
  let client: KubeClient | undefined;
  afterEach(async () => {
    client?.close();
    await api?.stop();
    api = client = undefined;
  });

  it('reports what exists as ADDED, then changes as MODIFIED, watching from the list resourceVersion', async () => {
    api = await namespaceServer();
    client = await KubeClient.load({ kubeconfig: api.kubeconfigPath });
    const events: WatchEvent[] = [];
    await new Promise<void>((resolve) => {
      const stop = client!.watch(namespaces, {}, (event) => {
        events.push(event);
        if (events.length === 3) {
          stop();
          resolve();
        }
      });
    });
    expect(events.map((e) => [e.type, e.object.kind, (e.object.status as { phase: string }).phase])).to.deep.equal([
      ['ADDED', 'Namespace', 'Pending'],
      ['MODIFIED', 'Namespace', 'Pending'],
      ['MODIFIED', 'Namespace', 'Active'],
    ]);
    const watch = api.requests.find((r) => r.query.get('watch'));
    expect(watch?.query.get('resourceVersion')).to.equal('1');
    expect(client.requestCounts()).to.include({ list: 1, watch: 1 });
  });

  it('waits for a namespace to become Active, re-listing when the watch has expired', async () => {
    api = await namespaceServer({ expireFirstWatch: true });
    client = await KubeClient.load({ kubeconfig: api.kubeconfigPath });
    const active = await client.waitFor(namespaces, 'alice', undefined, (o) => (o?.status as { phase?: string } | undefined)?.phase === 'Active', { timeoutMs: 5000 });
    expect(active?.metadata.resourceVersion).to.equal('3');
    expect(api.requests.filter((r) => r.query.get('watch'))).to.have.length(2);
    expect(api.requests.find((r) => r.query.get('watch'))?.query.get('fieldSelector')).to.equal('metadata.name=alice');
  });

  it('times out with one sentence naming the object, the condition and what it last saw', async () => {
    api = await namespaceServer({ neverActive: true });
    client = await KubeClient.load({ kubeconfig: api.kubeconfigPath });
    const error = (await client
      .waitFor(namespaces, 'alice', undefined, (o) => (o?.status as { phase?: string } | undefined)?.phase === 'Active', { timeoutMs: 300, description: 'be Active' })
      .catch((e: unknown) => e)) as WaitTimeoutError;
    expect(error).to.be.instanceOf(WaitTimeoutError);
    expect(error.message).to.equal('Timed out after 0.3s waiting for namespaces alice to be Active (last seen with phase Pending).');
  });

  it('stops at once on an error the watch cannot get past', async () => {
    api = await startScriptedApi((_req, res) => json(res, 403, status(403, 'Forbidden', 'namespaces is forbidden')));
    client = await KubeClient.load({ kubeconfig: api.kubeconfigPath });
    const error = (await client.waitFor(namespaces, 'alice', undefined, () => false, { timeoutMs: 5000 }).catch((e: unknown) => e)) as Error;
    expect(error.message).to.match(/^(get namespaces alice|list namespaces) failed: 403 Forbidden/);
  });
});
