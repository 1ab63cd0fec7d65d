// The custom-resource schema rules of the embedded server, one case per row. The pruning and defaulting rows are the
// cases of kubernetes/kubernetes staging/src/k8s.io/apiextensions-apiserver pkg/apiserver/schema/pruning/algorithm_test.go
// (TestPrune) and pkg/apiserver/schema/defaulting/algorithm_test.go (TestDefault), written as JSON here.
import { expect } from 'chai';
import * as k8s from '@kubernetes/client-node';
import { applyDefaults, prune, pruneNonNullableNulls, validateCel, validateValue, admitCustomResource, type Schema } from './crd-schema.ts';
import { startCluster, type RunningCluster } from './index.ts';
import type { KubeObject } from '../../../src/kube/types.ts';

const obj = (properties: Record<string, Schema>, extra: Partial<Schema> = {}): Schema => ({ type: 'object', properties, ...extra });

describe('custom resource schemas: pruning (upstream TestPrune)', () => {
  const rows: Array<{ name: string; json: unknown; schema: Schema | undefined; root?: boolean; expected: unknown; pruned: string[] }> = [
    { name: 'scalar', json: 4, schema: {}, expected: 4, pruned: [] },
    { name: 'scalar array', json: [1, 2], schema: { items: {} }, expected: [1, 2], pruned: [] },
    {
      name: 'object array', json: [{ a: 1 }, { b: 1 }, { a: 1, b: 2, c: 3 }], schema: { items: { properties: { a: {}, c: {} } } },
      expected: [{ a: 1 }, {}, { a: 1, c: 3 }], pruned: ['[1].b', '[2].b'],
    },
    {
      name: 'object array with nil schema', json: [{ a: 1 }, { b: 1 }, { a: 1, b: 2, c: 3 }], schema: undefined,
      expected: [{}, {}, {}], pruned: ['[0].a', '[1].b', '[2].a', '[2].b', '[2].c'],
    },
    {
      name: 'nested x-kubernetes-preserve-unknown-fields',
      json: {
        unspecified: 'bar', alpha: 'abc', beta: 42.0, unspecifiedObject: { unspecified: 'bar' },
        pruning: { unspecified: 'bar', unspecifiedObject: { unspecified: 'bar' }, pruning: { unspecified: 'bar' }, apiVersion: 'unknown', preserving: { unspecified: 'bar' } },
        preserving: { unspecified: 'bar', unspecifiedObject: { unspecified: 'bar' }, pruning: { unspecified: 'bar' }, preserving: { unspecified: 'bar' } },
        preservingAdditionalPropertiesNotInheritingXPreserveUnknownFields: { foo: { specified: { unspecified: 'bar' }, unspecified: 'bar' } },
      },
      schema: obj({
        alpha: { type: 'string' }, beta: { type: 'number' },
        pruning: obj({ preserving: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true }, pruning: { type: 'object' } }),
        preserving: obj({ preserving: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true }, pruning: { type: 'object' } }, { 'x-kubernetes-preserve-unknown-fields': true }),
        preservingAdditionalPropertiesNotInheritingXPreserveUnknownFields: {
          type: 'object', 'x-kubernetes-preserve-unknown-fields': true, additionalProperties: obj({ specified: { type: 'object' } }),
        },
      }, { 'x-kubernetes-preserve-unknown-fields': true }),
      expected: {
        unspecified: 'bar', alpha: 'abc', beta: 42.0, unspecifiedObject: { unspecified: 'bar' },
        pruning: { pruning: {}, preserving: { unspecified: 'bar' } },
        preserving: { unspecified: 'bar', unspecifiedObject: { unspecified: 'bar' }, pruning: {}, preserving: { unspecified: 'bar' } },
        preservingAdditionalPropertiesNotInheritingXPreserveUnknownFields: { foo: { specified: {} } },
      },
      pruned: [
        'preserving.pruning.unspecified',
        'preservingAdditionalPropertiesNotInheritingXPreserveUnknownFields.foo.specified.unspecified',
        'preservingAdditionalPropertiesNotInheritingXPreserveUnknownFields.foo.unspecified',
        'pruning.apiVersion', 'pruning.pruning.unspecified', 'pruning.unspecified', 'pruning.unspecifiedObject',
      ],
    },
    {
      name: 'additionalProperties with schema', json: { a: 1, b: 1, c: { a: 1, b: 2, c: { a: 1 } } },
      schema: { properties: { a: {}, c: { additionalProperties: { type: 'integer' } } } },
      expected: { a: 1, c: { a: 1, b: 2, c: {} } }, pruned: ['b', 'c.c.a'],
    },
    {
      name: 'additionalProperties with bool', json: { a: 1, b: 1, c: { a: 1, b: 2, c: { a: 1, apiVersion: 'unknown' } } },
      schema: { properties: { a: {}, c: { additionalProperties: false } } },
      expected: { a: 1, c: { a: 1, b: 2, c: {} } }, pruned: ['b', 'c.c.a', 'c.c.apiVersion'],
    },
    {
      name: 'x-kubernetes-embedded-resource, with root=true', root: true,
      json: {
        apiVersion: 'foo/v1', kind: 'Foo', metadata: { name: 'instance', unspecified: 'bar' }, unspecified: 'bar',
        pruned: { apiVersion: 'foo/v1', kind: 'Foo', unspecified: 'bar', metadata: { name: 'instance', unspecified: 'bar' }, spec: { unspecified: 'bar' } },
        preserving: { apiVersion: 'foo/v1', kind: 'Foo', unspecified: 'bar', metadata: { name: 'instance', unspecified: 'bar' }, spec: { unspecified: 'bar' } },
      },
      schema: obj({
        pruned: obj({ spec: { type: 'object' } }, { 'x-kubernetes-embedded-resource': true }),
        preserving: { type: 'object', 'x-kubernetes-embedded-resource': true, 'x-kubernetes-preserve-unknown-fields': true },
      }),
      expected: {
        apiVersion: 'foo/v1', kind: 'Foo', metadata: { name: 'instance', unspecified: 'bar' },
        pruned: { apiVersion: 'foo/v1', kind: 'Foo', metadata: { name: 'instance', unspecified: 'bar' }, spec: {} },
        preserving: { apiVersion: 'foo/v1', kind: 'Foo', unspecified: 'bar', metadata: { name: 'instance', unspecified: 'bar' }, spec: { unspecified: 'bar' } },
      },
      pruned: ['pruned.spec.unspecified', 'pruned.unspecified', 'unspecified'],
    },
  ];
  for (const row of rows) {
    it(row.name, () => {
      const value = structuredClone(row.json);
      expect(prune(value, row.schema, row.root === true)).to.deep.equal(row.pruned);
      expect(value).to.deep.equal(row.expected);
    });
  }
});

