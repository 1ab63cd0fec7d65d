// The --mover-* flags as the volume steps take them: restic repositories unless the operator asks for plain files.
import { expect } from 'chai';
import { moverConfigFrom, moverOptions } from '../../../src/cli/commands/backup-options.ts';

describe('cli mover options', () => {
  it('stores volume data in restic repositories by default, and in plain files with --mover-engine rclone', () => {
    expect(moverOptions['mover-engine']!.default).to.equal('restic');
    expect(moverConfigFrom({}).engine).to.equal('restic');
    expect(moverConfigFrom({ 'mover-engine': 'rclone' }).engine).to.equal('rclone');
  });

  it('refuses an engine it does not know in one sentence', () => {
    expect(() => moverConfigFrom({ 'mover-engine': 'kopia' })).to.throw('--mover-engine must be rclone or restic, not kopia.');
  });
});
