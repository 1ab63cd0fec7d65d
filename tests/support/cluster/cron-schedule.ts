// A CronJob's schedule as the API server parses it to validate it: robfig/cron v3.0.1 (the version kubernetes/kubernetes
// go.mod pins) `ParseStandard`, parser.go (Parse, normalizeFields, getField, getRange, parseIntOrName, mustParseInt,
// parseDescriptor) and spec.go (the fields' bounds and names). Returns the error text Go's parser returns, or undefined.
// Only the answer "does it parse, and if not, which sentence" is modelled, not the schedule itself.

interface Bounds { min: number; max: number; names?: Record<string, number> }

const MINUTES: Bounds = { min: 0, max: 59 };
const HOURS: Bounds = { min: 0, max: 23 };
const DOM: Bounds = { min: 1, max: 31 };
const MONTHS: Bounds = { min: 1, max: 12, names: { jan: 1, feb: 2, mar: 3, apr: 4, may: 5, jun: 6, jul: 7, aug: 8, sep: 9, oct: 10, nov: 11, dec: 12 } };
const DOW: Bounds = { min: 0, max: 6, names: { sun: 0, mon: 1, tue: 2, wed: 3, thu: 4, fri: 5, sat: 6 } };
const DESCRIPTORS = new Set(['@yearly', '@annually', '@monthly', '@weekly', '@daily', '@midnight', '@hourly']);

class ParseError extends Error {}

/** strconv.Atoi's own error, as Go prints it */
function mustParseInt(expr: string): number {
  // Atoi accepts an optional sign and decimal digits only
  if (!/^[+-]?\d+$/.test(expr)) throw new ParseError(`failed to parse int from ${expr}: strconv.Atoi: parsing ${JSON.stringify(expr)}: invalid syntax`);
  const n = Number(expr);
  if (n < 0) throw new ParseError(`negative number (${n}) not allowed: ${expr}`);
  return n;
}

function parseIntOrName(expr: string, names: Record<string, number> | undefined): number {
  const named = names?.[expr.toLowerCase()];
  return named !== undefined ? named : mustParseInt(expr);
}

function getRange(expr: string, r: Bounds): void {
  const rangeAndStep = expr.split('/');
  const lowAndHigh = rangeAndStep[0]!.split('-');
  const singleDigit = lowAndHigh.length === 1;
  let start: number;
  let end: number;
  if (lowAndHigh[0] === '*' || lowAndHigh[0] === '?') {
    start = r.min;
    end = r.max;
  } else {
    start = parseIntOrName(lowAndHigh[0]!, r.names);
    if (lowAndHigh.length === 1) end = start;
    else if (lowAndHigh.length === 2) end = parseIntOrName(lowAndHigh[1]!, r.names);
    else throw new ParseError(`too many hyphens: ${expr}`);
  }
  let step: number;
  if (rangeAndStep.length === 1) step = 1;
  else if (rangeAndStep.length === 2) {
    step = mustParseInt(rangeAndStep[1]!);
    if (singleDigit) end = r.max;
  } else throw new ParseError(`too many slashes: ${expr}`);
  if (start < r.min) throw new ParseError(`beginning of range (${start}) below minimum (${r.min}): ${expr}`);
  if (end > r.max) throw new ParseError(`end of range (${end}) above maximum (${r.max}): ${expr}`);
  if (start > end) throw new ParseError(`beginning of range (${start}) beyond end of range (${end}): ${expr}`);
  if (step === 0) throw new ParseError(`step of range should be a positive number: ${expr}`);
}

function getField(field: string, r: Bounds): void {
  // strings.FieldsFunc on ',': empty pieces are skipped
  for (const expr of field.split(',').filter((p) => p !== '')) getRange(expr, r);
}

/** Go's time.ParseDuration, enough to tell a duration from anything else */
function isGoDuration(s: string): boolean {
  return s === '0' || /^[+-]?((\d+(\.\d*)?|\.\d+)(ns|us|µs|μs|ms|s|m|h))+$/.test(s);
}

/** cron.ParseStandard(spec): the error's text, or undefined when the schedule parses */
export function cronParseError(spec: string): string | undefined {
  try {
    if (spec.length === 0) throw new ParseError('empty spec string');
    let rest = spec;
    if (rest.startsWith('TZ=') || rest.startsWith('CRON_TZ=')) {
      // a location is looked up in the tz database; only UTC and Local are known without one
      const i = rest.indexOf(' ');
      const eq = rest.indexOf('=');
      const location = i < 0 ? rest.slice(eq + 1) : rest.slice(eq + 1, i);
      if (!isKnownLocation(location)) throw new ParseError(`provided bad location ${location}: unknown time zone ${location}`);
      rest = i < 0 ? '' : rest.slice(i).trim();
    }
    if (rest.startsWith('@')) {
      if (DESCRIPTORS.has(rest)) return undefined;
      if (rest.startsWith('@every ')) {
        if (!isGoDuration(rest.slice('@every '.length))) throw new ParseError(`failed to parse duration ${rest}: time: invalid duration ${JSON.stringify(rest.slice('@every '.length))}`);
        return undefined;
      }
      throw new ParseError(`unrecognized descriptor: ${rest}`);
    }
    const fields = rest.split(/\s+/).filter((f) => f !== '');
    if (fields.length !== 5) throw new ParseError(`expected exactly 5 fields, found ${fields.length}: [${fields.join(' ')}]`);
    const bounds = [MINUTES, HOURS, DOM, MONTHS, DOW];
    fields.forEach((f, i) => getField(f, bounds[i]!));
    return undefined;
  } catch (e) {
    if (e instanceof ParseError) return e.message;
    throw e;
  }
}

function isKnownLocation(name: string): boolean {
  if (name === 'UTC' || name === 'Local' || name === '') return true;
  try {
    new Intl.DateTimeFormat('en', { timeZone: name });
    return true;
  } catch {
    return false;
  }
}