describe('custom resource schemas: defaulting (upstream TestDefault)', () => {
  const rows: Array<{ name: string; json: unknown; schema: Schema; expected: unknown }> = [
    { name: 'scalar', json: 4, schema: { default: 'foo' }, expected: 4 },
    {
      name: 'object array', json: [{ a: 1 }, { b: 1 }, { c: 1 }], schema: { items: { properties: { a: { default: 'A' }, b: { default: 'B' }, c: { default: 'C' } } } },
      expected: [{ a: 1, b: 'B', c: 'C' }, { a: 'A', b: 1, c: 'C' }, { a: 'A', b: 'B', c: 1 }],
    },
    {
      name: 'object array object',
      json: { array: [{ a: 1 }, { b: 2 }], object: { a: 1 }, additionalProperties: { x: { a: 1 }, y: { b: 2 } } },
      schema: {
        properties: {
          array: { items: { properties: { a: { default: 'A' }, b: { default: 'B' } } } },
          object: { properties: { a: { default: 'N' }, b: { default: 'O' } } },
          additionalProperties: { additionalProperties: { properties: { a: { default: 'alpha' }, b: { default: 'beta' } } } },
          foo: { default: 'bar' },
        },
      },
      expected: { array: [{ a: 1, b: 'B' }, { a: 'A', b: 2 }], object: { a: 1, b: 'O' }, additionalProperties: { x: { a: 1, b: 'beta' }, y: { a: 'alpha', b: 2 } }, foo: 'bar' },
    },
    {
      name: 'empty and null', json: [{}, { a: 1 }, { a: 0 }, { a: '' }, { a: null }, { a: [] }, { a: {} }],
      schema: { items: { properties: { a: { default: 'A' } } } },
      expected: [{ a: 'A' }, { a: 1 }, { a: 0 }, { a: '' }, { a: 'A' }, { a: [] }, { a: {} }],
    },
    { name: 'null in nullable list', json: [null], schema: { nullable: true, items: { properties: { a: { default: 'A' } } } }, expected: [null] },
    { name: 'null in non-nullable list', json: [null], schema: { items: { default: 'A' } }, expected: ['A'] },
    { name: 'null in nullable object', json: { a: null }, schema: { properties: { a: { nullable: true, default: 'A' } } }, expected: { a: null } },
    { name: 'null in non-nullable object', json: { a: null }, schema: { properties: { a: { default: 'A' } } }, expected: { a: 'A' } },
    { name: 'null in non-nullable object with additionalProperties', json: { a: null }, schema: { additionalProperties: { default: 'A' } }, expected: { a: 'A' } },
    { name: 'null unknown field', json: { a: null }, schema: { additionalProperties: true }, expected: { a: null } },
  ];
  for (const row of rows) {
    it(row.name, () => {
      const value = structuredClone(row.json);
      applyDefaults(value, row.schema);
      expect(value).to.deep.equal(row.expected);
    });
  }
});

