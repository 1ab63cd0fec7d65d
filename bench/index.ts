// npm run bench [-- --profiles N] [--json] [--only <name>] [--quick] [--s3 https|http]: runs every bench/*.bench.ts,
// prints one table and writes .bench/results.json. `--s3 http`: the volumes bench's S3 over plain HTTP (default HTTPS,
// as every S3 a user runs; bench/support/bench-s3.ts).
import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import type { Bench, BenchOptions, BenchRow } from './types.ts';
import { requireSystemTools } from '../scripts/system-tools.ts';

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, '..');

function usage(message: string): never {
  process.stderr.write(`${message}\nusage: npm run bench -- [--profiles N] [--json] [--only <name>] [--quick] [--s3 https|http]\n`);
  process.exit(2);
}

let parsed;
try {
  parsed = parseArgs({
    options: {
      profiles: { type: 'string', default: '1000' },
      json: { type: 'boolean', default: false },
      only: { type: 'string', multiple: true, default: [] },
      quick: { type: 'boolean', default: false },
      s3: { type: 'string', default: 'https' },
    },
  }).values;
} catch (error) {
  usage(error instanceof Error ? error.message : String(error));
}
requireSystemTools('bench');
const profiles = Number(parsed.profiles);
if (!Number.isInteger(profiles) || profiles < 1) usage(`--profiles must be a positive whole number, not "${parsed.profiles}".`);
if (parsed.s3 !== 'https' && parsed.s3 !== 'http') usage(`--s3 must be https or http, not "${parsed.s3}".`);
const s3Scheme: 'https' | 'http' = parsed.s3;

const available = readdirSync(here).filter((file) => file.endsWith('.bench.ts')).map((file) => file.replace(/\.bench\.ts$/, '')).sort();
const unknown = parsed.only.filter((name) => !available.includes(name));
if (unknown.length) usage(`No bench named ${unknown.join(', ')}; there are: ${available.join(', ')}.`);
const selected = parsed.only.length ? available.filter((name) => parsed.only.includes(name)) : available;

const rows: BenchRow[] = [];
for (const name of selected) {
  const workDir = mkdtempSync(join(tmpdir(), `bench-${name}-`));
  const options: BenchOptions = { profiles, json: parsed.json, quick: parsed.quick, workDir, s3Scheme };
  if (!parsed.json) process.stderr.write(`running ${name}...\n`);
  try {
    const module = (await import(pathToFileURL(join(here, `${name}.bench.ts`)).href)) as { default: Bench };
    rows.push(...(await module.default(options)));
  } catch (error) {
    rows.push({ bench: name, metric: 'error', value: Number.NaN, unit: '', verdict: 'missed', note: error instanceof Error ? error.message.split('\n')[0]! : String(error) });
  } finally {
    rmSync(workDir, { recursive: true, force: true });
  }
}

mkdirSync(join(root, '.bench'), { recursive: true });
const report = { at: new Date().toISOString(), node: process.version, cpus: (await import('node:os')).cpus().length, options: { profiles, quick: parsed.quick, s3: s3Scheme }, rows };
writeFileSync(join(root, '.bench', 'results.json'), `${JSON.stringify(report, null, 2)}\n`);

if (parsed.json) {
  process.stdout.write(`${JSON.stringify(rows, null, 2)}\n`);
} else {
  const header = ['bench', 'metric', 'value', 'unit', 'target', 'verdict', 'note'];
  const cells = rows.map((r) => [r.bench, r.metric, Number.isFinite(r.value) ? String(Math.round(r.value * 100) / 100) : '-', r.unit, r.target ?? '', r.verdict ?? '', r.note ?? '']);
  const widths = header.map((h, i) => Math.max(h.length, ...cells.map((c) => c[i]!.length)));
  const line = (c: string[]) => c.map((cell, i) => cell.padEnd(widths[i]!)).join('  ').trimEnd();
  process.stdout.write(`${[line(header), line(widths.map((w) => '-'.repeat(w))), ...cells.map(line)].join('\n')}\n`);
}
process.exit(rows.some((r) => r.metric === 'error') ? 1 : 0);
