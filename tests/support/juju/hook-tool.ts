// One fake Juju hook tool: `node hook-tool.ts <tool> args...`, run through the small shell wrappers that
// fake-tools.ts writes onto PATH. Reads and writes the JSON state file named by FAKE_JUJU_STATE under a lock, and
// refuses what Juju refuses. Node built-ins only, run by Node 24's type stripping: it starts in tens of milliseconds.
import { closeSync, openSync, readFileSync, renameSync, unlinkSync, writeFileSync } from 'node:fs';
import type { Databag, FakeJujuState, FakeRelation } from './state.ts';

const KEY_PART = /^[a-z0-9](?:[a-z0-9-]*[a-z0-9])?$/;
const RESERVED = new Set(['stdout', 'stdout-encoding', 'stderr', 'stderr-encoding']);
const STATUSES = new Set(['maintenance', 'blocked', 'waiting', 'active']);
const LEVELS = new Set(['DEBUG', 'INFO', 'WARNING', 'ERROR', 'TRACE', 'CRITICAL']);

class ToolError extends Error {}

const tool = process.argv[2] ?? '';
const args = process.argv.slice(3);
const statePath = process.env.FAKE_JUJU_STATE;

function fail(message: string): never {
  throw new ToolError(`ERROR ${message}`);
}

function sleep(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

function withLock<T>(body: () => T): T {
  const lock = `${statePath}.lock`;
  for (let attempt = 0; ; attempt++) {
    try {
      closeSync(openSync(lock, 'wx'));
      break;
    } catch {
      if (attempt > 2000) fail('state file lock timed out');
      sleep(2);
    }
  }
  try {
    return body();
  } finally {
    unlinkSync(lock);
  }
}

/** `--flag value`, `--flag=value`, bare flags and positionals, the way Juju's gnuflag parser reads them. */
function parse(argv: string[], valueFlags: string[]): { flags: Record<string, string | true>; positional: string[] } {
  const flags: Record<string, string | true> = {};
  const positional: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === '--') {
      positional.push(...argv.slice(i + 1));
      break;
    }
    if (arg.startsWith('-') && arg !== '-') {
      const [name, inline] = arg.replace(/^--?/, '').split(/=(.*)/s, 2) as [string, string | undefined];
      if (inline !== undefined) flags[name] = inline;
      else if (valueFlags.includes(name)) {
        const value = argv[++i];
        if (value === undefined) fail(`flag needs an argument: -${name}`);
        flags[name] = value;
      } else flags[name] = true;
    } else positional.push(arg);
  }
  return { flags, positional };
}

function readStdinMap(): Databag {
  const text = readFileSync(0, 'utf8');
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    fail('cannot parse settings from --file -: this fake accepts JSON (a subset of YAML)');
  }
  if (!value || typeof value !== 'object' || Array.isArray(value)) fail('settings must be a map');
  for (const [key, inner] of Object.entries(value as object)) if (typeof inner !== 'string') fail(`value of "${key}" is not a string`);
  return value as Databag;
}

function relation(state: FakeJujuState, flag: string | true | undefined): FakeRelation {
  const id = typeof flag === 'string' ? flag : process.env.JUJU_RELATION_ID;
  if (!id) fail('no relation id specified');
  const found = state.relations.find((r) => r.id === id || r.id.split(':')[1] === id);
  if (!found) fail(`invalid value "${id}" for option -r: relation not found`);
  return found;
}

function inAction(): void {
  if (!process.env.JUJU_ACTION_NAME) fail(`${tool} is only available in actions`);
}

function appOf(unit: string): string {
  return unit.split('/')[0]!;
}

