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

// Marks our errors across module copies (two versions of the product in one process), where instanceof would say no.
// Class names cannot serve: the bundle's minifier renames classes, and two of them may end up with the same name. So a
// class that wants to be recognised that way declares a stable `errorId` of its own.
const IDS = Symbol.for('kubeflow-upgrader.error-ids');

export interface KfuErrorOptions {
  kind: ErrorKind;
  /** true when the same call may succeed later without anyone changing anything */
  retryable?: boolean;
  cause?: unknown;
}

function ownId(c: unknown): string | undefined {
  return typeof c === 'function' && Object.hasOwn(c, 'errorId') ? String((c as unknown as { errorId: unknown }).errorId) : undefined;
}

export class KfuError extends Error {
  static readonly errorId: string = 'KfuError';
  readonly kind: ErrorKind;
  readonly retryable: boolean;
  declare readonly [IDS]: ReadonlySet<string>;

  /** `sentence` is what the user reads: one sentence, no secret, no stack. */
  constructor(sentence: string, options: KfuErrorOptions) {
    super(sentence, options.cause === undefined ? undefined : { cause: options.cause });
    this.kind = options.kind;
    this.retryable = options.retryable ?? false;
    const ids = new Set<string>();
    for (let c: unknown = new.target; typeof c === 'function' && c !== Error; c = Object.getPrototypeOf(c)) {
      const id = ownId(c);
      if (id) ids.add(id);
    }
    Object.defineProperty(this, IDS, { value: ids, enumerable: false });
    // The nearest stable id, never a minified class name.
    this.name = ids.values().next().value ?? 'KfuError';
  }

  /**
   * `SomeError.isInstance(e)`: true for this class and its subclasses; from another copy of the module too when the
   * class declares its own `errorId`.
   */
  static isInstance<T extends abstract new (...args: never[]) => KfuError>(this: T, value: unknown): value is InstanceType<T> {
    if (value instanceof this) return true;
    const id = ownId(this);
    const ids = id !== undefined && typeof value === 'object' && value !== null ? (value as { [IDS]?: unknown })[IDS] : undefined;
    return ids instanceof Set && ids.has(id);
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
