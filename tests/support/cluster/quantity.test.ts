// The embedded server's quantities (quantity.ts) against the canonical forms kube-apiserver prints: the rules of
// kubernetes/kubernetes staging/src/k8s.io/apimachinery/pkg/api/resource/quantity.go (CanonicalizeBytes: binary
// suffixes only for whole multiples of 1024 from 1024 up, decimal exponents in steps of three) worked by hand.
import { expect } from 'chai';
import { add, formatQuantity, parseQuantity } from './quantity.ts';

const cases: Array<[string, string]> = [
  ['0', '0'], ['1', '1'], ['1000m', '1'], ['100m', '100m'], ['0.1', '100m'], ['1.5', '1500m'], ['1500', '1500'], ['5000', '5k'],
  ['10G', '10G'], ['1e3', '1e3'], ['1E6', '1e6'], ['1024', '1024'], ['1Ki', '1Ki'], ['1024Mi', '1Gi'], ['1.5Gi', '1536Mi'],
  ['0.5Ki', '512'], ['2048Ki', '2Mi'], ['100Mi', '100Mi'], ['1n', '1n'],
];

describe('embedded API server: quantities in canonical form', () => {
  for (const [text, printed] of cases) {
    it(`prints ${text} as ${printed}`, () => {
      expect(formatQuantity(parseQuantity(text)!)).to.equal(printed);
    });
  }

  it('keeps the format of the first non-zero addend, as Quantity.Add does', () => {
    expect(formatQuantity(add(parseQuantity('0')!, parseQuantity('1Gi')!))).to.equal('1Gi');
    expect(formatQuantity(add(parseQuantity('1Gi')!, parseQuantity('512Mi')!))).to.equal('1536Mi');
    expect(formatQuantity(add(parseQuantity('1G')!, parseQuantity('1Gi')!))).to.equal('2073741824');
  });

  it('refuses text that is no quantity', () => {
    expect(parseQuantity('1Gb')).to.equal(undefined);
    expect(parseQuantity('')).to.equal(undefined);
  });
});