describe('custom resource schemas: non-nullable nulls dropped (pkg/apiserver/schema/defaulting/prunenulls.go)', () => {
  const rows: Array<{ name: string; json: unknown; schema: Schema; expected: unknown }> = [
    { name: 'a null in a non-nullable field is dropped', json: { a: null, b: 1 }, schema: obj({ a: { type: 'string' }, b: { type: 'integer' } }), expected: { b: 1 } },
    { name: 'a null in a nullable field stays', json: { a: null }, schema: obj({ a: { type: 'string', nullable: true } }), expected: { a: null } },
    { name: 'a null with a default stays, for defaulting', json: { a: null }, schema: obj({ a: { type: 'string', default: 'x' } }), expected: { a: null } },
    { name: 'a null where no schema applies stays', json: { a: null }, schema: obj({}, { 'x-kubernetes-preserve-unknown-fields': true }), expected: { a: null } },
    { name: 'additionalProperties decide for their keys', json: { a: null, b: 'v' }, schema: { type: 'object', additionalProperties: { type: 'string' } }, expected: { b: 'v' } },
    { name: 'nested, and inside list items', json: { l: [{ a: null, b: 'x' }, null] }, schema: obj({ l: { type: 'array', items: obj({ a: { type: 'object' }, b: { type: 'string' } }) } }), expected: { l: [{ b: 'x' }, null] } },
  ];
  for (const row of rows) {
    it(row.name, () => {
      const value = structuredClone(row.json);
      pruneNonNullableNulls(value, row.schema);
      expect(value).to.deep.equal(row.expected);
    });
  }

  it('a null list item is not dropped and is refused by validation, as the real server does', () => {
    const schema = obj({ l: { type: 'array', items: { type: 'string' } } });
    const object = { l: ['a', null] };
    expect(admitCustomResource(object, undefined, schema).errors.map((e) => `${e.field}: ${e.text}`)).to.deep.equal(['l[1]: Invalid value: "null": l[1] in body must be of type string: "null"']);
  });
});

