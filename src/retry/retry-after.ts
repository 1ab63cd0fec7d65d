// Retry-After comes as delta-seconds or as an HTTP date (RFC 9110 §10.2.3); servers use both.

/** Milliseconds to wait as the header asks, or undefined when the header is absent or unreadable. */
export function parseRetryAfter(value: string | undefined | null, nowMs: number): number | undefined {
  if (value === undefined || value === null) return undefined;
  const text = value.trim();
  if (text === '') return undefined;
  if (/^\d+$/.test(text)) return Number(text) * 1000;
  // An HTTP date always names its month; without this, Date.parse would read '-5' or '1.5' as years.
  if (!/[a-z]{3}/i.test(text)) return undefined;
  const at = Date.parse(text);
  if (Number.isNaN(at)) return undefined;
  return Math.max(0, at - nowMs);
}
