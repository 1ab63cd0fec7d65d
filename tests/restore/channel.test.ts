import { expect } from 'chai';
import { Channel } from '../../src/restore/channel.ts';

describe('restore channel: taking what is ready at once', () => {
  it('waits for the first item, then gives what is queued up to the limit, in order', async () => {
    const channel = new Channel<string>();
    let taken: string[] | undefined;
    const waiting = channel.take(3).then((items) => { taken = items; });
    await new Promise((resolve) => setImmediate(resolve));
    expect(taken, 'nothing queued yet').to.equal(undefined);
    channel.push('a');
    await waiting;
    expect(taken).to.deep.equal(['a']);
    for (const item of ['b', 'c', 'd', 'e']) channel.push(item);
    expect(await channel.take(3)).to.deep.equal(['b', 'c', 'd']);
    expect(await channel.take(3)).to.deep.equal(['e']);
  });

  it('gives what is left after close, then nothing, without waiting', async () => {
    const channel = new Channel<number>();
    channel.push(1);
    channel.push(2);
    channel.close();
    expect(await channel.take(10)).to.deep.equal([1, 2]);
    expect(await channel.take(10)).to.deep.equal([]);
  });

  it('wakes a waiting take on close with nothing', async () => {
    const channel = new Channel<number>();
    const waiting = channel.take(5);
    channel.close();
    expect(await waiting).to.deep.equal([]);
  });
});
