// The one place that knows the command-line forms of Juju's hook tools (docs/juju.md). Everything else calls these methods;
// tests replace the executables on PATH, never this module.
import { spawn } from 'node:child_process';
import type { Redactor } from './redact.ts';
import { KfuError } from '../errors/index.ts';

/** Runs one hook tool; `input` goes to stdin (so secret values never appear on a command line). Returns stdout. */
export type ToolRunner = (tool: string, args: string[], input?: string) => Promise<string>;

export class HookToolError extends KfuError {
  static override readonly errorId = 'HookToolError';
  constructor(
    readonly tool: string,
    readonly exitCode: number | undefined,
    readonly stderr: string,
  ) {
    super(`${tool} failed${exitCode === undefined ? '' : ` (exit ${exitCode})`}: ${stderr.trim() || 'no error output'}`, { kind: 'unavailable' });
  }
}

/**
 * Runs a hook tool as a child process (node:child_process: loading execa and its dependencies would cost every hook
 * more than the one spawn it does). Resolves with stdout; a non-zero exit, or a tool that cannot be started,
 * rejects with a HookToolError carrying the exit code and stderr.
 */
export const processRunner: ToolRunner = (tool, args, input) =>
  new Promise<string>((resolve, reject) => {
    const child = spawn(tool, args, { stdio: ['pipe', 'pipe', 'pipe'] });
    const stdout: Buffer[] = [];
    const stderr: Buffer[] = [];
    child.stdout.on('data', (chunk: Buffer) => stdout.push(chunk));
    child.stderr.on('data', (chunk: Buffer) => stderr.push(chunk));
    child.on('error', (error) => reject(new HookToolError(tool, undefined, error.message)));
    child.on('close', (code, signal) => {
      if (code === 0) return resolve(Buffer.concat(stdout).toString('utf8'));
      const text = Buffer.concat(stderr).toString('utf8');
      reject(new HookToolError(tool, code ?? undefined, text || (signal ? `killed by ${signal}` : '')));
    });
    // A tool that does not read its stdin may exit before we finish writing it: that is not an error.
    child.stdin.on('error', () => undefined);
    child.stdin.end(input ?? '');
  });

export type WorkloadStatus = 'maintenance' | 'blocked' | 'waiting' | 'active';
export type LogLevel = 'DEBUG' | 'INFO' | 'WARNING' | 'ERROR';
export type Databag = Record<string, string>;

/** Juju's grammar for one dot-separated part of an action-set key. */
export const ACTION_KEY_PART = /^[a-z0-9](?:[a-z0-9-]*[a-z0-9])?$/;
export const RESERVED_ACTION_KEYS = new Set(['stdout', 'stdout-encoding', 'stderr', 'stderr-encoding']);

export class HookTools {
  constructor(
    private readonly run: ToolRunner = processRunner,
    private readonly redactor?: Redactor,
  ) {}

  /**
   * Every text bound for a hook tool's command line: secret values redacted, and control characters (other than tab
   * and newline) written as visible escapes. A NUL byte cannot be passed as an argument at all (the hook would fail,
   * and Juju would retry it forever), and an ESC would reach the user's terminal; both can come from garbage that a
   * message quotes, such as a relation value.
   */
  private clean(text: string): string {
    const redacted = this.redactor ? this.redactor.redact(text) : text;
    return redacted.replace(/[\u0000-\u0008\u000b-\u001f\u007f]/g, (c) => `\\x${c.charCodeAt(0).toString(16).padStart(2, '0')}`);
  }

  private async json<T>(tool: string, args: string[]): Promise<T> {
    const out = await this.run(tool, args);
    try {
      return JSON.parse(out.trim() === '' ? 'null' : out) as T;
    } catch {
      throw new HookToolError(tool, 0, `printed output that is not JSON: ${out.slice(0, 120)}`);
    }
  }

  async actionGet(): Promise<Record<string, unknown>> {
    return (await this.json<Record<string, unknown> | null>('action-get', ['--format=json'])) ?? {};
  }

  /** Keys must already follow Juju's grammar (see flattenResults); values are sent as given. */
  async actionSet(results: Record<string, string>): Promise<void> {
    const pairs = Object.entries(results).map(([key, value]) => {
      if (RESERVED_ACTION_KEYS.has(key) || !key.split('.').every((part) => ACTION_KEY_PART.test(part))) {
        throw new Error(`action-set key "${key}" is not allowed by Juju`);
      }
      return `${key}=${this.clean(value)}`;
    });
    if (pairs.length > 0) await this.run('action-set', pairs);
  }

