// Durations as operators write them in config (`max-backup-age`: 30m, 24h, 7d, 1h30m).
const units: Record<string, number> = { s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000 };

/** Milliseconds of a duration like "24h" or "1d12h"; throws one sentence on anything else. */
export function parseDuration(value: string, setting = 'max-backup-age'): number {
  const text = value.trim();
  const part = /(\d+)([smhdw])/gy;
  let total = 0;
  let consumed = 0;
  for (let match = part.exec(text); match; match = part.exec(text)) {
    total += Number(match[1]) * (units[match[2] ?? ''] ?? 0);
    consumed = part.lastIndex;
  }
  if (text === '' || consumed !== text.length || total <= 0) {
    throw new Error(`${setting} "${value}" is not a duration like 30m, 24h or 7d.`);
  }
  return total;
}

/** "3h12m", "2d4h", "45s": the two largest units, for reasons and status lines. */
export function formatAge(ms: number): string {
  const order: Array<[string, number]> = [['d', 86_400_000], ['h', 3_600_000], ['m', 60_000], ['s', 1_000]];
  let rest = Math.max(0, Math.floor(ms));
  const parts: string[] = [];
  for (const [unit, size] of order) {
    const count = Math.floor(rest / size);
    rest -= count * size;
    if (count > 0 || (parts.length > 0 && parts.length < 2)) parts.push(`${count}${unit}`);
    if (parts.length === 2) break;
  }
  return parts.length === 0 ? '0s' : parts.join('');
}
