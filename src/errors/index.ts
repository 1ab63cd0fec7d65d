// One vocabulary for the errors the product raises on purpose: each carries the sentence its user reads, what kind of
// failure it is, and whether trying again could help. `describe` turns any error, ours or a library's, into one line.
export { CONNECTION_REFUSED_CODES, CONNECTION_RESET_CODES, TIMEOUT_CODES, TLS_CODES, errorCodes, isNetworkCode } from './codes.ts';

export type ErrorKind =
  /** the request is wrong (a param, a flag, a name that does not exist): nothing was done; fix it and rerun */
  | 'input'
  /** a safety rule said no (the allow-list, a backup's phase, a running control plane): nothing was written */
  | 'refused'
  /** an outside system (S3, the API server, Juju) could not be reached or answered with an error */
  | 'unavailable'
  /** what was read back is not what was written (checksums, format) */
  | 'corrupt'
  /** the work began and did not finish (a Job failed, a wait timed out) */
  | 'failed';

// Marks our errors across module copies (a bundle and its sources, two versions in one process), where instanceof
// would say no: the set of class names along the prototype chain, under a global symbol.
const CLASSES = Symbol.for('kubeflow-upgrader.error-classes');

export interface KfuErrorOptions {
  kind: ErrorKind;
  /** true when the same call may succeed later without anyone changing anything */
  retryable?: boolean;
  cause?: unknown;
}

export class KfuError extends Error {
  readonly kind: ErrorKind;
  readonly retryable: boolean;
  declare readonly [CLASSES]: ReadonlySet<string>;

  /** `sentence` is what the user reads: one sentence, no secret, no stack. */
  constructor(sentence: string, options: KfuErrorOptions) {
    super(sentence, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = new.target.name;
    this.kind = options.kind;
    this.retryable = options.retryable ?? false;
    const names = new Set<string>();
    for (let c: unknown = new.target; typeof c === 'function' && c !== Error; c = Object.getPrototypeOf(c)) names.add((c as { name: string }).name);
    Object.defineProperty(this, CLASSES, { value: names, enumerable: false });
  }

  /** `SomeError.isInstance(e)`: true for this class and its subclasses, from any copy of this module. */
  static isInstance<T extends abstract new (...args: never[]) => KfuError>(this: T, value: unknown): value is InstanceType<T> {
    if (value instanceof this) return true;
    const names = typeof value === 'object' && value !== null ? (value as { [CLASSES]?: unknown })[CLASSES] : undefined;
    return names instanceof Set && names.has(this.name);
  }
}

/** One line for any error: our sentence as it is, a library's first line of message, anything else as text. */
export function describe(error: unknown): string {
  if (error instanceof Error) {
    const line = error.message.split('\n')[0]!.trim();
    return line === '' ? error.name : line;
  }
  if (typeof error === 'string' && error.trim() !== '') return error.split('\n')[0]!.trim();
  return 'unknown error';
}

/** `describe` without its final full stop, to be set inside a sentence of the caller's. */
export function describeInline(error: unknown): string {
  return describe(error).replace(/\.$/, '');
}
