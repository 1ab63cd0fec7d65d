// HookTools against the fake hook tools (real executables, clients of a fake unit agent holding the state): argument
// forms, JSON, Juju's rules.
import { expect } from 'chai';
import { execa } from 'execa';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { HookToolError, HookTools, type ToolRunner } from '../../src/juju/hook-tools.ts';
import { Redactor } from '../../src/juju/redact.ts';
import { installFakeTools } from '../support/juju/fake-tools.ts';
import { s3Relation, S3_RELATION_ID } from '../support/juju/scenarios.ts';
import { emptyState, type FakeJujuState } from '../support/juju/state.ts';
import { startToolServer, type ToolServer } from '../support/juju/tool-server.ts';

describe('juju/hook-tools over the fake hook tools', function () {
  let work: string;
  let bin: string;
  let agent: ToolServer | undefined;
  let env: Record<string, string> = {};

  before(() => {
    work = mkdtempSync(join(tmpdir(), 'hook-tools-'));
    bin = installFakeTools(join(work, 'bin'));
  });
  after(async () => {
    await agent?.close();
    rmSync(work, { recursive: true, force: true });
  });

  /** A fresh agent over `state`; `context` is the hook's environment as the agent knows it (e.g. JUJU_ACTION_NAME). */
  async function tools(state: FakeJujuState, context: Record<string, string> = {}, redactor?: Redactor): Promise<HookTools> {
    await agent?.close();
    agent = await startToolServer(state, context);
    env = { ...agent.env };
    const runner: ToolRunner = async (tool, args, input) => {
      const result = await execa(join(bin, tool), args, { input: input ?? '', env: { ...env }, reject: false });
      if (result.failed) throw new HookToolError(tool, result.exitCode, String(result.stderr));
      return String(result.stdout);
    };
    return new HookTools(runner, redactor);
  }
  const saved = () => agent!.state();

  it('reads config, leadership, relations and databags as JSON', async () => {
    const t = await tools(emptyState({ config: { 'api-concurrency': 4 }, relations: [s3Relation({ bucket: 'b1' })] }));
    expect(await t.configGet()).to.deep.equal({ 'api-concurrency': 4 });
    expect(await t.isLeader()).to.equal(true);
    expect(await t.relationIds('s3-credentials')).to.deep.equal([S3_RELATION_ID]);
    expect(await t.relationRemoteApp(S3_RELATION_ID)).to.equal('s3-integrator');
    expect(await t.relationUnits(S3_RELATION_ID)).to.deep.equal(['s3-integrator/0']);
    expect(await t.relationGet(S3_RELATION_ID, 's3-integrator', { app: true })).to.deep.equal({ bucket: 'b1' });
  });

  it('relation-set goes through stdin, deletes empty values, and --app is refused to a follower', async () => {
    const t = await tools(emptyState({ relations: [s3Relation({}, { old: 'x' })] }));
    await t.relationSet(S3_RELATION_ID, { bucket: 'b', old: '' }, { app: true });
    expect(saved().relations[0]!.localAppData).to.deep.equal({ bucket: 'b' });
    expect(saved().calls.at(-1)!.args).to.deep.equal(['-r', S3_RELATION_ID, '--app', '--file', '-']);
    const follower = await tools(emptyState({ leader: false, relations: [s3Relation()] }));
    const error = await follower.relationSet(S3_RELATION_ID, { bucket: 'b' }, { app: true }).catch((e: unknown) => e);
    expect(error).to.be.instanceOf(HookToolError);
    expect((error as HookToolError).message).to.match(/^relation-set failed \(exit 2\): ERROR cannot write relation settings: this unit is not the leader/);
  });

  it('an unknown relation id fails naming the tool', async () => {
    const t = await tools(emptyState());
    const error = (await t.relationGet('s3-credentials:99', 's3-integrator', { app: true }).catch((e: unknown) => e)) as HookToolError;
    expect(error.tool).to.equal('relation-get');
    expect(error.stderr).to.match(/relation not found/);
  });

  it('action-set enforces the key grammar and reserved keys; action-fail and action-log record', async () => {
    const t = await tools(emptyState({ actionParams: { limit: 3 } }), { JUJU_ACTION_NAME: 'list-backups' });
    expect(await t.actionGet()).to.deep.equal({ limit: 3 });
    await t.actionSet({ 'backups.0.id': 'kf-1', note: 'a=b' });
    await t.actionLog('listed 1');
    await t.actionFail('it broke.');
    expect(saved()).to.deep.include({ actionResults: { 'backups.0.id': 'kf-1', note: 'a=b' }, actionLogs: ['listed 1'], actionFailure: 'it broke.' });
    const badKey = await t.actionSet({ 'Bad_Key': 'x' }).catch((e: Error) => e.message);
    expect(badKey).to.equal('action-set key "Bad_Key" is not allowed by Juju');
    const reserved = await t.actionSet({ stdout: 'x' }).catch((e: Error) => e.message);
    expect(reserved).to.equal('action-set key "stdout" is not allowed by Juju');
  });

  it('secret-get tracks a revision until --refresh; its values are redacted from everything sent to Juju', async () => {
    const redactor = new Redactor();
    const t = await tools(emptyState({ secrets: { 'secret:abc': { revisions: [{ 'secret-key': 'first-secret' }, { 'secret-key': 'second-secret' }], tracked: 1 } } }), {}, redactor);
    expect(await t.secretGet('secret:abc')).to.deep.equal({ 'secret-key': 'first-secret' });
    expect(await t.secretGet('secret:abc', { peek: true })).to.deep.equal({ 'secret-key': 'second-secret' });
    expect(saved().secrets['secret:abc']!.tracked).to.equal(1);
    expect(await t.secretGet('secret:abc', { refresh: true })).to.deep.equal({ 'secret-key': 'second-secret' });
    expect(saved().secrets['secret:abc']!.tracked).to.equal(2);
    await t.jujuLog('WARNING', 'request failed with key first-secret');
    await t.statusSet('blocked', 'bad second-secret');
    expect(saved().logs.at(-1)).to.deep.equal({ level: 'WARNING', message: 'request failed with key ***' });
    expect(saved().statusHistory.at(-1)).to.deep.equal({ application: false, status: 'blocked', message: 'bad ***' });
  });

  it('secret-get as Juju serves a consumer: the first read tracks the latest even with --peek, both flags are refused, a removed tracked revision cannot be read', async () => {
    const t = await tools(emptyState({ secrets: { 'secret:abc': { revisions: [{ key: 'one-value' }, { key: 'two-value' }] } } }));
    expect(await t.secretGet('secret:abc', { peek: true })).to.deep.equal({ key: 'two-value' });
    expect(saved().secrets['secret:abc']!.tracked).to.equal(2);
    const both = await t.secretGet('secret:abc', { peek: true, refresh: true }).catch((e: Error) => e.message);
    expect(both).to.include('specify one of --peek or --refresh but not both');
    const removed = await tools(emptyState({ secrets: { 'secret:abc': { revisions: [{ key: 'one-value' }, { key: 'two-value' }], tracked: 1, removedRevisions: [1] } } }));
    expect(await removed.secretGet('secret:abc').catch((e: Error) => e.message)).to.include('secret revision 1 of "secret:abc" not found');
    expect(await removed.secretGet('secret:abc', { peek: true })).to.deep.equal({ key: 'two-value' });
  });

  it('state-set and state-get keep unit state through stdin', async () => {
    const t = await tools(emptyState());
    await t.stateSet({ 'last-backup': 'kf-1', gone: '' });
    expect(await t.stateGet()).to.deep.equal({ 'last-backup': 'kf-1' });
    expect(await t.stateGetKey('last-backup')).to.equal('kf-1');
    expect(await t.stateGetKey('missing')).to.equal(undefined);
  });

  it('the fake action-set itself refuses bad keys, reserved keys, and use outside an action', async () => {
    await tools(emptyState(), { JUJU_ACTION_NAME: 'list-backups' });
    const call = (args: string[]) => execa(join(bin, 'action-set'), args, { env: { ...env }, reject: false });
    expect((await call(['Bad.key=1'])).stderr).to.match(/^ERROR key "Bad.key" must start and end with lowercase alphanumeric/);
    expect((await call(['stderr=1'])).stderr).to.equal('ERROR cannot set reserved action key "stderr"');
    expect((await call(['ok=a=b'])).exitCode).to.equal(0);
    expect(saved().actionResults).to.deep.equal({ ok: 'a=b' });
    await tools(emptyState());
    expect((await call(['ok=1'])).stderr).to.equal('ERROR action-set is only available in actions');
  });

  it('status-set --application is refused to a follower', async () => {
    const t = await tools(emptyState({ leader: false }));
    const error = await t.statusSet('active', 'ok', { application: true }).catch((e: unknown) => e);
    expect(error).to.be.instanceOf(HookToolError);
    await t.applicationVersionSet('1.2');
    expect(saved().applicationVersion).to.equal('1.2');
  });

  it('passes any argument bytes and stdin unchanged, applies concurrent calls one by one, and records when each ran', async () => {
    await tools(emptyState());
    const awkward = ['a b', '', `q'"$(touch x)\`\\`, 'é\u00ff\n\t', '-', '--', '\u0001\u007f', 'k=v=w', '%s %d', 'x'.repeat(10_000)];
    const logged = await execa(join(bin, 'juju-log'), ['--log-level', 'INFO', '--', ...awkward], { env: { ...env }, reject: false });
    expect(logged.exitCode).to.equal(0);
    expect(saved().logs).to.deep.equal([{ level: 'INFO', message: awkward.join(' ') }]);
    expect(saved().calls[0]!.args.slice(3)).to.deep.equal(awkward);
    const t = new HookTools(async (tool, args, input) => String((await execa(join(bin, tool), args, { input: input ?? '', env: { ...env } })).stdout));
    await Promise.all(Array.from({ length: 20 }, (_, i) => t.stateSet({ [`k${i}`]: `v${i}\u0001é'"` })));
    expect(Object.keys(saved().unitState)).to.have.length(20);
    expect(saved().unitState.k7).to.equal(`v7\u0001é'"`);
    const config = { big: 'y'.repeat(20_000) };
    expect(await (await tools(emptyState({ config }))).configGet()).to.deep.equal(config);
    const call = saved().calls[0]!;
    expect(call.ended! - call.started!).to.be.within(0, 10_000);
    expect(call.started).to.be.within(Date.now() - 60_000, Date.now());
  });
});
