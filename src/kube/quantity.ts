// Kubernetes resource quantities, as the API server reads, adds, compares and prints them (kubernetes/apimachinery
// pkg/api/resource/quantity.go: ParseQuantity, Quantity.Add, Cmp, String via CanonicalizeBytes). The restore's dry run
// uses them to predict a quota's or a LimitRange's refusal in the server's own words, so printing follows upstream
// exactly: binary suffixes only for whole multiples of 1024 from 1024 up, decimal exponents in steps of three.
// Values are held exactly as a count of nano units (a finer value is rounded up, as ParseQuantity does).

export type QuantityFormat = 'BinarySI' | 'DecimalSI' | 'DecimalExponent';

export interface Quantity {
  readonly nano: bigint;
  readonly format: QuantityFormat;
}

const NANO = 1_000_000_000n;
const BINARY_POWERS: Readonly<Record<string, number>> = { Ki: 10, Mi: 20, Gi: 30, Ti: 40, Pi: 50, Ei: 60 };
const DECIMAL_POWERS: Readonly<Record<string, number>> = { n: -9, u: -6, m: -3, k: 3, M: 6, G: 9, T: 12, P: 15, E: 18 };
const binarySuffix = new Map(Object.entries(BINARY_POWERS).map(([suffix, power]) => [power, suffix]));
const decimalSuffix = new Map([[0, ''], ...Object.entries(DECIMAL_POWERS).map(([suffix, power]) => [power, suffix] as [number, string])]);
const SYNTAX = /^([+-]?)(\d*)(?:\.(\d*))?(?:(Ki|Mi|Gi|Ti|Pi|Ei|[numkMGTPE])|[eE]([+-]?\d+))?$/;

export const zeroQuantity: Quantity = { nano: 0n, format: 'DecimalSI' };

/** a quantity from its text (`1.5Gi`, `500m`, `1e3`), or undefined for text that is not one */
export function parseQuantity(text: string | number): Quantity | undefined {
  const match = SYNTAX.exec(String(text).trim());
  if (!match) return undefined;
  const [, sign, whole = '', fraction = '', suffix, exponent] = match;
  if (whole === '' && fraction === '') return undefined;
  let numerator = BigInt(`${whole}${fraction}`) * NANO;
  let denominator = 10n ** BigInt(fraction.length);
  let format: QuantityFormat = 'DecimalSI';
  let power = 0;
  if (suffix && BINARY_POWERS[suffix] !== undefined) {
    format = 'BinarySI';
    numerator *= 2n ** BigInt(BINARY_POWERS[suffix]);
  } else if (exponent !== undefined) {
    format = 'DecimalExponent';
    power = Number(exponent);
  } else if (suffix) {
    power = DECIMAL_POWERS[suffix]!;
  }
  if (power >= 0) numerator *= 10n ** BigInt(power);
  else denominator *= 10n ** BigInt(-power);
  let nano = numerator / denominator;
  if (nano * denominator !== numerator) nano += 1n;
  return { nano: sign === '-' ? -nano : nano, format };
}

/** Quantity.Add: the sum keeps the first addend's format, or takes the second's when the first is zero */
export function addQuantities(a: Quantity, b: Quantity): Quantity {
  return { nano: a.nano + b.nano, format: a.nano === 0n ? b.format : a.format };
}

export function compareQuantities(a: Quantity, b: Quantity): number {
  return a.nano === b.nano ? 0 : a.nano < b.nano ? -1 : 1;
}

function stripFactors(value: bigint, base: bigint): [bigint, number] {
  let count = 0;
  for (; value !== 0n && value % base === 0n; count++) value /= base;
  return [value, count];
}

/** Quantity.String(): the text the API server prints for a quantity */
export function formatQuantity(q: Quantity): string {
  if (q.nano === 0n) return '0';
  const whole = q.nano % NANO === 0n;
  const small = q.nano > -1024n * NANO && q.nano < 1024n * NANO;
  if (q.format === 'BinarySI' && whole && !small) {
    const [mantissa, powers] = stripFactors(q.nano / NANO, 1024n);
    if (powers === 0) return `${mantissa}`;
    const suffix = binarySuffix.get(powers * 10);
    if (suffix !== undefined) return `${mantissa}${suffix}`;
  }
  let [mantissa, tens] = stripFactors(q.nano, 10n);
  let exponent = tens - 9;
  const offset = ((exponent % 3) + 3) % 3;
  mantissa *= 10n ** BigInt(offset);
  exponent -= offset;
  if (q.format === 'DecimalExponent') return exponent === 0 ? `${mantissa}` : `${mantissa}e${exponent}`;
  const suffix = decimalSuffix.get(exponent);
  return suffix === undefined ? `${mantissa}e${exponent}` : `${mantissa}${suffix}`;
}
