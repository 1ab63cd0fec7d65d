// The CLI's output: plain timestamped progress lines off a terminal, a redrawn bar on one, JSON on stdout with --json,
// and no secret value anywhere.
import { expect } from 'chai';
import { PassThrough } from 'node:stream';
import { formatBytes, Output, table } from '../../src/cli/output.ts';

function capture(options: { json: boolean; tty: boolean }) {
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  const text = { out: '', err: '' };
  stdout.on('data', (d: Buffer) => (text.out += d.toString()));
  stderr.on('data', (d: Buffer) => (text.err += d.toString()));
  let t = 0;
  const output = new Output({ ...options, stdout, stderr, columns: 80, now: () => (t += 500) });
  return { output, text };
}

describe('CLI output', () => {
  it('writes one plain line per progress message when stderr is not a terminal', () => {
    const { output, text } = capture({ json: false, tty: false });
    output.progress('copied the data of 1/4 PVC(s)');
    output.progress('copied the data of 2/4 PVC(s)');
    expect(text.err.split('\n').filter(Boolean)).to.deep.equal(['[   0.5s] copied the data of 1/4 PVC(s)', '[   1.0s] copied the data of 2/4 PVC(s)']);
    expect(text.err).not.to.include('\x1b');
  });

  it('redraws one bar on a terminal, filled by the n/m in the message, and clears it before the result', () => {
    const { output, text } = capture({ json: false, tty: true });
    output.progress('copied the data of 3/4 PVC(s)');
    expect(text.err).to.include(`[${'#'.repeat(18)}${'.'.repeat(6)}]`);
    expect(text.err.startsWith('\r\x1b[2K')).to.equal(true);
    output.result(['done'], {});
    expect(text.err.endsWith('\r\x1b[2K')).to.equal(true);
    expect(text.out).to.equal('done\n');
  });

  it('prints the data as JSON with --json and keeps stdout free of progress', () => {
    const { output, text } = capture({ json: true, tty: false });
    output.progress('listing');
    output.result(['people text'], { backupId: 'kf-20250101-000000-abcdef', objects: 3 });
    expect(JSON.parse(text.out)).to.deep.equal({ backupId: 'kf-20250101-000000-abcdef', objects: 3 });
    expect(text.err).to.include('listing');
  });

  it('redacts hidden values from every stream', () => {
    const { output, text } = capture({ json: true, tty: false });
    output.hide('s3cr3t-value');
    output.progress('using s3cr3t-value');
    output.error('refused s3cr3t-value');
    output.result([], { echo: 'x s3cr3t-value y' });
    expect(text.out + text.err).not.to.include('s3cr3t-value');
    expect(text.out).to.include('[redacted]');
  });

  it('aligns tables (numbers to the right) and formats sizes', () => {
    expect(table([['KIND', 'N'], ['Notebook', 12], ['Profile', 3]])).to.deep.equal(['KIND       N', 'Notebook  12', 'Profile    3']);
    expect([formatBytes(512), formatBytes(2048), formatBytes(5 * 1024 * 1024)]).to.deep.equal(['512 B', '2.0 KiB', '5.0 MiB']);
  });
});
