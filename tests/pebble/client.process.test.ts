// The Pebble client against the real Pebble (tests/support/pebble): every call the charm makes.
import { expect } from 'chai';
import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { PebbleClient, PebbleError } from '../../src/pebble/client.ts';
import { startPebble, type RunningPebble } from '../support/pebble/pebble.ts';

describe('Pebble client against the real Pebble', function () {
  this.timeout(60_000);
  let pebble: RunningPebble;
  let client: PebbleClient;
  before(async () => {
    pebble = await startPebble();
    client = new PebbleClient(pebble.socket);
  });
  after(() => pebble?.stop());

  it('reads the system info with its boot id', async () => {
    const info = await client.systemInfo();
    expect(info.version).to.equal('v1.14.1');
    expect(info.bootId).to.match(/^[0-9a-f-]{36}$/);
  });

  it('pushes a file with its mode, making its folders, and reads its entry back', async () => {
    const path = join(pebble.root, 'etc', 'app', 'settings.json');
    await client.push(path, '{"a":1}\n', { permissions: '600', makeDirs: true });
    expect(readFileSync(path, 'utf8')).to.equal('{"a":1}\n');
    expect(statSync(path).mode & 0o777).to.equal(0o600);
    expect(await client.stat(path)).to.deep.include({ path, type: 'file', permissions: '600', size: 8 });
    expect(await client.stat(join(pebble.root, 'nothing'))).to.equal(undefined);
    // bytes that are not text arrive as they were
    const binary = Buffer.from([0, 255, 13, 10, 45, 45, 1]);
    await client.push(join(pebble.root, 'bin.dat'), binary);
    expect(readFileSync(join(pebble.root, 'bin.dat')).equals(binary)).to.equal(true);
  });

  it('says in one sentence what Pebble refused', async () => {
    const error = await client.push('relative/path', 'x').then(() => undefined, (e: unknown) => e);
    expect(error).to.be.instanceOf(PebbleError);
    expect((error as Error).message).to.match(/^Pebble could not write relative\/path: /);
  });

  it('adds a layer, replans, and starts its service; a second replan restarts nothing', async () => {
    const marker = join(pebble.root, 'started');
    const layer = [
      'summary: test',
      'services:',
      '  echo:',
      '    override: replace',
      `    command: /bin/sh -c 'echo started >> ${marker}; echo service-up; exec sleep 1000'`,
      '    startup: enabled',
      '',
    ].join('\n');
    await client.addLayer('test', layer);
    expect(await client.planYaml()).to.contain('echo:');
    const change = await client.replan();
    expect(change.ready).to.equal(true);
    await pebble.waitFor(/service-up/);
    const [echo] = await client.services(['echo']);
    expect(echo).to.deep.include({ name: 'echo', startup: 'enabled', current: 'active' });
    await client.addLayer('test', layer);
    await client.replan();
    expect(readFileSync(marker, 'utf8')).to.equal('started\n');
  });

  it('names a socket nobody listens on', async () => {
    const error = await new PebbleClient(join(pebble.root, 'no.socket')).systemInfo().then(() => undefined, (e: unknown) => e);
    expect((error as Error).message).to.match(/^cannot reach Pebble at .*no\.socket \(ENOENT\)$/);
  });
});