function run(state: FakeJujuState): string {
  const out = (value: unknown) => JSON.stringify(value);
  switch (tool) {
    case 'action-get': {
      inAction();
      const { positional } = parse(args, []);
      const params = state.actionParams ?? {};
      return positional[0] ? out(params[positional[0]] ?? null) : out(params);
    }
    case 'action-set': {
      inAction();
      for (const pair of args) {
        const at = pair.indexOf('=');
        if (at <= 0) fail(`argument "${pair}" must be of the form key=value`);
        const key = pair.slice(0, at);
        if (!key.split('.').every((part) => KEY_PART.test(part))) fail(`key "${key}" must start and end with lowercase alphanumeric, and contain only lowercase alphanumeric, hyphens and periods`);
        if (RESERVED.has(key)) fail(`cannot set reserved action key "${key}"`);
        state.actionResults[key] = pair.slice(at + 1);
      }
      return '';
    }
    case 'action-fail': {
      inAction();
      state.actionFailure = parse(args, []).positional.join(' ') || 'action failed without reason given, check action for errors';
      return '';
    }
    case 'action-log': {
      inAction();
      const message = parse(args, []).positional.join(' ');
      if (!message) fail('no message specified');
      state.actionLogs.push(message);
      return '';
    }
    case 'relation-ids': {
      const { positional } = parse(args, ['format']);
      const endpoint = positional[0] ?? process.env.JUJU_RELATION;
      if (!endpoint) fail('no endpoint name specified');
      return out(state.relations.filter((r) => r.endpoint === endpoint).map((r) => r.id));
    }
    case 'relation-list': {
      const { flags } = parse(args, ['format', 'r']);
      const rel = relation(state, flags.r);
      return flags.app ? out(rel.remoteApp) : out(rel.remoteUnits);
    }
    case 'relation-get': {
      const { flags, positional } = parse(args, ['format', 'r']);
      const rel = relation(state, flags.r);
      const [key = '-', who = process.env.JUJU_REMOTE_UNIT] = positional;
      if (!who) fail('no unit or application specified');
      const self = appOf(state.unit);
      let bag: Databag;
      if (flags.app) {
        if (who === self) {
          if (!state.leader) fail('permission denied: only the leader can read its own application settings');
          bag = rel.localAppData;
        } else if (who === rel.remoteApp) bag = rel.remoteAppData;
        else fail(`application "${who}" is not part of relation ${rel.id}`);
      } else if (who === state.unit) bag = rel.localUnitData;
      else if (rel.remoteUnits.includes(who)) bag = rel.remoteUnitsData[who] ?? {};
      else fail(`cannot read settings for unit "${who}" in relation "${rel.id}": unit not found`);
      return key === '-' ? out(bag) : out(bag[key] ?? null);
    }
    case 'relation-set': {
      const { flags, positional } = parse(args, ['r', 'file']);
      const rel = relation(state, flags.r);
      const app = flags.app === true;
      if (app && !state.leader) fail('cannot write relation settings: this unit is not the leader');
      let data: Databag = {};
      if (flags.file === '-') data = readStdinMap();
      else if (flags.file) fail('this fake reads --file only from stdin');
      for (const pair of positional) {
        const at = pair.indexOf('=');
        if (at <= 0) fail(`expected "key=value", got "${pair}"`);
        data[pair.slice(0, at)] = pair.slice(at + 1);
      }
      const bag = app ? rel.localAppData : rel.localUnitData;
      for (const [key, value] of Object.entries(data)) {
        if (value === '') delete bag[key];
        else bag[key] = value;
      }
      state.relationSets.push({ relation: rel.id, app, data });
      return '';
    }
    case 'config-get': {
      const { positional } = parse(args, ['format']);
      return positional[0] ? out(state.config[positional[0]] ?? null) : out(state.config);
    }
    case 'is-leader':
      return out(state.leader);
    case 'status-set': {
      const { flags, positional } = parse(args, []);
      const application = flags.application === true || flags.application === 'true';
      const [status, ...words] = positional;
      if (!status || !STATUSES.has(status)) fail(`invalid status "${status ?? ''}", expected one of [maintenance blocked waiting active]`);
      if (application && !state.leader) fail('cannot set application status: this unit is not the leader');
      state.statusHistory.push({ application, status, message: words.join(' ') });
      return '';
    }
    case 'application-version-set': {
      state.applicationVersion = parse(args, []).positional.join(' ');
      return '';
    }
    case 'juju-log': {
      const { flags, positional } = parse(args, ['log-level', 'l']);
      const level = String(flags['log-level'] ?? flags.l ?? 'INFO');
      if (!LEVELS.has(level)) fail(`invalid log level "${level}"`);
      if (positional.length === 0) fail('no message specified');
      state.logs.push({ level, message: positional.join(' ') });
      return '';
    }
    case 'secret-get': {
      const { flags, positional } = parse(args, ['format', 'label']);
      const uri = positional[0];
      if (!uri) fail('secret URI or label required');
      const key = Object.keys(state.secrets).find((k) => k === uri || k.split(/[:/]/).pop() === uri.split(/[:/]/).pop());
      const secret = key ? state.secrets[key] : undefined;
      if (!secret || secret.revisions.length === 0) fail(`secret "${uri}" not found`);
      if (secret.denied) fail(`permission denied: secret "${uri}" is not granted to this application`);
      const latest = secret.revisions.length;
      let revision: number;
      if (flags.peek) revision = latest;
      else if (flags.refresh || secret.tracked === undefined) revision = secret.tracked = latest;
      else revision = secret.tracked;
      const content = secret.revisions[revision - 1]!;
      return positional[1] ? out(content[positional[1]] ?? null) : out(content);
    }
    case 'state-get': {
      const { positional } = parse(args, ['format']);
      return positional[0] ? out(state.unitState[positional[0]] ?? null) : out(state.unitState);
    }
    case 'state-set': {
      const { flags } = parse(args, ['file']);
      if (flags.file !== '-') fail('this fake reads state-set values only from --file -');
      for (const [key, value] of Object.entries(readStdinMap())) {
        if (value === '') delete state.unitState[key];
        else state.unitState[key] = value;
      }
      return '';
    }
    default:
      fail(`unknown hook tool "${tool}"`);
  }
}

try {
  if (!statePath) fail('FAKE_JUJU_STATE is not set');
  const output = withLock(() => {
    const state = JSON.parse(readFileSync(statePath, 'utf8')) as FakeJujuState;
    const call: FakeJujuState['calls'][number] = { tool, args, started: Math.round(performance.timeOrigin) };
    state.calls.push(call);
    let result: string;
    try {
      result = run(state);
    } finally {
      call.ended = Date.now();
      const temporary = `${statePath}.${process.pid}`;
      writeFileSync(temporary, JSON.stringify(state, null, 1));
      renameSync(temporary, statePath);
    }
    return result;
  });
  if (output) process.stdout.write(`${output}\n`);
} catch (error) {
  process.stderr.write(`${error instanceof ToolError ? error.message : String(error)}\n`);
  process.exit(error instanceof ToolError ? 2 : 1);
}
