// Upstream: yaml/pyyaml lib/yaml/resolver.py, representer.py and emitter.py (github.com/yaml/pyyaml).
// The PyYAML dumping model against what PyYAML itself wrote (fixtures/pyyaml-safe-dump.json, produced with PyYAML's
// yaml.safe_dump; the generator line in the file says which version). The model has its own resolver, so a bug in the
// product's (src/controlplane/python-yaml.ts) cannot hide here.
import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import { pyyamlSafeDump } from './pyyaml-dump.ts';

interface Fixture {
  generator: string;
  strings: { input: string; mapping: string; list: string }[];
  mixed: { value: Record<string, string | number | boolean | null>; dumped: string };
}
const fixture = JSON.parse(readFileSync(new URL('./fixtures/pyyaml-safe-dump.json', import.meta.url), 'utf8')) as Fixture;

describe('tests/support/providers/pyyaml-dump: byte for byte what PyYAML safe_dump writes', function () {
  it('writes every fixture string as PyYAML did, in a mapping and in a list', function () {
    const differ = fixture.strings
      .map(({ input, mapping, list }) => ({ input, expected: [mapping, list], actual: [pyyamlSafeDump({ v: input }), pyyamlSafeDump([input])] }))
      .filter(({ expected, actual }) => expected[0] !== actual[0] || expected[1] !== actual[1]);
    expect(fixture.strings.length).to.be.greaterThan(100);
    expect(differ).to.deep.equal([]);
  });

  it('sorts keys and writes ints, booleans and null as PyYAML did', function () {
    expect(pyyamlSafeDump(fixture.mixed.value)).to.equal(fixture.mixed.dumped);
  });
});