describe('custom resource schemas: value validation (pkg/apiserver/validation)', () => {
  const rows: Array<{ name: string; value: unknown; schema: Schema; errors: string[] }> = [
    { name: 'type', value: { replicas: 'two' }, schema: obj({ replicas: { type: 'integer' } }), errors: ['spec.replicas: Invalid value: "string": spec.replicas in body must be of type integer: "string"'] },
    { name: 'required', value: {}, schema: obj({ image: { type: 'string' } }, { required: ['image'] }), errors: ['spec.image: Required value'] },
    { name: 'enum', value: { policy: 'Sometimes' }, schema: obj({ policy: { type: 'string', enum: ['Always', 'Never'] } }), errors: ['spec.policy: Unsupported value: "Sometimes": supported values: "Always", "Never"'] },
    { name: 'pattern', value: { name: 'A' }, schema: obj({ name: { type: 'string', pattern: '^[a-z]+$' } }), errors: [`spec.name: Invalid value: "A": spec.name in body should match '^[a-z]+$'`] },
    // kube-openapi pkg/validation/validate/type.go: an integer format is not a range check
    { name: 'int32 format takes any integer', value: { n: 2 ** 31, m: -(2 ** 40) }, schema: obj({ n: { type: 'integer', format: 'int32' }, m: { type: 'integer', format: 'int32' } }), errors: [] },
    // apimachinery pkg/util/json convertNumber: a whole number beyond int64 decodes as a float64, which is no integer
    { name: 'an integer beyond int64 is a number', value: { n: 2 ** 64 }, schema: obj({ n: { type: 'integer', format: 'int64' } }), errors: ['spec.n: Invalid value: "number": spec.n in body must be of type integer: "number"'] },
    { name: 'date-time format', value: { at: 'yesterday' }, schema: obj({ at: { type: 'string', format: 'date-time' } }), errors: ['spec.at: Invalid value: "yesterday": spec.at in body must be of type date-time: "yesterday"'] },
    // formats_test.go: a format the apiserver does not know is ignored; names compare without '-'
    { name: 'unknown format ignored', value: { x: 'anything' }, schema: obj({ x: { type: 'string', format: 'unknown-format' } }), errors: [] },
    { name: 'quantity format', value: { q: '10Gi', r: 'ten' }, schema: obj({ q: { type: 'string', format: 'quantity' }, r: { type: 'string', format: 'quantity' } }), errors: ['spec.r: Invalid value: "ten": spec.r in body must be of type quantity: "ten"'] },
    { name: 'minimum', value: { n: 0 }, schema: obj({ n: { type: 'integer', minimum: 1 } }), errors: ['spec.n: Invalid value: 0: spec.n in body should be greater than or equal to 1'] },
    { name: 'maxItems', value: { l: [1, 2, 3] }, schema: obj({ l: { type: 'array', maxItems: 2, items: { type: 'integer' } } }), errors: ['spec.l: Too many: 3: must have at most 2 items'] },
    { name: 'minItems', value: { l: [] }, schema: obj({ l: { type: 'array', minItems: 1, items: { type: 'integer' } } }), errors: ['spec.l: Invalid value: "array": spec.l in body should have at least 1 items'] },
    { name: 'list-type set', value: { l: ['a', 'a'] }, schema: obj({ l: { type: 'array', 'x-kubernetes-list-type': 'set', items: { type: 'string' } } }), errors: ['spec.l[1]: Duplicate value: "a"'] },
    {
      name: 'list-type map', value: { l: [{ name: 'a', v: 1 }, { name: 'a', v: 2 }] },
      schema: obj({ l: { type: 'array', 'x-kubernetes-list-type': 'map', 'x-kubernetes-list-map-keys': ['name'], items: obj({ name: { type: 'string' }, v: { type: 'integer' } }) } }),
      errors: ['spec.l[1]: Duplicate value: {"name":"a"}'],
    },
    { name: 'int-or-string takes both', value: { p: 80, q: '50%' }, schema: obj({ p: { 'x-kubernetes-int-or-string': true }, q: { 'x-kubernetes-int-or-string': true } }), errors: [] },
    { name: 'int-or-string refuses a bool', value: { p: true }, schema: obj({ p: { 'x-kubernetes-int-or-string': true } }), errors: ['spec.p: Invalid value: "boolean": spec.p in body must be of type integer,string: "boolean"'] },
    { name: 'embedded resource needs apiVersion and kind', value: { template: { metadata: {} } }, schema: obj({ template: { type: 'object', 'x-kubernetes-embedded-resource': true, 'x-kubernetes-preserve-unknown-fields': true } }), errors: ['spec.template.apiVersion: Required value: must not be empty', 'spec.template.kind: Required value: must not be empty'] },
  ];
  for (const row of rows) {
    it(row.name, () => {
      const errors = validateValue(row.value, row.schema, 'spec').map((e) => `${e.field}: ${e.text}`);
      expect(errors).to.deep.equal(row.errors);
    });
  }
});

