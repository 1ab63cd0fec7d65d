// The product's quantities (src/kube/quantity.ts) against what kube-apiserver prints for them: the canonical forms
// of kubernetes/apimachinery pkg/api/resource/quantity.go (CanonicalizeBytes), worked by hand as literals here.
import { expect } from 'chai';
import { addQuantities, compareQuantities, formatQuantity, parseQuantity } from '../../src/kube/quantity.ts';

const printed: Array<[string, string]> = [
  ['0', '0'], ['1', '1'], ['1000m', '1'], ['0.1', '100m'], ['1.5', '1500m'], ['1500', '1500'], ['5000', '5k'], ['10G', '10G'],
  ['1e3', '1e3'], ['1024', '1024'], ['1024Mi', '1Gi'], ['1.5Gi', '1536Mi'], ['0.5Ki', '512'], ['1536', '1536'], ['2048Ki', '2Mi'],
];

describe('kube: quantities as the API server prints them', () => {
  for (const [text, canonical] of printed) {
    it(`${text} prints as ${canonical}`, () => {
      expect(formatQuantity(parseQuantity(text)!)).to.equal(canonical);
    });
  }

  it('a sum keeps the first non-zero addend\'s format, as Quantity.Add does', () => {
    expect(formatQuantity(addQuantities(parseQuantity('0')!, parseQuantity('2Gi')!))).to.equal('2Gi');
    expect(formatQuantity(addQuantities(parseQuantity('2Gi')!, parseQuantity('2Gi')!))).to.equal('4Gi');
    expect(formatQuantity(addQuantities(parseQuantity('1G')!, parseQuantity('1Gi')!))).to.equal('2073741824');
  });

  it('compares across suffixes by value', () => {
    expect(compareQuantities(parseQuantity('1Gi')!, parseQuantity('1G')!)).to.equal(1);
    expect(compareQuantities(parseQuantity('1000Mi')!, parseQuantity('1000Mi')!)).to.equal(0);
    expect(compareQuantities(parseQuantity('500m')!, parseQuantity('1')!)).to.equal(-1);
  });

  it('refuses text that is not a quantity', () => {
    for (const text of ['', '1Gb', 'abc', '1.2.3']) expect(parseQuantity(text), text).to.equal(undefined);
  });
});
