// The rules of Juju's hook tools, applied to the in-memory state of one dispatch: what each tool prints, and what
// Juju refuses. tool-server.ts answers the fake tools on PATH (tiny bash clients, like Juju's jujuc) with this; it is
// called once per tool call, synchronously, so concurrent calls of one dispatch are applied one at a time. The forms
// and refusals follow upstream juju/juju internal/worker/uniter/runner/jujuc (docs/juju.md lists them).
import type { Databag, FakeJujuState, FakeRelation } from './state.ts';

/** One tool call as the client sent it. `env` is the dispatch's environment (the hook context, as Juju keeps it). */
export interface ToolCall {
  tool: string;
  args: string[];
  env: Record<string, string | undefined>;
  /** what the tool read from stdin (only sent when it reads stdin: `--file -`) */
  stdin?: string;
  /** epoch ms the client process started, when it could tell */
  started?: number;
}

export interface ToolReply {
  exitCode: number;
  stdout: string;
  stderr: string;
}

const KEY_PART = /^[a-z0-9](?:[a-z0-9-]*[a-z0-9])?$/;
const RESERVED = new Set(['stdout', 'stdout-encoding', 'stderr', 'stderr-encoding']);
const STATUSES = new Set(['maintenance', 'blocked', 'waiting', 'active']);
const LEVELS = new Set(['DEBUG', 'INFO', 'WARNING', 'ERROR', 'TRACE', 'CRITICAL']);

class ToolError extends Error {}

function fail(message: string): never {
  throw new ToolError(`ERROR ${message}`);
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

function readStdinMap(call: ToolCall): Databag {
  const text = call.stdin ?? '';
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

function relation(state: FakeJujuState, call: ToolCall, flag: string | true | undefined): FakeRelation {
  const id = typeof flag === 'string' ? flag : call.env.JUJU_RELATION_ID;
  if (!id) fail('no relation id specified');
  const found = state.relations.find((r) => r.id === id || r.id.split(':')[1] === id);
  if (!found) fail(`invalid value "${id}" for option -r: relation not found`);
  return found;
}

function inAction(call: ToolCall): void {
  if (!call.env.JUJU_ACTION_NAME) fail(`${call.tool} is only available in actions`);
}

function appOf(unit: string): string {
  return unit.split('/')[0]!;
}

function run(state: FakeJujuState, call: ToolCall): string {
  const { tool, args, env } = call;
  const out = (value: unknown) => JSON.stringify(value);
  switch (tool) {
    case 'action-get': {
      inAction(call);
      const { positional } = parse(args, []);
      const params = state.actionParams ?? {};
      return positional[0] ? out(params[positional[0]] ?? null) : out(params);
    }
    case 'action-set': {
      inAction(call);
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
      inAction(call);
      state.actionFailure = parse(args, []).positional.join(' ') || 'action failed without reason given, check action for errors';
      return '';
    }
    case 'action-log': {
      inAction(call);
      const message = parse(args, []).positional.join(' ');
      if (!message) fail('no message specified');
      state.actionLogs.push(message);
      return '';
    }
    case 'relation-ids': {
      const { positional } = parse(args, ['format']);
      const endpoint = positional[0] ?? env.JUJU_RELATION;
      if (!endpoint) fail('no endpoint name specified');
      return out(state.relations.filter((r) => r.endpoint === endpoint).map((r) => r.id));
    }
    case 'relation-list': {
      const { flags } = parse(args, ['format', 'r']);
      const rel = relation(state, call, flags.r);
      return flags.app ? out(rel.remoteApp) : out(rel.remoteUnits);
    }
    case 'relation-get': {
      const { flags, positional } = parse(args, ['format', 'r']);
      const rel = relation(state, call, flags.r);
      const [key = '-', who = env.JUJU_REMOTE_UNIT] = positional;
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
      const rel = relation(state, call, flags.r);
      const app = flags.app === true;
      if (app && !state.leader) fail('cannot write relation settings: this unit is not the leader');
      const refused = state.relationSetFailures?.[rel.id];
      if (refused) fail(refused);
      let data: Databag = {};
      if (flags.file === '-') data = readStdinMap(call);
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
    case 'network-get': {
      // juju/juju internal/worker/uniter/runner/jujuc/network-get.go: the binding's bind, egress and ingress
      // addresses; with -r the relation must be one of the unit's. The shape ops parses (canonical/operator
      // ops/model.py Network, test/test_model.py's network_get output). On Kubernetes every endpoint is the pod's address.
      const { flags, positional } = parse(args, ['format', 'r']);
      const endpoint = positional[0];
      if (!endpoint) fail('no endpoint specified');
      if (flags.r) relation(state, call, flags.r);
      const address = state.podAddress ?? '10.1.64.17';
      return out({
        'bind-addresses': [{ 'mac-address': '', 'interface-name': 'eth0', addresses: [{ hostname: '', value: address, cidr: `${address}/32` }] }],
        'egress-subnets': [`${address}/32`],
        'ingress-addresses': [address],
      });
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
      // refused before Juju is asked (jujuc secret-get.go Init, below)
      if (flags.peek && flags.refresh) fail('specify one of --peek or --refresh but not both');
      const key = Object.keys(state.secrets).find((k) => k === uri || k.split(/[:/]/).pop() === uri.split(/[:/]/).pop());
      const secret = key ? state.secrets[key] : undefined;
      if (!secret || secret.revisions.length === 0) fail(`secret "${uri}" not found`);
      if (secret.denied) fail(`permission denied: secret "${uri}" is not granted to this application`);
      // A consumer tracks one revision (juju/juju apiserver/facades/agent/secretsmanager/secrets.go, getSecretValue, named
      // getSecretContent in other releases):
      // its first read, whatever the flags, saves the latest revision as the tracked one; --refresh moves it to the
      // latest; --peek reads the latest once and leaves the tracked one; no flag reads the tracked one. Both flags at
      // once are refused by juju/juju internal/worker/uniter/runner/jujuc/secret-get.go Init, above. A tracked revision the owner
      // removed cannot be read any more.
      const latest = secret.revisions.length;
      if (secret.tracked === undefined) secret.tracked = latest;
      let revision: number;
      if (flags.peek) revision = latest;
      else if (flags.refresh) revision = secret.tracked = latest;
      else revision = secret.tracked;
      if (secret.removedRevisions?.includes(revision)) fail(`secret revision ${revision} of "${uri}" not found`);
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
      for (const [key, value] of Object.entries(readStdinMap(call))) {
        if (value === '') delete state.unitState[key];
        else state.unitState[key] = value;
      }
      return '';
    }
    default:
      fail(`unknown hook tool "${tool}"`);
  }
}

/**
 * Applies one tool call to the state: records it in `calls` (with when it started and ended), then does what the tool
 * does. Never throws: a refusal is exit code 2 with Juju's `ERROR ...` line on stderr.
 */
export function runHookTool(state: FakeJujuState, call: ToolCall): ToolReply {
  const record: FakeJujuState['calls'][number] = { tool: call.tool, args: call.args, started: call.started ?? performance.timeOrigin + performance.now() };
  state.calls.push(record);
  try {
    const output = run(state, call);
    return { exitCode: 0, stdout: output ? `${output}\n` : '', stderr: '' };
  } catch (error) {
    return { exitCode: error instanceof ToolError ? 2 : 1, stdout: '', stderr: `${error instanceof ToolError ? error.message : String(error)}\n` };
  } finally {
    record.ended = performance.timeOrigin + performance.now();
  }
}