  async actionFail(message: string): Promise<void> {
    await this.run('action-fail', ['--', this.clean(message)]);
  }

  async actionLog(message: string): Promise<void> {
    await this.run('action-log', ['--', this.clean(message)]);
  }

  async relationIds(endpoint: string): Promise<string[]> {
    return (await this.json<string[] | null>('relation-ids', [endpoint, '--format=json'])) ?? [];
  }

  /** Remote unit names of a relation. */
  async relationUnits(relationId: string): Promise<string[]> {
    return (await this.json<string[] | null>('relation-list', ['--format=json', '-r', relationId])) ?? [];
  }

  /** The remote application's name of a relation. */
  async relationRemoteApp(relationId: string): Promise<string> {
    return (await this.json<string | null>('relation-list', ['--format=json', '-r', relationId, '--app'])) ?? '';
  }

  /** All keys of one databag: a unit's, or with `app` an application's. */
  async relationGet(relationId: string, unitOrApp: string, options: { app?: boolean } = {}): Promise<Databag> {
    const args = ['--format=json', '-r', relationId, ...(options.app ? ['--app'] : []), '-', unitOrApp];
    return (await this.json<Databag | null>('relation-get', args)) ?? {};
  }

  /** Writes through stdin; an empty string deletes a key. `app` writes the application databag (leader only). */
  async relationSet(relationId: string, data: Databag, options: { app?: boolean } = {}): Promise<void> {
    const args = ['-r', relationId, ...(options.app ? ['--app'] : []), '--file', '-'];
    await this.run('relation-set', args, JSON.stringify(data));
  }

  /**
   * The address this unit is reached at over a relation: the first bind address of `network-get <endpoint> -r <id>`
   * (canonical/operator ops/model.py, Network.bind_address: the first address of the first interface).
   */
  async bindAddress(endpoint: string, relationId: string): Promise<string | undefined> {
    const network = await this.json<{ 'bind-addresses'?: Array<{ addresses?: Array<{ value?: string }> }> } | null>('network-get', [endpoint, '-r', relationId, '--format=json']);
    return network?.['bind-addresses']?.[0]?.addresses?.[0]?.value;
  }

  async configGet(): Promise<Record<string, unknown>> {
    return (await this.json<Record<string, unknown> | null>('config-get', ['--format=json'])) ?? {};
  }

  async isLeader(): Promise<boolean> {
    return (await this.json<boolean>('is-leader', ['--format=json'])) === true;
  }

  async statusSet(status: WorkloadStatus, message: string, options: { application?: boolean } = {}): Promise<void> {
    await this.run('status-set', [`--application=${options.application ? 'true' : 'false'}`, status, '--', this.clean(message)]);
  }

  async applicationVersionSet(version: string): Promise<void> {
    await this.run('application-version-set', ['--', version]);
  }

  async jujuLog(level: LogLevel, message: string): Promise<void> {
    await this.run('juju-log', ['--log-level', level, '--', this.clean(message)]);
  }

  /**
   * A secret's content. `refresh` moves this unit to the newest revision (what secret-changed calls for);
   * `peek` reads the newest without tracking it. Values are registered with the redactor.
   */
  async secretGet(uri: string, options: { refresh?: boolean; peek?: boolean } = {}): Promise<Databag> {
    const args = ['--format=json', ...(options.refresh ? ['--refresh'] : []), ...(options.peek ? ['--peek'] : []), uri];
    const content = (await this.json<Databag | null>('secret-get', args)) ?? {};
    for (const value of Object.values(content)) this.redactor?.add(String(value));
    return content;
  }

  async stateGet(): Promise<Record<string, string>> {
    return (await this.json<Record<string, string> | null>('state-get', ['--format=json'])) ?? {};
  }

  async stateGetKey(key: string): Promise<string | undefined> {
    const value = await this.json<string | null>('state-get', ['--format=json', key]);
    return value ?? undefined;
  }

  /** Writes through stdin; an empty string deletes a key. */
  async stateSet(data: Record<string, string>): Promise<void> {
    await this.run('state-set', ['--file', '-'], JSON.stringify(data));
  }
}
