// Kubernetes quantities as the API server parses, adds, compares and prints them (kubernetes/kubernetes
// staging/src/k8s.io/apimachinery/pkg/api/resource/quantity.go: ParseQuantity, Add, Cmp, CanonicalizeBytes;
// amount.go: AsCanonicalBytes, AsCanonicalBase1024Bytes; suffix.go). A value is held exactly, in nano units (the
// smallest scale a Quantity keeps: a finer value is rounded up, as ParseQuantity does), with the format its suffix
// gave it. The quota and LimitRanger sentences print quantities with String(), so their text depends on this.

export type QuantityFormat = 'BinarySI' | 'DecimalSI' | 'DecimalExponent';

export interface Quantity {
  /** the value in units of 10^-9 */
  nano: bigint;
  format: QuantityFormat;
}

const NANO = 1_000_000_000n;
const BINARY: Record<string, number> = { Ki: 10, Mi: 20, Gi: 30, Ti: 40, Pi: 50, Ei: 60 };
const DECIMAL: Record<string, number> = { n: -9, u: -6, m: -3, '': 0, k: 3, M: 6, G: 9, T: 12, P: 15, E: 18 };
const DECIMAL_SUFFIX = new Map(Object.entries(DECIMAL).map(([s, e]) => [e, s]));
const BINARY_SUFFIX = new Map(Object.entries(BINARY).map(([s, e]) => [e, s]));

export const ZERO: Quantity = { nano: 0n, format: 'DecimalSI' };

/** ParseQuantity: `1.5Gi`, `500m`, `1e3`, `2`; undefined for text that is no quantity */
export function parseQuantity(text: string | number): Quantity | undefined {
  const match = /^([+-]?)(\d*)(?:\.(\d*))?(?:(Ki|Mi|Gi|Ti|Pi|Ei|[numkMGTPE])|[eE]([+-]?\d+))?$/.exec(String(text).trim());
  if (!match || (match[2] === '' && (match[3] ?? '') === '')) return undefined;
  const [, sign, whole, fraction = '', suffix, exponent] = match;
  const digits = BigInt(`${whole}${fraction}` || '0');
  let format: QuantityFormat = 'DecimalSI';
  // value = digits * 10^(-fraction.length) * base^power, computed exactly as a fraction over a power of ten
  let numerator = digits;
  let denominator = 10n ** BigInt(fraction.length);
  if (suffix !== undefined && BINARY[suffix] !== undefined) {
    format = 'BinarySI';
    numerator *= 2n ** BigInt(BINARY[suffix]!);
  } else {
    let power = suffix !== undefined ? DECIMAL[suffix]! : 0;
    if (exponent !== undefined) {
      format = 'DecimalExponent';
      power = Number(exponent);
    }
    if (power >= 0) numerator *= 10n ** BigInt(power);
    else denominator *= 10n ** BigInt(-power);
  }
  const scaled = numerator * NANO;
  // a value finer than a nano unit is rounded up (away from zero), as Quantity does on parse
  let nano = scaled / denominator;
  if (nano * denominator !== scaled) nano += 1n;
  return { nano: sign === '-' ? -nano : nano, format };
}

/** parseQuantity for a value the server already stored (or 0 for none) */
export function quantityOf(text: string | number | undefined): Quantity {
  if (text === undefined) return ZERO;
  return parseQuantity(text) ?? ZERO;
}

/** Quantity.Add: the receiver's format, unless it is zero, when the other's is taken */
export function add(a: Quantity, b: Quantity): Quantity {
  return { nano: a.nano + b.nano, format: a.nano === 0n ? b.format : a.format };
}

export function compare(a: Quantity, b: Quantity): number {
  return a.nano < b.nano ? -1 : a.nano > b.nano ? 1 : 0;
}

function removeFactors(value: bigint, base: bigint): [bigint, number] {
  let times = 0;
  while (value !== 0n && value % base === 0n) {
    value /= base;
    times++;
  }
  return [value, times];
}

/** Quantity.String(): the canonical form the API server prints */
export function formatQuantity(q: Quantity): string {
  if (q.nano === 0n) return '0';
  let format = q.format;
  if (format === 'BinarySI') {
    // small values and values that are not whole print in DecimalSI, to avoid rounding (CanonicalizeBytes)
    if ((q.nano > -1024n * NANO && q.nano < 1024n * NANO) || q.nano % NANO !== 0n) format = 'DecimalSI';
  }
  if (format === 'BinarySI') {
    const [amount, times] = removeFactors(q.nano / NANO, 1024n);
    const suffix = BINARY_SUFFIX.get(times * 10);
    return suffix === undefined ? `${q.nano / NANO}` : `${amount}${suffix}`;
  }
  // AsCanonicalBytes: the mantissa without trailing zeros, the exponent brought down to a multiple of three
  let [amount, times] = removeFactors(q.nano, 10n);
  let exponent = times - 9;
  const rest = exponent % 3;
  if (rest === 1 || rest === -2) {
    amount *= 10n;
    exponent -= 1;
  } else if (rest === 2 || rest === -1) {
    amount *= 100n;
    exponent -= 2;
  }
  if (format === 'DecimalExponent') return exponent === 0 ? `${amount}` : `${amount}e${exponent}`;
  const suffix = DECIMAL_SUFFIX.get(exponent);
  return suffix === undefined ? `${amount}e${exponent}` : `${amount}${suffix}`;
}

/** the canonical text of a stored quantity string */
export function canonical(text: string | number): string {
  const q = parseQuantity(text);
  return q ? formatQuantity(q) : String(text);
}

/** a quantity as a number in its base unit (`500m` → 0.5), for comparisons where float precision is enough */
export function quantity(text: string | number | undefined): number {
  if (text === undefined) return 0;
  if (typeof text === 'number') return text;
  const q = parseQuantity(text);
  if (!q) throw new Error(`quantities must match the regular expression of a Kubernetes quantity, got "${text}"`);
  return Number(q.nano) / 1e9;
}
