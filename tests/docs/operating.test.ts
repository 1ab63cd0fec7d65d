// docs/operating.md answers an operator's five questions; this keeps every answer tied to its source:
// - each figure of sections 1-3 names cells of docs/performance.md's current tables (`table › row › column`, or an
//   arithmetic of them): the figure must equal what those cells give, and its date must be the run's date there;
// - the release steps listed as tested must be the pairs the release tests run, read from those tests' own files (a
//   releaseStep call naming two releases, or the loop over forwardPairs() of tests/support/cluster/kubeflow/releases.ts),
//   every other pair of releases must be listed as untested, and the text must say whether skipping a release is tested;
// - the Juju rows must say what metadata.yaml declares, the version the tests' hook environment presents, and the
//   minimum that the config's secret option needs.
// A figure without a source, or a source that names no cell, fails: the guide cannot say more than is measured.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect } from 'chai';
import { parse as parseYaml } from 'yaml';
import { RELEASES, forwardPairs } from '../support/cluster/kubeflow/releases.ts';
import { changesBetween } from '../support/cluster/kubeflow/release-changes.ts';

const ROOT = join(import.meta.dirname, '..', '..');
const read = (path: string) => readFileSync(join(ROOT, path), 'utf8');
const guide = read('docs/operating.md');
const performance = read('docs/performance.md');

interface Table { header: string[]; rows: string[][] }

function cellsOf(line: string): string[] {
  return line.trim().replace(/^\|/, '').replace(/\|$/, '').split('|').map((cell) => cell.trim());
}

/** Every markdown table in `text`, in order. */
function tablesIn(text: string): Table[] {
  const tables: Table[] = [];
  const lines = text.split('\n');
  for (let i = 0; i + 1 < lines.length; i++) {
    if (!lines[i]!.trim().startsWith('|') || !/^\|\s*:?-{3,}/.test(lines[i + 1]!.trim())) continue;
    const table: Table = { header: cellsOf(lines[i]!), rows: [] };
    let j = i + 2;
    for (; j < lines.length && lines[j]!.trim().startsWith('|'); j++) table.rows.push(cellsOf(lines[j]!));
    tables.push(table);
    i = j - 1;
  }
  return tables;
}

