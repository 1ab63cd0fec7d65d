import { expect } from 'chai';
import { DispatchContextError, parseDispatchContext } from '../../src/juju/context.ts';
import { dispatch } from '../../src/juju/router.ts';

const base = { JUJU_UNIT_NAME: 'kubeflow-upgrader/0', JUJU_MODEL_NAME: 'kubeflow', JUJU_CHARM_DIR: '/charm' };

describe('juju/context and router', () => {
  it('parses a relation hook with its relation facts', () => {
    const ctx = parseDispatchContext({ ...base, JUJU_DISPATCH_PATH: 'hooks/s3-credentials-relation-changed', JUJU_RELATION: 's3-credentials', JUJU_RELATION_ID: 's3-credentials:5', JUJU_REMOTE_APP: 's3-integrator', JUJU_REMOTE_UNIT: 's3-integrator/0' });
    expect(ctx).to.deep.include({ kind: 'hook', event: 's3-credentials-relation-changed', appName: 'kubeflow-upgrader', charmDir: '/charm' });
    expect(ctx.relation).to.deep.equal({ endpoint: 's3-credentials', id: 's3-credentials:5', remoteApp: 's3-integrator', remoteUnit: 's3-integrator/0' });
  });

  it('parses an action and a secret hook', () => {
    expect(parseDispatchContext({ ...base, JUJU_DISPATCH_PATH: 'actions/backup-state', JUJU_ACTION_NAME: 'backup-state', JUJU_ACTION_UUID: '7' }).action).to.deep.equal({ name: 'backup-state', uuid: '7' });
    expect(parseDispatchContext({ ...base, JUJU_DISPATCH_PATH: 'hooks/secret-changed', JUJU_SECRET_ID: 'secret:x', JUJU_SECRET_REVISION: '3' }).secret).to.deep.equal({ id: 'secret:x', revision: 3 });
  });

  it('refuses an incomplete or odd environment with one sentence', () => {
    expect(() => parseDispatchContext({ JUJU_DISPATCH_PATH: 'hooks/install' })).to.throw(DispatchContextError, /^The Juju environment is incomplete: JUJU_UNIT_NAME/);
    expect(() => parseDispatchContext({ ...base, JUJU_DISPATCH_PATH: 'hooks/../../x' })).to.throw(DispatchContextError, /is neither hooks\/<name> nor actions\/<name>\.$/);
  });

  it('routes hooks to handlers, unknown hooks to the fallback, actions to the action entry', async () => {
    const seen: string[] = [];
    const routes = { hooks: { install: async () => void seen.push('install') }, action: async () => (seen.push('action'), 3), otherHook: async () => void seen.push('other') };
    expect(await dispatch(parseDispatchContext({ ...base, JUJU_DISPATCH_PATH: 'hooks/install' }), routes)).to.equal(0);
    expect(await dispatch(parseDispatchContext({ ...base, JUJU_DISPATCH_PATH: 'hooks/kfp-db-relation-joined' }), routes)).to.equal(0);
    expect(await dispatch(parseDispatchContext({ ...base, JUJU_DISPATCH_PATH: 'actions/list-backups' }), routes)).to.equal(3);
    expect(seen).to.deep.equal(['install', 'other', 'action']);
  });
});
