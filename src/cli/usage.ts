// The shape every command shares: its flags (one table that drives both parsing and --help) and its run function.
// A UsageError is the user's mistake (exit 2, nothing done); any other error is a failed operation (exit 1).
import type { Output } from './output.ts';
import { KfuError } from '../errors/index.ts';

export class UsageError extends KfuError {
  static override readonly errorId = 'UsageError';
  constructor(sentence: string) {
    super(sentence, { kind: 'input' });
  }
}

export interface OptionSpec {
  type: 'string' | 'boolean';
  short?: string;
  /** `<path>`, `<list>`: shown in --help after the flag */
  placeholder?: string;
  description: string;
  /** shown in --help; the parser does not apply it (commands do, so "unset" stays visible) */
  default?: string;
  /** environment variables read when the flag is absent, in order */
  env?: string[];
  multiple?: boolean;
}

export type OptionTable = Record<string, OptionSpec>;

export type Values = Record<string, string | boolean | string[] | undefined>;

export interface CommandContext {
  values: Values;
  positionals: string[];
  env: NodeJS.ProcessEnv;
  out: Output;
}

export interface Command {
  name: string;
  summary: string;
  /** `kubeflow-upgrader backup [options]` */
  synopsis: string;
  /** a paragraph or two after the synopsis */
  description: string;
  /** option groups in the order --help shows them */
  groups: Array<{ title: string; options: OptionTable }>;
  /** names of positional arguments, for the usage line; at most this many are accepted */
  positionals: Array<{ name: string; required: boolean; description: string }>;
  examples: string[];
  /** what 0 and 1 mean for this command (2 is always a usage error) */
  exitCodes: { ok: string; failed: string };
  run(ctx: CommandContext): Promise<number>;
}

export function optionsOf(command: Command): OptionTable {
  return Object.assign({}, ...command.groups.map((g) => g.options)) as OptionTable;
}

export function stringValue(values: Values, name: string): string | undefined {
  const value = values[name];
  return typeof value === 'string' ? value : undefined;
}

/** `a,b , c` → ['a','b','c']; undefined when the flag is absent */
export function listValue(values: Values, name: string): string[] | undefined {
  const value = stringValue(values, name);
  if (value === undefined) return undefined;
  const items = value.split(',').map((s) => s.trim()).filter(Boolean);
  if (items.length === 0) throw new UsageError(`--${name} needs at least one name, as a comma-separated list.`);
  return items;
}

export function positiveInteger(values: Values, name: string, fallback: number, max = 1_000_000): number {
  const text = stringValue(values, name);
  if (text === undefined) return fallback;
  const n = Number(text);
  if (!Number.isInteger(n) || n < 1 || n > max) throw new UsageError(`--${name} must be a whole number from 1 to ${max}, not "${text}".`);
  return n;
}
