// The restic repository passwords (src/volumes/restic/password.ts) against an oracle written here from the documented
// labels with node:crypto's HKDF, never the product's function.
import { expect } from 'chai';
import { hkdfSync } from 'node:crypto';
import { legacyResticPassword, resticPassword, UNKEYED_RESTIC_PASSWORD } from '../../src/volumes/restic/password.ts';

const KEY = 'an encryption key of the tests';
const hkdf = (key: string, info: string) => Buffer.from(hkdfSync('sha256', key, 'kubeflow-upgrader restic', info, 32)).toString('hex');

describe('volumes: restic repository passwords', () => {
  it('is HKDF-SHA256 of the key with the v2 label and the namespace', () => {
    expect(resticPassword(KEY, 'alice')).to.equal(hkdf(KEY, 'kubeflow-upgrader restic repository password v2 alice'));
  });

  it('differs per namespace', () => {
    const passwords = ['alice', 'bob', 'kubeflow-user-example-com', 'a'].map((ns) => resticPassword(KEY, ns));
    expect(new Set(passwords).size).to.equal(passwords.length);
  });

  it('differs from the shared v1 password, which is kept as the legacy one', () => {
    const legacy = hkdf(KEY, 'kubeflow-upgrader restic repository password v1');
    expect(legacyResticPassword(KEY)).to.equal(legacy);
    expect(resticPassword(KEY, 'alice')).to.not.equal(legacy);
  });

  it('differs from what other labels of the same key give (the manifest HMAC and sealing keys use their own)', () => {
    const password = resticPassword(KEY, 'alice');
    for (const info of ['kubeflow-upgrader restic repository password v2', 'kubeflow-upgrader restic repository password v2alice', 'kubeflow-upgrader restic repository password v3 alice']) {
      expect(password, info).to.not.equal(hkdf(KEY, info));
    }
  });

  it('differs per key for the same namespace', () => {
    expect(resticPassword(KEY, 'alice')).to.not.equal(resticPassword(`${KEY}2`, 'alice'));
  });

  it('is the published fixed password without a key, for every namespace and for the legacy one', () => {
    for (const key of [undefined, '']) {
      expect(resticPassword(key, 'alice')).to.equal('kubeflow-upgrader-unkeyed-restic-repository');
      expect(resticPassword(key, 'bob')).to.equal('kubeflow-upgrader-unkeyed-restic-repository');
      expect(legacyResticPassword(key)).to.equal('kubeflow-upgrader-unkeyed-restic-repository');
    }
    expect(UNKEYED_RESTIC_PASSWORD).to.equal('kubeflow-upgrader-unkeyed-restic-repository');
  });

  it('refuses a name that is not a namespace in one sentence', () => {
    for (const bad of ['', 'Alice', 'a b', 'alice/', `${'a'.repeat(64)}`]) {
      expect(() => resticPassword(KEY, bad)).to.throw(`"${bad}" is not a namespace name, so it has no restic repository password.`);
    }
  });
});
