// Progress for long runs: a line at most every `intervalMs` or every `everyObjects` objects, whichever comes first,
// so a user of `juju run` sees movement on both small-and-slow and large-and-fast clusters.
import type { ProgressSink } from '../steps.ts';

export class ProgressTicker {
  private lastAt = 0;
  private lastCount = 0;

  constructor(
    private readonly sink: ProgressSink | undefined,
    private readonly intervalMs = 2000,
    private readonly everyObjects = 500,
    private readonly now: () => number = () => Date.now(),
  ) {
    this.lastAt = now();
  }

  /** Reports when due; `count` is the running total the line is about. */
  async tick(count: number, line: () => string): Promise<void> {
    if (!this.sink) return;
    if (count - this.lastCount < this.everyObjects && this.now() - this.lastAt < this.intervalMs) return;
    this.lastAt = this.now();
    this.lastCount = count;
    await this.sink(line());
  }

  /** Reports now, whatever the timing. */
  async say(message: string): Promise<void> {
    this.lastAt = this.now();
    await this.sink?.(message);
  }
}