/** The text under a heading whose title starts with `title`, up to the next heading of the same or a higher level. */
function section(text: string, title: string): string {
  const lines = text.split('\n');
  const start = lines.findIndex((line) => /^#{2,3} /.test(line) && line.replace(/^#+ /, '').startsWith(title));
  if (start === -1) throw new Error(`no heading "${title}"`);
  const level = /^#+/.exec(lines[start]!)![0].length;
  const end = lines.findIndex((line, i) => i > start && /^#+ /.test(line) && /^#+/.exec(line)![0].length <= level);
  return lines.slice(start, end === -1 ? undefined : end).join('\n');
}

/** The cell `table › row › column` of docs/performance.md's current results. */
function cell(reference: string): string {
  const [table, row, column] = reference.split('›').map((part) => part.trim());
  if (!table || !row || !column) throw new Error(`"${reference}" is not table › row › column`);
  for (const candidate of tablesIn(section(performance, table))) {
    const at = candidate.header.indexOf(column);
    const found = candidate.rows.find((cells) => cells[0] === row || cells[0]!.startsWith(`${row} (`));
    if (at > 0 && found?.[at]) return found[at]!;
  }
  throw new Error(`docs/performance.md has no cell ${reference}`);
}

interface Quantity { value: number; decimals: number; scale: number }

/** Every number in a cell with its unit's scale (ms read as seconds, so that ms and s compare). */
function quantities(text: string): Quantity[] {
  return [...text.matchAll(/(\d[\d,]*(?:\.(\d+))?)\s*(ms\b)?/g)].map((m) => {
    const scale = m[3] ? 0.001 : 1;
    return { value: Number(m[1]!.replace(/,/g, '')) * scale, decimals: m[2]?.length ?? 0, scale };
  });
}

/** A source: one reference, or references and numbers joined by ÷ and ×, read left to right. */
function evaluate(source: string): number {
  const parts = source.split('`');
  const tokens: (number | '÷' | '×')[] = [];
  parts.forEach((part, i) => {
    if (i % 2 === 1) {
      const values = quantities(cell(part));
      expect(values, `a number in ${part}`).not.to.be.empty;
      // an annotation right after the reference picks which number of a range or a pair
      const note = parts[i + 1] ?? '';
      tokens.push(/^\s*\(the last of the range\)/.test(note) ? values.at(-1)!.value : /^\s*\(restore\)/.test(note) ? values[1]!.value : values[0]!.value);
      return;
    }
    const text = part.replace(/\((the last of the range|backup|restore)\)/g, '');
    for (const m of text.matchAll(/[÷×]|\d[\d,]*(?:\.\d+)?/g)) tokens.push(m[0] === '÷' || m[0] === '×' ? m[0] : Number(m[0].replace(/,/g, '')));
  });
  let result = tokens[0];
  expect(result, `${source} starts with a number`).to.be.a('number');
  for (let i = 1; i < tokens.length; i += 2) {
    const op = tokens[i];
    const operand = tokens[i + 1];
    expect(operand, `${source}: an operand after ${String(op)}`).to.be.a('number');
    result = op === '÷' ? (result as number) / (operand as number) : (result as number) * (operand as number);
  }
  return result as number;
}

interface Figure { section: string; figure: string; value: string; measured: string; source: string }

function figures(): Figure[] {
  const out: Figure[] = [];
  for (const title of ['1. How long a backup takes', '2. How long a restore takes', '3. How much bucket space']) {
    const tables = tablesIn(section(guide, title)).filter((t) => t.header[0] === 'figure');
    expect(tables, `${title}: a figure table`).to.have.length(1);
    expect(tables[0]!.header).to.deep.equal(['figure', 'value', 'measured', 'from docs/performance.md']);
    for (const [figure, value, measured, source] of tables[0]!.rows) out.push({ section: title, figure: figure!, value: value!, measured: measured!, source: source! });
  }
  return out;
}

/** The heading of the current-results table a source reads from. */
function tableOf(source: string): string {
  const reference = source.split('`')[1];
  expect(reference, `${source} names a cell`).to.be.a('string');
  return reference!.split('›')[0]!.trim();
}

describe('docs/operating.md: every figure is the measurement it cites in docs/performance.md', () => {
  const rows = figures();
  it('has figures for the backup, the restore and the bucket', () => {
    for (const title of ['1.', '2.', '3.']) expect(rows.filter((r) => r.section.startsWith(title)).length, title).to.be.greaterThan(3);
  });
  for (const row of rows) {
    it(`${row.section}: ${row.figure} = ${row.value}`, () => {
      const shown = quantities(row.value);
      expect(shown, `a number in "${row.value}"`).to.have.length(1);
      const { value, decimals, scale } = shown[0]!;
      const computed = evaluate(row.source);
      // the figure as printed: the computed value rounded to the figure's own decimals
      expect(Math.abs(computed - value), `${row.source} gives ${computed}`).to.be.at.most(0.5 * 10 ** -decimals * scale + 1e-9);
      expect(section(performance, tableOf(row.source)), `the run of ${row.measured} in "${tableOf(row.source)}"`).to.contain(row.measured);
    });
  }

  it('names the machine the figures come from as performance.md does', () => {
    const machine = /All were measured on one machine: ([^,]+, [^,]+),/.exec(guide)?.[1];
    expect(machine, 'the machine sentence').to.be.a('string');
    expect(section(performance, 'The machine')).to.contain(machine!);
  });

  it('quotes the mover defaults it scales by as config.yaml sets them', () => {
    const config = parseYaml(read('config.yaml')) as { options: Record<string, { default?: unknown }> };
    const resources = /default `volume-mover-resources` \(`([^`]+)`\)/.exec(guide)?.[1];
    expect(resources).to.equal(config.options['volume-mover-resources']!.default);
    expect(guide).to.match(/two at a time by default,\s+`volume-mover-concurrency`/);
    expect(config.options['volume-mover-concurrency']!.default).to.equal(2);
  });
});

type Pair = `${string} → ${string}`;

/**
 * The pairs a release test file runs: its releaseStep calls that name two releases, and its loop over every ordered
 * forward pair (`for (const [from, to] of forwardPairs()) … releaseStep(…, from, to)`), which runs forwardPairs().
 */
function pairsCalled(file: string): Pair[] {
  const text = read(file);
  const named = [...text.matchAll(/releaseStep\(\s*\w+\s*,\s*'([\d.]+)'\s*,\s*'([\d.]+)'\s*\)/g)].map((m) => `${m[1]} → ${m[2]}` as Pair);
  // the loop's body: a block up to the brace that closes it on its own line, or the one statement on the line
  const body = /for \(const \[from, to\] of forwardPairs\(\)\)\s*(\{[\s\S]*?\n\s*\}|[^\n]*)/.exec(text)?.[1] ?? '';
  const loop = /releaseStep\([^;]*, from, to\);/.test(body);
  return [...(loop ? forwardPairs().map(([from, to]) => `${from} → ${to}` as Pair) : []), ...named];
}

describe('docs/operating.md: the release steps it calls tested are the ones the tests run', () => {
  const table = tablesIn(section(guide, '4. Skipping a CKF release')).find((t) => t.header[0] === 'step');
  const column = (name: string) => {
    const at = table!.header.findIndex((h) => h.startsWith(name));
    expect(at, name).to.be.greaterThan(0);
    return new Set(table!.rows.filter((r) => r[at] === 'yes').map((r) => r[0] as Pair));
  };
  it('has the table, each row a step of two known releases marked yes or no', () => {
    expect(table, 'the step table').not.to.equal(undefined);
    for (const row of table!.rows) {
      expect(row[0], 'a step').to.match(/^[\d.]+ → [\d.]+$/);
      for (const answer of row.slice(1)) expect(answer).to.be.oneOf(['yes', 'no']);
    }
  });

  it('lists every ordered pair of the releases the embedded cluster serves, each once', () => {
    const all: Pair[] = [];
    for (let i = 0; i < RELEASES.length; i++) for (let j = i + 1; j < RELEASES.length; j++) all.push(`${RELEASES[i]} → ${RELEASES[j]}`);
    expect(table!.rows.map((r) => r[0]).sort()).to.deep.equal([...all].sort());
    expect(forwardPairs().map(([from, to]) => `${from} → ${to}`).sort(), 'forwardPairs() is every ordered forward pair').to.deep.equal([...all].sort());
  });

  it('on the release profiles: the pairs tests/restore/releases.process.test.ts runs', () => {
    const pairs = pairsCalled('tests/restore/releases.process.test.ts');
    expect(pairs, 'the file runs release steps').not.to.be.empty;
    expect([...column('on the release profiles')].sort()).to.deep.equal(pairs.sort());
  });

  it('on the real CRD files: the pairs the CI release suite runs', () => {
    const pairs = pairsCalled('tests/releases/real-crds.suite.ts');
    expect(pairs, 'the suite runs release steps').not.to.be.empty;
    expect([...column('on the real CRD files')].sort()).to.deep.equal(pairs.sort());
    expect(read('.ci/run')).to.contain('tests/releases/real-crds.suite.ts');
  });

  it("the charm's restore-state action: the pairs tests/charm/restore-across-releases.process.test.ts names", () => {
    const file = read('tests/charm/restore-across-releases.process.test.ts');
    const named = [...file.matchAll(/describe\('restore-state action across CKF releases \(([\d.]+) → ([\d.]+)\)'/g)].map((m) => `${m[1]} → ${m[2]}`);
    expect(named, 'the action test names its pair').not.to.be.empty;
    expect([...column("the charm's `restore-state` action")].sort()).to.deep.equal(named.sort());
  });

  it('says whether skipping a release is tested, as the table does', () => {
    const tested = new Set([...column('on the release profiles'), ...column('on the real CRD files')]);
    const skips = table!.rows.map((r) => r[0]!).filter((pair) => {
      const [from, to] = pair.split(' → ');
      return RELEASES.indexOf(to as never) - RELEASES.indexOf(from as never) > 1;
    });
    expect(skips, 'the table has skip pairs').not.to.be.empty;
    const text = section(guide, '4. Skipping a CKF release').replace(/\s+/g, ' ');
    if (skips.every((pair) => tested.has(pair as Pair))) {
      expect(text).to.contain('skipping a release is tested');
      expect(text).not.to.contain('skipping a release is not');
    } else {
      expect(text).to.contain('skipping a release is not');
    }
  });
});

describe('docs/operating.md: what each pair meets is what RELEASE_CHANGES says (the facts the release tests check)', () => {
  const table = tablesIn(section(guide, '4. Skipping a CKF release')).find((t) => t.header[0] === 'pair');
  const cells = (cell: string) => (cell === 'none' ? [] : cell.split(', ').map((c) => c.replace(/^`|`$/g, ''))).sort();

  it('has a row for every ordered forward pair', () => {
    expect(table, 'the pair table').not.to.equal(undefined);
    expect(table!.rows.map((r) => r[0])).to.deep.equal(forwardPairs().map(([from, to]) => `${from} → ${to}`));
  });

  for (const [from, to] of forwardPairs()) {
    it(`${from} → ${to}: the unserved kinds and the dropped fields`, () => {
      const row = table!.rows.find((r) => r[0] === `${from} → ${to}`)!;
      const changes = changesBetween(from, to);
      expect(cells(row[1]!), 'unserved').to.deep.equal(changes.flatMap((c) => ('unserved' in c.change ? [c.change.unserved.kind] : [])).sort());
      expect(cells(row[2]!), 'dropped').to.deep.equal(changes.flatMap((c) => ('dropped' in c.change ? [c.change.dropped.path.replace(/\[\d+\]/g, '[]')] : [])).sort());
    });
  }
});

describe('docs/operating.md: the Juju versions are what the charm declares and the tests present', () => {
  const rows = tablesIn(section(guide, '5. Which Juju')).find((t) => t.header[0] === 'question')?.rows ?? [];
  const answer = (question: string) => {
    const row = rows.find((r) => r[0]!.startsWith(question));
    expect(row, question).not.to.equal(undefined);
    return row![1]!;
  };

  it("states metadata.yaml's assumes, and that it names no Juju version when it names none", () => {
    const metadata = parseYaml(read('metadata.yaml')) as { assumes?: unknown[] };
    const assumes = (metadata.assumes ?? []).map((item) => (typeof item === 'string' ? item : JSON.stringify(item)));
    const declared = answer('what the charm declares');
    expect([...declared.matchAll(/`([^`]+)`/g)].map((m) => m[1])).to.deep.equal(assumes);
    const juju = assumes.filter((item) => item.startsWith('juju'));
    if (juju.length === 0) expect(declared).to.contain('no Juju version');
  });

  it('states the JUJU_VERSION of the tests\' hook environment, and its minor version where the text names it', () => {
    const version = /JUJU_VERSION: '([\d.]+)'/.exec(read('tests/support/juju/hook-context.ts'))?.[1];
    expect(version, 'JUJU_VERSION in hook-context.ts').to.be.a('string');
    expect(answer('the Juju version the tests')).to.equal(version);
    const minor = version!.split('.').slice(0, 2).join('.');
    for (const m of section(guide, '5. Which Juju').matchAll(/Juju (\d+\.\d+)(?!\.)/g)) {
      if (m[1] !== '2.9') expect(m[1], 'a Juju version named in the text').to.be.oneOf([minor, '3.3']);
    }
  });

  it('states 3.3 as the oldest while config.yaml has an option of type secret (user secrets came with Juju 3.3)', () => {
    const config = parseYaml(read('config.yaml')) as { options: Record<string, { type: string }> };
    const secrets = Object.entries(config.options).filter(([, o]) => o.type === 'secret').map(([name]) => name);
    expect(secrets).to.include('encryption-key');
    expect(answer('the oldest Juju')).to.match(/^3\.3: `encryption-key` is a user secret/);
  });
});

describe('README links the operator guide', () => {
  it('names docs/operating.md', () => expect(read('README.md')).to.contain('(docs/operating.md)'));
});
