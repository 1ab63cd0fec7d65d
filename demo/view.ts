// How the demo talks to a person: numbered steps with their time, indented details, and a live line while a step runs
// (redrawn on a terminal, plain lines in a log).
const tty = process.stdout.isTTY === true && process.env.TERM !== 'dumb';
const color = (code: number) => (text: string) => (tty ? `\x1b[${code}m${text}\x1b[0m` : text);
export const bold = color(1);
export const dim = color(2);
export const green = color(32);
export const red = color(31);

export class Steps {
  private index = 0;
  private started = 0;
  private live = false;
  readonly timings: Array<{ title: string; seconds: number }> = [];

  constructor(private readonly total: number) {}

  begin(title: string): void {
    this.index++;
    this.started = performance.now();
    this.current = title;
    process.stdout.write(`\n${bold(`${String(this.index).padStart(2)}/${this.total}`)} ${bold(title)}\n`);
  }

  private current = '';

  /** a detail line under the current step */
  say(line: string): void {
    this.clearLive();
    process.stdout.write(`      ${line}\n`);
  }

  /** a progress line: redrawn in place on a terminal, printed as-is otherwise */
  progress(line: string): void {
    const seconds = ((performance.now() - this.started) / 1000).toFixed(1);
    if (!tty) {
      process.stdout.write(`      ${dim(`[${seconds}s]`)} ${line}\n`);
      return;
    }
    const width = (process.stdout.columns ?? 100) - 8;
    const text = `${seconds}s ${line}`;
    process.stdout.write(`\r\x1b[2K      ${dim(text.length > width ? `${text.slice(0, width - 1)}…` : text)}`);
    this.live = true;
  }

  end(summary: string): number {
    this.clearLive();
    const seconds = (performance.now() - this.started) / 1000;
    this.timings.push({ title: this.current, seconds });
    process.stdout.write(`      ${green('✓')} ${summary} ${dim(`(${seconds.toFixed(1)}s)`)}\n`);
    return seconds;
  }

  private clearLive(): void {
    if (this.live) process.stdout.write('\r\x1b[2K');
    this.live = false;
  }
}

/** ticks `progress` with the elapsed time while `work` runs (the charm's action logs arrive only at its end) */
export async function whileRunning<T>(steps: Steps, line: string, work: Promise<T>): Promise<T> {
  const timer = setInterval(() => steps.progress(line), tty ? 250 : 5000);
  try {
    return await work;
  } finally {
    clearInterval(timer);
  }
}
