// The error vocabulary: our errors carry their sentence, kind and retryability, and are recognised by class from any
// copy of the module; describe() gives one line for anything thrown.
import { expect } from 'chai';
import { KfuError, describe as describeError, describeInline } from '../../src/errors/index.ts';
import { ActionFailure } from '../../src/charm/action-context.ts';
import { ControlPlaneError } from '../../src/controlplane/engine.ts';

class InputProblem extends KfuError {
  constructor(sentence: string) {
    super(sentence, { kind: 'input' });
  }
}
class NarrowerInputProblem extends InputProblem {}

describe('errors: the vocabulary', () => {
  it('carries the sentence, the kind, retryability and the cause', () => {
    const cause = new Error('ECONNRESET');
    const error = new KfuError('S3 could not be reached.', { kind: 'unavailable', retryable: true, cause });
    expect(error).to.include({ message: 'S3 could not be reached.', kind: 'unavailable', retryable: true, name: 'KfuError' });
    expect(error.cause).to.equal(cause);
    expect(new InputProblem('x').retryable).to.equal(false);
  });

  it('isInstance is true for the class and its subclasses only', () => {
    expect(InputProblem.isInstance(new NarrowerInputProblem('x'))).to.equal(true);
    expect(NarrowerInputProblem.isInstance(new InputProblem('x'))).to.equal(false);
    expect(KfuError.isInstance(new ActionFailure('x'))).to.equal(true);
    expect(ActionFailure.isInstance(new ControlPlaneError('x', 'log'))).to.equal(false);
    expect(ActionFailure.isInstance(new Error('x'))).to.equal(false);
    expect(ActionFailure.isInstance('ActionFailure')).to.equal(false);
  });

  it('isInstance recognises an error made by another copy of the class (a bundle beside its sources)', () => {
    // Another copy: same name, same brand, a different class object, so instanceof says no.
    const Copy = { ActionFailure: class ActionFailure extends KfuError { constructor(s: string) { super(s, { kind: 'failed' }); } } }.ActionFailure;
    const fromCopy = new Copy('stopped');
    expect(fromCopy instanceof ActionFailure).to.equal(false);
    expect(ActionFailure.isInstance(fromCopy)).to.equal(true);
  });

  const lines: [string, unknown, string][] = [
    ['our sentence as it is', new InputProblem('Parameter "x" is bad.'), 'Parameter "x" is bad.'],
    ["a library's first line", new TypeError('x is undefined\n    at y (z.js:1:1)'), 'x is undefined'],
    ['an error without a message: its name', new RangeError(''), 'RangeError'],
    ['a string', 'boom\nmore', 'boom'],
    ['anything else', { weird: true }, 'unknown error'],
  ];
  for (const [name, error, line] of lines) it(`describes ${name}`, () => expect(describeError(error)).to.equal(line));

  it('describeInline drops the full stop, to sit inside another sentence', () => {
    expect(describeInline(new InputProblem('The bucket is gone.'))).to.equal('The bucket is gone');
  });
});
