// docs/reference.md, the action and configuration reference, written from actions.yaml and config.yaml: the files Juju
// reads (`juju actions --schema`, `juju config`), so the reference an operator reads cannot say other than what the
// charm declares. `npm run docs:reference` rewrites it; tests/scripts/reference.test.ts fails when it is stale.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse } from 'yaml';

interface Param {
  type?: string;
  default?: unknown;
  description?: string;
  enum?: unknown[];
  maxLength?: number;
}
interface Action {
  description?: string;
  params?: Record<string, Param>;
  required?: string[];
}
interface Option {
  type: string;
  default?: unknown;
  description?: string;
}

/** One line of a description: YAML's folded and literal blocks keep their line breaks, which a table cell cannot. */
function oneLine(text: string | undefined): string {
  return (text ?? '').replace(/\s+/g, ' ').trim().replace(/\|/g, '\\|');
}

function shownDefault(param: { default?: unknown }, required: boolean): string {
  if (required) return 'required';
  if (param.default === undefined) return '—';
  return '`' + JSON.stringify(param.default) + '`';
}

function shownType(param: Param): string {
  if (param.enum) return `${param.type ?? 'string'}: ${param.enum.map((value) => '`' + String(value) + '`').join(', ')}`;
  return param.type ?? 'string';
}

export function renderReference(actionsYaml: string, configYaml: string): string {
  const actions = (parse(actionsYaml) ?? {}) as Record<string, Action>;
  const options = ((parse(configYaml) ?? {}) as { options?: Record<string, Option> }).options ?? {};
  const lines = [
    '# Action and configuration reference',
    '',
    'Written by `npm run docs:reference` from `actions.yaml` and `config.yaml`, the files Juju reads; do not edit by hand.',
    'Every action refuses unknown parameters; a failure is one sentence through `action-fail`. What the actions do in',
    'depth: [upgrades.md](upgrades.md) (backup and restore), [reliability.md](reliability.md) (verify, prune, keys).',
    '',
    '## Actions',
    '',
  ];
  for (const [name, action] of Object.entries(actions)) {
    lines.push(`### \`${name}\``, '', oneLine(action.description), '');
    const params = Object.entries(action.params ?? {});
    if (params.length === 0) {
      lines.push('No parameters.', '');
      continue;
    }
    lines.push('| parameter | type | default | meaning |', '|---|---|---|---|');
    const required = new Set(action.required ?? []);
    for (const [param, spec] of params) {
      lines.push(`| \`${param}\` | ${shownType(spec)} | ${shownDefault(spec, required.has(param))} | ${oneLine(spec.description)} |`);
    }
    lines.push('');
  }
  lines.push('## Configuration', '', '| option | type | default | meaning |', '|---|---|---|---|');
  for (const [name, option] of Object.entries(options)) {
    lines.push(`| \`${name}\` | ${option.type} | ${shownDefault(option, false)} | ${oneLine(option.description)} |`);
  }
  lines.push('');
  return lines.join('\n');
}

const root = join(fileURLToPath(import.meta.url), '..', '..');
export const REFERENCE_PATH = join(root, 'docs', 'reference.md');

export function currentReference(): string {
  return renderReference(readFileSync(join(root, 'actions.yaml'), 'utf8'), readFileSync(join(root, 'config.yaml'), 'utf8'));
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  writeFileSync(REFERENCE_PATH, currentReference());
  console.log(`wrote ${REFERENCE_PATH}`);
}
