// What the CLI prints. Results go to stdout (a table for people, one JSON document with --json); progress goes to
// stderr — a redrawn bar on a terminal, plain timestamped lines otherwise — so a pipe or a CI log never sees control
// characters and `--json | jq` always reads clean JSON. Every line passes a redactor holding the secret values in use.
export interface OutputOptions {
  json: boolean;
  /** draw progress as a bar (stderr is a terminal) */
  tty: boolean;
  stdout: NodeJS.WritableStream;
  stderr: NodeJS.WritableStream;
  columns?: number;
  now?: () => number;
}

const BAR_WIDTH = 24;

export class Output {
  private readonly secrets = new Set<string>();
  private readonly started: number;
  private barShown = false;
  private lastFraction: number | undefined;

  constructor(private readonly options: OutputOptions) {
    this.started = this.now();
  }

  get json(): boolean {
    return this.options.json;
  }

  /** values that must never appear in any output (S3 secret key, encryption key) */
  hide(...values: Array<string | undefined>): void {
    for (const v of values) if (v && v.length >= 4) this.secrets.add(v);
  }

  redact(text: string): string {
    let out = text;
    for (const secret of this.secrets) out = out.split(secret).join('[redacted]');
    return out;
  }

  /** One progress message from an engine; "3/12" in it fills the bar. */
  progress(message: string): void {
    const clean = this.redact(message.replace(/\s+/g, ' ').trim());
    const seconds = ((this.now() - this.started) / 1000).toFixed(1);
    if (!this.options.tty) {
      this.options.stderr.write(`[${seconds.padStart(6)}s] ${clean}\n`);
      return;
    }
    const fraction = /(\d+)\/(\d+)/.exec(clean);
    if (fraction && Number(fraction[2]) > 0) this.lastFraction = Math.min(1, Number(fraction[1]) / Number(fraction[2]));
    const filled = Math.round((this.lastFraction ?? 0) * BAR_WIDTH);
    const bar = this.lastFraction === undefined ? '' : `[${'#'.repeat(filled)}${'.'.repeat(BAR_WIDTH - filled)}] `;
    const width = Math.max(20, (this.options.columns ?? 100) - 1);
    const line = `${bar}${seconds}s ${clean}`;
    this.options.stderr.write(`\r\x1b[2K${line.length > width ? `${line.slice(0, width - 1)}…` : line}`);
    this.barShown = true;
  }

  /** Ends the progress bar's line, so the next output starts on a fresh one. */
  endProgress(): void {
    if (this.barShown) this.options.stderr.write('\r\x1b[2K');
    this.barShown = false;
    this.lastFraction = undefined;
  }

  /** The command's result: `lines` for people, `data` as JSON for machines. */
  result(lines: readonly string[], data: unknown): void {
    this.endProgress();
    if (this.options.json) this.options.stdout.write(`${this.redact(JSON.stringify(data, null, 2))}\n`);
    else for (const line of lines) this.options.stdout.write(`${this.redact(line)}\n`);
  }

  /** A failure sentence, on stderr, prefixed with the program's name. */
  error(message: string): void {
    this.endProgress();
    this.options.stderr.write(`kubeflow-upgrader: ${this.redact(message)}\n`);
  }

  /** A warning a person should read; kept out of stdout so --json stays parseable. */
  warn(message: string): void {
    this.endProgress();
    this.options.stderr.write(`warning: ${this.redact(message)}\n`);
  }

  private now(): number {
    return (this.options.now ?? Date.now)();
  }
}

/** Left-aligned text columns, numbers right-aligned; `rows[0]` is the header. */
export function table(rows: ReadonlyArray<ReadonlyArray<string | number>>): string[] {
  const text = rows.map((r) => r.map(String));
  const widths = text[0]?.map((_, i) => Math.max(...text.map((r) => (r[i] ?? '').length))) ?? [];
  const numeric = widths.map((_, i) => rows.slice(1).length > 0 && rows.slice(1).every((r) => typeof r[i] === 'number'));
  return text.map((r) => r.map((cell, i) => (numeric[i] ? cell.padStart(widths[i]!) : cell.padEnd(widths[i]!))).join('  ').trimEnd());
}

export { formatBytes } from '../format-bytes.ts';
