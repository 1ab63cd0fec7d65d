// Which archived Services a restore narrows to their primary family on a target that is not dual-stack
// (src/kubeflow/ip-families.ts): only PreferDualStack over two families; RequireDualStack is the user's demand and
// goes as archived (the target refuses it: kubernetes pkg/registry/core/service/storage/alloc.go initIPFamilyFields).
import { expect } from 'chai';
import type { KubeObject } from '../../src/kube/types.ts';
import { isDualStackAnswer, singleStackOf } from '../../src/kubeflow/ip-families.ts';

const svc = (spec: Record<string, unknown>): KubeObject => ({ apiVersion: 'v1', kind: 'Service', metadata: { name: 's', namespace: 'alice' }, spec: { selector: { app: 's' }, ...spec } } as KubeObject);

describe('singleStackOf', () => {
  const rows: Array<[string, KubeObject, string[] | undefined]> = [
    ['PreferDualStack over IPv4 and IPv6 keeps IPv4', svc({ ipFamilyPolicy: 'PreferDualStack', ipFamilies: ['IPv4', 'IPv6'] }), ['IPv4']],
    ['PreferDualStack over IPv6 and IPv4 keeps IPv6, its primary', svc({ ipFamilyPolicy: 'PreferDualStack', ipFamilies: ['IPv6', 'IPv4'] }), ['IPv6']],
    ['PreferDualStack with one family: as archived', svc({ ipFamilyPolicy: 'PreferDualStack', ipFamilies: ['IPv4'] }), undefined],
    ['RequireDualStack: as archived', svc({ ipFamilyPolicy: 'RequireDualStack', ipFamilies: ['IPv4', 'IPv6'] }), undefined],
    ['SingleStack: as archived', svc({ ipFamilyPolicy: 'SingleStack', ipFamilies: ['IPv4'] }), undefined],
    ['a headless Service without a selector may hold both: as archived', svc({ clusterIP: 'None', selector: undefined, ipFamilyPolicy: 'PreferDualStack', ipFamilies: ['IPv4', 'IPv6'] }), undefined],
    ['ExternalName: as archived', svc({ type: 'ExternalName', externalName: 'example.com' }), undefined],
  ];
  for (const [name, object, families] of rows) {
    it(name, () => expect((singleStackOf(object, false)?.object.spec as { ipFamilies?: string[] } | undefined)?.ipFamilies).to.deep.equal(families));
  }

  it('says what it did, or would do on a dry run, in one sentence, and leaves the archived object as it was', () => {
    const archived = svc({ ipFamilyPolicy: 'PreferDualStack', ipFamilies: ['IPv4', 'IPv6'] });
    expect(singleStackOf(archived, true)?.note).to.equal("Service/alice/s: would be restored single-stack (IPv4): the target is not configured for dual-stack services, and the backup's asks PreferDualStack over IPv4 and IPv6");
    expect((archived.spec as { ipFamilies: string[] }).ipFamilies).to.deep.equal(['IPv4', 'IPv6']);
  });

  it('reads a dual-stack target from the families of its answer to the probe', () => {
    expect(isDualStackAnswer(svc({ ipFamilies: ['IPv4', 'IPv6'] }))).to.equal(true);
    expect(isDualStackAnswer(svc({ ipFamilies: ['IPv4'] }))).to.equal(false);
  });
});
