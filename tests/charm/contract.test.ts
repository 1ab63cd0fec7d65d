// actions.yaml, config.yaml and metadata.yaml are the user-visible contract; the zod schemas must agree with them.
import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import { parse } from 'yaml';
import { ActionParams, parseParams, type ActionName } from '../../src/charm/actions/params.ts';
import { ConfigSchema, parseConfig } from '../../src/charm/config.ts';
import { PINNED_IMAGES } from '../../src/volumes/engine.ts';

type Schema = { params: Record<string, { type: string; default?: unknown; enum?: string[] }>; required?: string[]; additionalProperties?: boolean };
const actions = parse(readFileSync('actions.yaml', 'utf8')) as Record<string, Schema>;
const config = parse(readFileSync('config.yaml', 'utf8')) as { options: Record<string, { type: string; default?: unknown; description: string }> };
const metadata = parse(readFileSync('metadata.yaml', 'utf8')) as {
  requires: Record<string, { interface: string; limit: number; optional?: boolean }>;
  provides: Record<string, { interface: string }>;
  containers: Record<string, { resource: string }>;
  resources: Record<string, { type: string; 'upstream-source'?: string }>;
};

describe('charm contract: YAML files and schemas agree', () => {
  it('declares the relations of architecture.md', () => {
    expect(metadata.requires['s3-credentials']).to.deep.include({ interface: 's3', limit: 1 });
    expect(metadata.requires['s3-credentials']!.optional).to.equal(undefined);
    expect(metadata.requires['object-storage']).to.deep.include({ interface: 'object-storage', limit: 1, optional: true });
    for (const db of ['kfp-db', 'katib-db']) expect(metadata.requires[db]).to.deep.include({ interface: 'mysql_client', limit: 1, optional: true });
    // COS: the names and interfaces the prometheus_scrape and grafana_dashboard libraries look for
    expect(metadata.provides['metrics-endpoint']).to.deep.include({ interface: 'prometheus_scrape' });
    expect(metadata.provides['grafana-dashboard']).to.deep.include({ interface: 'grafana_dashboard' });
  });

  it('declares the workload container with an image resource users pull as it is', () => {
    expect(metadata.containers.upgrader).to.deep.equal({ resource: 'upgrader-image' });
    expect(metadata.resources['upgrader-image']).to.deep.include({ type: 'oci-image', 'upstream-source': 'docker.io/library/node:24-bookworm-slim' });
  });

  it('has the same actions in actions.yaml and the schemas, each closed to unknown params', () => {
    expect(Object.keys(actions).sort()).to.deep.equal(Object.keys(ActionParams).sort());
    for (const [name, schema] of Object.entries(actions)) {
      expect(schema.additionalProperties, name).to.equal(false);
      expect(name).to.match(/^[a-z0-9](?:[a-z0-9-]*[a-z0-9])?$/);
    }
  });

  it('fills the same defaults Juju fills from actions.yaml, and requires the same params', () => {
    for (const [name, schema] of Object.entries(actions) as [ActionName, Schema][]) {
      const juju = Object.fromEntries(Object.entries(schema.params).filter(([, p]) => p.default !== undefined).map(([k, p]) => [k, p.default]));
      const required = schema.required ?? [];
      const sample = Object.fromEntries(required.map((key) => [key, 'latest']));
      const parsed = parseParams(name, { ...juju, ...sample });
      expect(parsed.ok, name).to.equal(true);
      const withoutRequired = parseParams(name, juju);
      expect(withoutRequired.ok, `${name} without its required params`).to.equal(required.length === 0);
      for (const [key, param] of Object.entries(schema.params)) {
        if (param.enum) for (const value of param.enum) expect(parseParams(name, { ...sample, [key]: value }).ok, `${name}.${key}=${value}`).to.equal(true);
      }
    }
  });

  it('has every config option in config.yaml and the schema, with the same defaults', () => {
    expect(Object.keys(config.options).sort()).to.deep.equal(Object.keys(ConfigSchema.shape).sort());
    const fromYaml = Object.fromEntries(Object.entries(config.options).filter(([, o]) => o.default !== undefined).map(([k, o]) => [k, o.default]));
    const parsedYaml = parseConfig(fromYaml);
    const parsedEmpty = parseConfig({});
    expect(parsedYaml).to.deep.equal(parsedEmpty);
    expect(config.options['encryption-key']!.type).to.equal('secret');
    // empty: each engine runs its own image, pinned by tag, which the description names
    expect(config.options['volume-mover-image']!.default).to.equal('');
    for (const image of [/docker\.io\/restic\/restic:\d+\.\d+\.\d+ \(restic\)/, /docker\.io\/rclone\/rclone:\d+\.\d+\.\d+ \(rclone\)/]) {
      expect(config.options['volume-mover-image']!.description).to.match(image);
    }
    // volume data goes to restic repositories unless the operator chooses plain files
    expect(config.options['volume-mover-engine']!.default).to.equal('restic');
    for (const [name, option] of Object.entries(config.options)) expect(option.description.length, name).to.be.greaterThan(20);
  });

  it('names the image each volume engine runs where volume-mover-image is described: config.yaml and the README agree with the engines', () => {
    const row = readFileSync('README.md', 'utf8').split('\n').find((line) => line.startsWith('| `volume-mover-image` |'));
    expect(row, 'the README config table has a volume-mover-image row').to.be.a('string');
    for (const [engine, image] of Object.entries(PINNED_IMAGES)) {
      expect(config.options['volume-mover-image']!.description).to.include(`${image} (${engine})`);
      expect(row).to.include(`\`${image}\` (${engine})`);
    }
  });

  it('names the bad option in one sentence', () => {
    expect(parseConfig({ 'api-concurrency': 0 })).to.deep.equal({ ok: false, problem: 'config option api-concurrency must be at least 1' });
    expect(parseConfig({ 'protect-crds': 'yes' })).to.deep.equal({ ok: false, problem: 'config option protect-crds must be a boolean' });
    expect(parseConfig({ 'encryption-key': 'hunter2' })).to.deep.equal({ ok: false, problem: 'config option encryption-key must be a Juju secret URI (secret:...)' });
    expect(parseConfig({ 'backup-schedule': '0 2 * *' })).to.deep.equal({ ok: false, problem: 'config option backup-schedule must be a cron expression of five fields (minute hour day month weekday, e.g. "0 2 * * *"), not 4 fields' });
    expect(parseConfig({ 'volume-mover-resources': 'cpu=lots' })).to.deep.equal({ ok: false, problem: 'config option volume-mover-resources must be a list like cpu=1,memory=1Gi: "lots" is not a Kubernetes quantity (e.g. 500m, 1, 512Mi, 1Gi)' });
    expect(parseConfig({ 'volume-mover-resources': 'gpu=1' })).to.deep.equal({ ok: false, problem: 'config option volume-mover-resources must be a list like cpu=1,memory=1Gi: "gpu=1" is not <resource>=<quantity> with a resource of cpu, memory, ephemeral-storage' });
    expect(parseConfig({ 'volume-mover-start-timeout': 0 })).to.deep.equal({ ok: false, problem: 'config option volume-mover-start-timeout must be at least 1' });
  });
});