describe('custom resource schemas: validation ratcheting on update (pkg/apiserver/validation/ratcheting.go)', () => {
  const schema = obj({
    size: { type: 'integer', maximum: 5 },
    ports: { type: 'array', 'x-kubernetes-list-type': 'map', 'x-kubernetes-list-map-keys': ['name'], items: obj({ name: { type: 'string' }, port: { type: 'integer', maximum: 100 } }) },
    tags: { type: 'array', 'x-kubernetes-list-type': 'set', items: { type: 'string', maxLength: 3 } },
  });
  const errorsOf = (value: unknown, old: unknown) => validateValue(value, schema, 'spec', false, { old }).map((e) => e.field);

  it('an invalid value left unchanged passes; a changed one is refused', () => {
    expect(errorsOf({ size: 9 }, { size: 9 })).to.deep.equal([]);
    expect(errorsOf({ size: 8 }, { size: 9 })).to.deep.equal(['spec.size']);
    expect(validateValue({ size: 9 }, schema, 'spec').map((e) => e.field), 'a create has nothing to ratchet against').to.deep.equal(['spec.size']);
  });

  it('map-list items correlate by key, wherever they moved; set items never do', () => {
    expect(errorsOf({ ports: [{ name: 'b', port: 1 }, { name: 'a', port: 500 }] }, { ports: [{ name: 'a', port: 500 }] })).to.deep.equal([]);
    expect(errorsOf({ ports: [{ name: 'a', port: 501 }] }, { ports: [{ name: 'a', port: 500 }] })).to.deep.equal(['spec.ports[0].port']);
    expect(errorsOf({ tags: ['long', 'x'] }, { tags: ['long'] })).to.deep.equal(['spec.tags[0]']);
    expect(errorsOf({ tags: ['long'] }, { tags: ['long'] }), 'the whole list unchanged').to.deep.equal([]);
  });

  it('a CEL rule without oldSelf is ratcheted too', () => {
    const rule = obj({ n: { type: 'integer', 'x-kubernetes-validations': [{ rule: 'self > 0' }] } });
    expect(validateCel({ n: 0 }, { n: 0 }, rule, 'spec')).to.deep.equal([]);
    expect(validateCel({ n: -1 }, { n: 0 }, rule, 'spec').map((e) => e.field)).to.deep.equal(['spec.n']);
  });
});

describe('custom resource schemas: x-kubernetes-validations (pkg/apiserver/schema/cel)', () => {
  const replicas = obj({ replicas: { type: 'integer' }, minReplicas: { type: 'integer' }, maxReplicas: { type: 'integer' } }, {
    'x-kubernetes-validations': [{ rule: 'self.minReplicas <= self.replicas && self.replicas <= self.maxReplicas', message: 'replicas should be in between minReplicas and maxReplicas' }],
  });
  // the immutable-queue rule the training-operator CRDs carry from CKF 1.9 on
  const queue = obj({ queue: { type: 'string', 'x-kubernetes-validations': [{ rule: 'self == oldSelf', message: 'queue is immutable' }] } });

  it('a rule over integers passes and fails with its message', () => {
    expect(validateCel({ replicas: 2, minReplicas: 1, maxReplicas: 3 }, undefined, replicas, 'spec')).to.deep.equal([]);
    const errors = validateCel({ replicas: 5, minReplicas: 1, maxReplicas: 3 }, undefined, replicas, 'spec');
    expect(errors.map((e) => `${e.field}: ${e.text}`)).to.deep.equal(['spec: Invalid value: "object": replicas should be in between minReplicas and maxReplicas']);
  });

  it('a transition rule runs on update only, against the old value', () => {
    expect(validateCel({ queue: 'a' }, undefined, queue, 'spec'), 'create').to.deep.equal([]);
    expect(validateCel({ queue: 'a' }, { queue: 'a' }, queue, 'spec'), 'unchanged').to.deep.equal([]);
    expect(validateCel({ queue: 'b' }, { queue: 'a' }, queue, 'spec').map((e) => e.text)).to.deep.equal(['Invalid value: "b": queue is immutable']);
    expect(validateCel({ queue: 'b' }, {}, queue, 'spec'), 'the field is new on update: no oldSelf').to.deep.equal([]);
  });

  it('without a message the failure names the rule', () => {
    const schema = obj({ n: { type: 'integer', 'x-kubernetes-validations': [{ rule: 'self > 0' }] } });
    expect(validateCel({ n: 0 }, undefined, schema, 'spec').map((e) => e.text)).to.deep.equal(['Invalid value: 0: failed rule: self > 0']);
  });

  it('a messageExpression gives the message, and message is the fallback', () => {
    const schema = obj({ n: { type: 'integer', 'x-kubernetes-validations': [{ rule: 'self < 10', messageExpression: "'n is ' + string(self) + ', above 9'", message: 'too big' }] } });
    expect(validateCel({ n: 12 }, undefined, schema, 'spec').map((e) => e.text)).to.deep.equal(['Invalid value: 12: n is 12, above 9']);
    const broken = obj({ n: { type: 'integer', 'x-kubernetes-validations': [{ rule: 'self < 10', messageExpression: "''", message: 'too big' }] } });
    expect(validateCel({ n: 12 }, undefined, broken, 'spec').map((e) => e.text)).to.deep.equal(['Invalid value: 12: too big']);
  });

  it('CEL rules run only after the schema validation passed, on the defaulted and pruned object', () => {
    const schema = obj({ spec: obj({ n: { type: 'integer', default: 0, 'x-kubernetes-validations': [{ rule: 'self >= 0' }] } }) });
    const body: Record<string, unknown> = { apiVersion: 'x/v1', kind: 'X', metadata: { name: 'a' }, spec: { extra: 1 } };
    expect(admitCustomResource(body, undefined, schema)).to.deep.equal({ pruned: ['spec.extra'], errors: [] });
    expect(body.spec).to.deep.equal({ n: 0 });
  });
});

