// Refuses a state and event that Juju could never give the charm, as ops' Scenario does before it runs an event
// (canonical/operator testing/src/scenario/_consistency_checker.py: check_config_consistency, check_event_consistency
// with _check_action_param_types, check_relation_consistency, check_secrets_consistency), and fills in the config defaults Juju gives a charm for
// options nobody set. Without it a misspelt config key or param silently tests the default, because the fake
// config-get and action-get answer whatever the state holds. What Juju itself refuses is refused here, and more strictly
// than Scenario where Juju is stricter: Juju validates action params against actions.yaml's JSON schema (required,
// additionalProperties) before the charm runs, and a secret-typed option only ever holds a secret URI.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import type { DispatchEvent } from './harness.ts';
import type { FakeJujuState } from './state.ts';

interface ConfigOption { type?: string; default?: unknown }
interface ActionParam { type?: string }
interface ActionSpec { params?: Record<string, ActionParam>; required?: string[]; additionalProperties?: boolean }
interface CharmSpec {
  config: Record<string, ConfigOption>;
  actions: Record<string, ActionSpec>;
  /** every relation endpoint of metadata.yaml: requires, provides and peers */
  endpoints: Set<string>;
}

export class InconsistentStateError extends Error {}

const specs = new Map<string, CharmSpec>();

function charmSpec(charmDir: string): CharmSpec {
  let spec = specs.get(charmDir);
  if (!spec) {
    const read = (name: string) => (parse(readFileSync(join(charmDir, name), 'utf8')) ?? {}) as Record<string, unknown>;
    const metadata = read('metadata.yaml') as Record<string, Record<string, unknown> | undefined>;
    spec = {
      config: ((read('config.yaml').options ?? {}) as Record<string, ConfigOption>),
      actions: read('actions.yaml') as Record<string, ActionSpec>,
      endpoints: new Set(['requires', 'provides', 'peers'].flatMap((kind) => Object.keys(metadata[kind] ?? {}))),
    };
    specs.set(charmDir, spec);
  }
  return spec;
}

// A secret URI as Juju parses it: `secret:` and a 20-character xid, optionally after the source model's UUID
// (juju/juju core/secrets/secret.go, ParseURI with idSnippet and uuidSnippet).
const SECRET_URI = /^secret:(?:\/\/[a-f0-9]{8}-[a-f0-9]{4}-[a-f0-9]{4}-[a-f0-9]{4}-[a-f0-9]{12}\/)?[0-9a-z]{20}$/;

/** Whether a config value has the type config.yaml declares (juju/juju's charm config: string, int, float, boolean, secret). */
function configTypeError(key: string, type: string | undefined, value: unknown): string | undefined {
  switch (type) {
    case 'string':
      return typeof value === 'string' ? undefined : `config option ${key} is a string in config.yaml, not ${JSON.stringify(value)}`;
    case 'int':
      return Number.isInteger(value) ? undefined : `config option ${key} is an int in config.yaml, not ${JSON.stringify(value)}`;
    case 'float':
      return typeof value === 'number' ? undefined : `config option ${key} is a float in config.yaml, not ${JSON.stringify(value)}`;
    case 'boolean':
      return typeof value === 'boolean' ? undefined : `config option ${key} is a boolean in config.yaml, not ${JSON.stringify(value)}`;
    case 'secret':
      return typeof value === 'string' && SECRET_URI.test(value) ? undefined : `config option ${key} is a secret in config.yaml, and ${JSON.stringify(value)} is no secret URI`;
    default:
      return `config option ${key} has no type Juju knows (${String(type)}) in config.yaml`;
  }
}

/** Whether an action param has its JSON-schema type (Scenario's to_python_type: string, boolean, integer, number, array, object). */
function paramTypeError(action: string, name: string, type: string | undefined, value: unknown): string | undefined {
  const ok = type === 'string' ? typeof value === 'string'
    : type === 'boolean' ? typeof value === 'boolean'
    : type === 'integer' ? Number.isInteger(value)
    : type === 'number' ? typeof value === 'number'
    : type === 'array' ? Array.isArray(value)
    : type === 'object' ? typeof value === 'object' && value !== null && !Array.isArray(value)
    : false;
  return ok ? undefined : `param ${name} of ${action} is of type ${String(type)} in actions.yaml, not ${JSON.stringify(value)}`;
}

