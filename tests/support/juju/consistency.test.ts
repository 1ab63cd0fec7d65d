// Upstream: canonical/operator testing/src/scenario/_consistency_checker.py.
// runEvent refuses what Juju could never hand the charm, as ops' Scenario does (consistency.ts), and config-get shows
// the defaults of config.yaml for the options nobody set. The expectations are read off config.yaml, actions.yaml and
// metadata.yaml as Juju reads them, never off the charm's own parsing.
import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import { parse } from 'yaml';
import { runEvent } from './run-event.ts';
import { S3_RELATION_ID, s3Relation } from './scenarios.ts';
import { emptyState, type FakeJujuState } from './state.ts';
import type { DispatchEvent } from './harness.ts';
import { InconsistentStateError } from './consistency.ts';

const config = (parse(readFileSync(new URL('../../../config.yaml', import.meta.url), 'utf8')) as { options: Record<string, { default?: unknown }> }).options;

async function refusal(state: FakeJujuState, event: DispatchEvent): Promise<string> {
  try {
    await runEvent(state, event);
  } catch (error) {
    expect(error).to.be.instanceOf(InconsistentStateError);
    return (error as Error).message;
  }
  throw new Error(`runEvent ran ${event.event} on a state Juju could not give the charm`);
}

describe('runEvent: a state Juju could not give the charm is refused', () => {
  const cases: Array<{ name: string; state: () => FakeJujuState; event: DispatchEvent; says: RegExp }> = [
    { name: 'a config key config.yaml does not declare (a misspelling)', state: () => emptyState({ config: { 'restore-wait-timeuot': 30 } }), event: { event: 'config-changed' }, says: /config option restore-wait-timeuot is not in config\.yaml/ },
    { name: 'an int option given as a string', state: () => emptyState({ config: { 'restore-wait-timeout': '30' } }), event: { event: 'config-changed' }, says: /restore-wait-timeout is an int/ },
    { name: 'an int option given as a fraction', state: () => emptyState({ config: { 'backup-retention': 2.5 } }), event: { event: 'config-changed' }, says: /backup-retention is an int/ },
    { name: 'a boolean option given as a string', state: () => emptyState({ config: { 'protect-crds': 'yes' } }), event: { event: 'config-changed' }, says: /protect-crds is a boolean/ },
    { name: 'a secret option that holds no secret URI', state: () => emptyState({ config: { 'encryption-key': 'hunter2' } }), event: { event: 'config-changed' }, says: /encryption-key is a secret/ },
    { name: 'an action actions.yaml does not declare', state: () => emptyState({ actionParams: {} }), event: { event: 'actions/drop-everything' }, says: /action drop-everything is not declared/ },
    { name: 'a param the action does not declare', state: () => emptyState({ actionParams: { force: true } }), event: { event: 'actions/pre-upgrade-check' }, says: /param force is not a parameter of pre-upgrade-check/ },
    { name: 'a boolean param given as a string', state: () => emptyState({ actionParams: { 'include-volumes': 'yes' } }), event: { event: 'actions/backup-state' }, says: /param include-volumes of backup-state is of type boolean/ },
    { name: 'a required param missing', state: () => emptyState({ actionParams: {} }), event: { event: 'actions/restore-state' }, says: /restore-state requires param backup-id/ },
    { name: 'a relation on an endpoint metadata.yaml does not declare', state: () => emptyState({ relations: [{ ...s3Relation(), id: 'backups:3', endpoint: 'backups' }] }), event: { event: 'update-status' }, says: /relation endpoint backups is not declared/ },
    { name: 'two relations with one id', state: () => emptyState({ relations: [s3Relation(), s3Relation()] }), event: { event: 'update-status' }, says: /claimed by more than one relation/ },
    { name: 'a relation hook without its relation', state: () => emptyState(), event: { event: 's3-credentials-relation-changed', relation: S3_RELATION_ID }, says: /which is not in the state/ },
    { name: 'a relation hook of an undeclared endpoint', state: () => emptyState(), event: { event: 'backups-relation-changed' }, says: /metadata\.yaml does not declare/ },
    { name: 'a secret hook without its secret', state: () => emptyState(), event: { event: 'secret-changed', secret: { id: 'secret:d4lv0ac0000000000001' } }, says: /secret secret:d4lv0ac0000000000001, which is not in the state/ },
    { name: 'a hook Juju does not have', state: () => emptyState(), event: { event: 'backup-now' }, says: /backup-now is not a hook/ },
  ];
  for (const { name, state, event, says } of cases) {
    it(name, async () => {
      expect(await refusal(state(), event)).to.match(says);
    });
  }

  it('shows config-get the defaults of config.yaml for the options the state does not set, and the state\'s value for the rest', async () => {
    const outcome = await runEvent(emptyState({ config: { 'restore-wait-timeout': 45 } }), { event: 'update-status' });
    const defaults = Object.fromEntries(Object.entries(config).filter(([, o]) => o.default !== undefined).map(([k, o]) => [k, o.default]));
    expect(outcome.state.config).to.deep.equal({ ...defaults, 'restore-wait-timeout': 45 });
    expect(outcome.state.config).to.not.have.property('encryption-key');
    const asked = outcome.state.calls.filter((c) => c.tool === 'config-get');
    expect(asked.length).to.be.greaterThan(0);
  });
});