describe('custom resource schemas through the HTTP server', function () {
  const crd: KubeObject = {
    apiVersion: 'apiextensions.k8s.io/v1', kind: 'CustomResourceDefinition', metadata: { name: 'queues.example.org' },
    spec: {
      group: 'example.org', scope: 'Namespaced', names: { plural: 'queues', kind: 'Queue' },
      versions: [{
        name: 'v1', served: true, storage: true,
        schema: {
          openAPIV3Schema: obj({
            spec: obj({
              name: { type: 'string', 'x-kubernetes-validations': [{ rule: 'self == oldSelf', message: 'name is immutable' }] },
              size: { type: 'integer', default: 1, minimum: 1 },
              note: { type: 'string' },
              replicas: { type: 'integer', format: 'int32' },
            }, { required: ['name'] }),
          }),
        },
      }],
    },
  };
  let c: RunningCluster;
  let objects: k8s.KubernetesObjectApi;
  before(async () => {
    c = await startCluster({ kubeflowCrds: false, crds: [crd] });
    const kc = new k8s.KubeConfig();
    kc.loadFromFile(c.kubeconfigPath);
    objects = k8s.KubernetesObjectApi.makeApiClient(kc);
    await kc.makeApiClient(k8s.CoreV1Api).createNamespace({ body: { metadata: { name: 'team' } } });
  });
  after(async () => c.stop());

  const queue = (spec: Record<string, unknown>) => ({ apiVersion: 'example.org/v1', kind: 'Queue', metadata: { name: 'q', namespace: 'team' }, spec });

  it('dryRun=All answers the defaulted and pruned object and stores nothing', async () => {
    const answer = await objects.create(queue({ name: 'a', unknown: true }), undefined, 'All');
    expect(answer.spec).to.deep.equal({ name: 'a', size: 1 });
    expect(c.cluster.get({ group: 'example.org', resource: 'queues' }, 'q', 'team')).to.equal(undefined);
  });

  it('refuses a body the schema refuses, with the 422 sentence', async () => {
    const refused = await objects.create(queue({ size: 0 })).then(() => undefined, (e: { body: string }) => JSON.parse(e.body) as { code: number; message: string });
    expect(refused?.code).to.equal(422);
    expect(refused?.message).to.equal('Queue.example.org "q" is invalid: [spec.name: Required value, spec.size: Invalid value: 0: spec.size in body should be greater than or equal to 1]');
  });

  it('accepts a null in a non-nullable field by dropping it, and an int32 field beyond its range', async () => {
    const answer = await objects.create(queue({ name: 'a', note: null, replicas: 2 ** 31 }), undefined, 'All');
    expect(answer.spec).to.deep.equal({ name: 'a', size: 1, replicas: 2147483648 });
  });

  it('runs a transition rule on update, not on create', async () => {
    const made = await objects.create(queue({ name: 'a' }));
    const refused = await objects.replace({ ...made, spec: { name: 'b' } } as never, undefined, 'All').then(() => undefined, (e: { body: string }) => JSON.parse(e.body) as { message: string });
    expect(refused?.message).to.equal('Queue.example.org "q" is invalid: spec.name: Invalid value: "b": name is immutable');
    const same = (await objects.replace({ ...made, spec: { name: 'a', dropped: 1 } } as never)) as KubeObject;
    expect(same.spec, 'the unknown field is pruned on update too').to.deep.equal({ name: 'a', size: 1 });
  });
});