const HOOKS = new Set([
  'install', 'start', 'stop', 'remove', 'config-changed', 'upgrade-charm', 'update-status', 'leader-elected',
  'leader-settings-changed', 'collect-metrics', 'pre-series-upgrade', 'post-series-upgrade',
  'secret-changed', 'secret-rotate', 'secret-remove', 'secret-expired',
]);
const RELATION_HOOK = /^(.+)-relation-(created|joined|changed|departed|broken)$/;

/** Every way `state` and `event` disagree with the charm's metadata, config and actions; empty when Juju could run it. */
export function inconsistencies(charmDir: string, state: FakeJujuState, event: DispatchEvent): string[] {
  const spec = charmSpec(charmDir);
  const errors: string[] = [];
  for (const [key, value] of Object.entries(state.config)) {
    const option = spec.config[key];
    if (!option) errors.push(`config option ${key} is not in config.yaml`);
    else {
      const wrong = configTypeError(key, option.type, value);
      if (wrong) errors.push(wrong);
    }
  }
  const seen = new Set<string>();
  for (const relation of state.relations) {
    if (!spec.endpoints.has(relation.endpoint)) errors.push(`relation endpoint ${relation.endpoint} is not declared in metadata.yaml`);
    if (seen.has(relation.id)) errors.push(`relation id ${relation.id} is claimed by more than one relation`);
    seen.add(relation.id);
    if (!relation.id.startsWith(`${relation.endpoint}:`)) errors.push(`relation id ${relation.id} does not name its endpoint ${relation.endpoint}`);
  }
  const name = event.event.replace(/^hooks\//, '');
  if (name.startsWith('actions/')) {
    const action = name.slice('actions/'.length);
    const actionSpec = spec.actions[action];
    if (!actionSpec) errors.push(`action ${action} is not declared in actions.yaml`);
    else {
      const params = state.actionParams ?? {};
      for (const [param, value] of Object.entries(params)) {
        const declared = actionSpec.params?.[param];
        if (!declared) errors.push(`param ${param} is not a parameter of ${action} in actions.yaml`);
        else {
          const wrong = paramTypeError(action, param, declared.type, value);
          if (wrong) errors.push(wrong);
        }
      }
      for (const required of actionSpec.required ?? []) if (!(required in params)) errors.push(`${action} requires param ${required} (actions.yaml)`);
    }
  } else {
    if (state.actionParams !== undefined) errors.push(`${name} is a hook, but the state has action params`);
    const relationHook = RELATION_HOOK.exec(name);
    if (relationHook) {
      const endpoint = relationHook[1]!;
      if (!spec.endpoints.has(endpoint)) errors.push(`${name} names relation endpoint ${endpoint}, which metadata.yaml does not declare`);
      const relation = state.relations.find((r) => r.id === event.relation);
      if (!event.relation) errors.push(`${name} needs the relation it is about`);
      else if (!relation) errors.push(`${name} is about relation ${event.relation}, which is not in the state`);
      else if (relation.endpoint !== endpoint) errors.push(`${name} is about relation ${event.relation} of endpoint ${relation.endpoint}`);
    } else if (!HOOKS.has(name)) errors.push(`${name} is not a hook Juju runs for this charm`);
    if (name.startsWith('secret-')) {
      if (!event.secret) errors.push(`${name} needs the secret it is about`);
      else if (!state.secrets[event.secret.id]) errors.push(`${name} is about secret ${event.secret.id}, which is not in the state`);
    }
  }
  return errors;
}

/** The config as config-get shows it: the options' defaults, overridden by what the state sets (juju config). */
export function withConfigDefaults(charmDir: string, config: Record<string, unknown>): Record<string, unknown> {
  const defaults = Object.entries(charmSpec(charmDir).config).filter(([, option]) => option.default !== undefined).map(([key, option]) => [key, option.default]);
  return { ...Object.fromEntries(defaults), ...config };
}

/** Throws naming every inconsistency, as Scenario's InconsistentScenarioError does; returns when Juju could run it. */
export function assertConsistent(charmDir: string, state: FakeJujuState, event: DispatchEvent): void {
  const errors = inconsistencies(charmDir, state, event);
  if (errors.length > 0) throw new InconsistentStateError(`Juju could not run ${event.event} on this state: ${errors.join('; ')}.`);
}
