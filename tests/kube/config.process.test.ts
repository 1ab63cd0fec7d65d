import { expect } from 'chai';
import { chooseConfigSource, loadKubeConfig, serviceAccountDir } from '../../src/kube/config.ts';
import { startScriptedApi } from './scripted-api.ts';

describe('kube config source', () => {
  const inPod = { KUBERNETES_SERVICE_HOST: '10.0.0.1', KUBERNETES_SERVICE_PORT: '443' };
  const tokenExists = (path: string) => path === `${serviceAccountDir}/token`;
  it('uses an explicit kubeconfig even inside a pod', () => {
    expect(chooseConfigSource('/tmp/k', inPod, tokenExists)).to.deep.equal({ kind: 'file', path: '/tmp/k' });
  });
  it('uses the service account inside a pod', () => {
    expect(chooseConfigSource(undefined, inPod, tokenExists)).to.deep.equal({ kind: 'in-cluster' });
  });
  it('falls back to KUBECONFIG or ~/.kube/config without a service account or without the service host', () => {
    expect(chooseConfigSource(undefined, inPod, () => false)).to.deep.equal({ kind: 'default' });
    expect(chooseConfigSource(undefined, {}, tokenExists)).to.deep.equal({ kind: 'default' });
  });
  it('says which file or context is missing, in one sentence', async () => {
    expect(() => loadKubeConfig({ kubeconfig: '/nonexistent/kubeconfig' })).to.throw('The kubeconfig /nonexistent/kubeconfig does not exist.');
    const api = await startScriptedApi(() => undefined);
    try {
      expect(() => loadKubeConfig({ kubeconfig: api.kubeconfigPath, context: 'prod' })).to.throw('The kubeconfig has no context named prod (it has: scripted).');
      expect(loadKubeConfig({ kubeconfig: api.kubeconfigPath, context: 'scripted' }).getCurrentContext()).to.equal('scripted');
    } finally {
      await api.stop();
    }
  });
});
