// Databags Python charms write with PyYAML read back as PyYAML reads them (YAML 1.1, PyYAML's resolver).
import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import { parse as parseYaml12 } from 'yaml';
import { parsePythonYaml, pyyamlReadsAsString } from '../../src/controlplane/python-yaml.ts';
import { pyyamlSafeDump } from '../support/providers/pyyaml-dump.ts';

describe('parsePythonYaml', function () {
  // Strings PyYAML writes unquoted because its resolver reads them as strings, yet YAML 1.2 reads as numbers.
  const plainToPyyaml = ['1e3', '12345678E9', '0o17', '1E100'];

  it('reads the strings PyYAML left unquoted as strings, where YAML 1.2 would read numbers', function () {
    for (const key of plainToPyyaml) {
      const dumped = pyyamlSafeDump({ 'secret-key': key });
      expect(dumped, key).to.equal(`secret-key: ${key}\n`);
      expect(typeof (parseYaml12(dumped) as Record<string, unknown>)['secret-key'], key).to.not.equal('string');
      expect(parsePythonYaml(dumped), key).to.deep.equal({ 'secret-key': key });
    }
  });

  it('keeps the types PyYAML would give: ints, booleans (yes/on too), null', function () {
    expect(parsePythonYaml('port: 9000\nsecure: false\nnamespace: null\nflag: on\nold: 017\n')).to.deep.equal({ port: 9000, secure: false, namespace: null, flag: true, old: 15 });
  });

  it('round-trips what the PyYAML model quotes (YAML 1.1 booleans, ints, floats with a dot)', function () {
    const values = { a: 'yes', b: '0x1F', c: '1.5', d: '1:20', e: 'null', f: "it's", g: '2024-01-01', h: '- x', i: 'a: b', port: 9000, secure: true };
    const dumped = pyyamlSafeDump(values);
    expect(dumped).to.include("a: 'yes'\n").and.to.include("b: '0x1F'\n").and.to.include("f: it's\n");
    expect(parsePythonYaml(dumped)).to.deep.equal(values);
  });

  it('follows PyYAML resolver edge cases', function () {
    expect(pyyamlReadsAsString('1e3')).to.equal(true);
    expect(pyyamlReadsAsString('1.0e+3')).to.equal(false);
    expect(pyyamlReadsAsString('1_000')).to.equal(false);
    expect(pyyamlReadsAsString('Off')).to.equal(false);
    expect(pyyamlReadsAsString('minio')).to.equal(true);
  });

  it('reads back every string exactly as PyYAML wrote it (fixtures made by PyYAML safe_dump)', function () {
    const fixture = JSON.parse(readFileSync(new URL('../support/providers/fixtures/pyyaml-safe-dump.json', import.meta.url), 'utf8')) as { strings: { input: string; mapping: string }[] };
    const misread = fixture.strings.filter(({ input, mapping }) => (parsePythonYaml(mapping) as { v: unknown }).v !== input).map(({ mapping }) => mapping);
    expect(misread).to.deep.equal([]);
  });

  it('throws on text that is not YAML', function () {
    expect(() => parsePythonYaml('a: [unclosed')).to.throw();
  });
});
