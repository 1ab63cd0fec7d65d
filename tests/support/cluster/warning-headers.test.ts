// Upstream repository: github.com/kubernetes/kubernetes (the staging paths above), at release-1.30.
// The Warning header lines of one request, as kube-apiserver's recorder writes them (staging/src/k8s.io/apiserver/pkg/
// endpoints/filters/warning.go: empty texts skipped, each text once, past 4096 runes in all every text cut to 256 runes
// and the header rewritten; staging/src/k8s.io/apimachinery/pkg/util/net/http.go NewWarningHeader: `299 - "<text>"`
// with `"` and `\` escaped).
import { expect } from 'chai';
import { WarningRecorder } from './unknown-fields.ts';

describe('embedded API server: Warning headers', () => {
  it('writes each warning once, as 299 with no agent, quotes and backslashes escaped', () => {
    const r = new WarningRecorder();
    r.add('unknown field "spec.foo"');
    r.add('');
    r.add('unknown field "spec.foo"');
    r.add('a\\b');
    expect(r.headers).to.deep.equal(['299 - "unknown field \\"spec.foo\\""', '299 - "a\\\\b"']);
  });

  it('cuts every warning to 256 runes once the total passes 4096', () => {
    const r = new WarningRecorder();
    const long = (c: string) => c.repeat(1000);
    for (const c of ['a', 'b', 'c', 'd']) r.add(long(c));
    expect(r.headers.map((h) => h.length)).to.deep.equal([1008, 1008, 1008, 1008]);
    r.add(long('e'));
    expect(r.headers).to.have.length(5);
    for (const h of r.headers) expect(h).to.equal(`299 - "${h.charAt(7).repeat(256)}"`);
  });
});
