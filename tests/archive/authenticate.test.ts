// The manifest HMAC: keyed apart from the sealing key, checked as bytes arrive, and judged by one policy that says
// which case refused a backup and never anything of the key.
import { expect } from 'chai';
import { createHmac, hkdfSync } from 'node:crypto';
import {
  judgeAuthentication, ManifestSigner, ManifestVerifier, NotAuthenticatedError, refuseAllowWithLatest, unauthenticatedReason,
} from '../../src/archive/authenticate.ts';
import { kdf, SecretSealer } from '../../src/archive/seal.ts';

const KEY = 'correct horse battery staple';
const ID = 'kf-20261201-120000-abcdef';
const MANIFEST = Buffer.from('{"formatVersion":1,"backupId":"kf-20261201-120000-abcdef"}');

function signed(bytes: Buffer, key = KEY, salt = Buffer.alloc(16, 1)): string {
  const signer = new ManifestSigner(key, salt);
  signer.update(bytes);
  return signer.annotation();
}

function verdictOf(annotation: unknown, bytes: Buffer, key = KEY) {
  const verifier = new ManifestVerifier(key, annotation);
  // in pieces, as the manifest arrives from S3
  verifier.update(bytes.subarray(0, 7));
  verifier.update(bytes.subarray(7));
  return verifier.verdict();
}

describe('archive: the manifest HMAC', () => {
  it('is HMAC-SHA256 under HKDF(scrypt(key, salt), salt, its own label), recorded with its salt', () => {
    const salt = Buffer.alloc(16, 1);
    const annotation = signed(MANIFEST);
    const macKey = Buffer.from(hkdfSync('sha256', kdf(KEY, salt), salt, 'kubeflow-upgrader manifest hmac v1', 32));
    expect(annotation).to.equal(`hmac-sha256;salt=${salt.toString('base64')};mac=${createHmac('sha256', macKey).update(MANIFEST).digest('hex')}`);
    expect(annotation).not.to.include(KEY);
  });

  it('is keyed apart from the sealing key, even when both use the same salt', () => {
    const salt = Buffer.alloc(16, 1);
    const sealer = SecretSealer.create(KEY, ID, salt);
    const macKey = Buffer.from(hkdfSync('sha256', kdf(KEY, salt), salt, 'kubeflow-upgrader manifest hmac v1', 32));
    const sealKey = Buffer.from(hkdfSync('sha256', kdf(KEY, salt), salt, 'kubeflow-upgrader seal v2', 32));
    expect(macKey.equals(sealKey)).to.equal(false);
    expect(macKey.equals(kdf(KEY, salt))).to.equal(false);
    expect(sealer.parameters.salt).to.equal(salt.toString('base64'));
  });

  it('authenticates the bytes it signed and nothing else', () => {
    const annotation = signed(MANIFEST);
    expect(verdictOf(annotation, MANIFEST)).to.equal('authenticated');
    const changed = Buffer.from(MANIFEST.toString().replace('"formatVersion":1', '"formatVersion":2'));
    expect(verdictOf(annotation, changed)).to.equal('mismatch');
    expect(verdictOf(annotation, MANIFEST, 'another key')).to.equal('mismatch');
    // a forger who picks another salt still needs the key
    expect(verdictOf(annotation.replace(/salt=[^;]+/, `salt=${Buffer.alloc(16, 2).toString('base64')}`), MANIFEST)).to.equal('mismatch');
  });

  it('treats only a missing annotation as no HMAC', () => {
    expect(verdictOf(undefined, MANIFEST)).to.equal('no-hmac');
  });

  it('treats a malformed annotation as a mismatch, never as no HMAC (a damaged HMAC must not become waivable)', () => {
    const good = signed(MANIFEST);
    const malformed = [
      '', 42, null, 'hmac-sha256;salt=x;mac=y', good.replace('hmac-sha256', 'hmac-md5'),
      good.slice(0, -1), // one hex digit dropped
      `${good}0`, good.replace(/mac=([0-9a-f])/, 'mac=$1$1'), good.toUpperCase(), good.replace(';salt=', ';salt= '),
    ];
    for (const annotation of malformed) expect(verdictOf(annotation, MANIFEST), String(annotation)).to.equal('mismatch');
    expect(verdictOf(good, MANIFEST)).to.equal('authenticated');
  });

  it('refuses allow-unauthenticated with latest in one sentence, and accepts it with an id', () => {
    expect(() => refuseAllowWithLatest('latest', { allowUnauthenticated: true })).to.throw(NotAuthenticatedError,
      /^allow-unauthenticated=true accepts one backup named by its id, never latest: give the backup id that list-backups shows, after checking that backup\.$/);
    expect(() => refuseAllowWithLatest('latest', { allowUnauthenticated: true, allowHint: '--allow-unauthenticated' })).to.throw(/^--allow-unauthenticated accepts one backup/);
    expect(() => refuseAllowWithLatest(ID, { allowUnauthenticated: true })).not.to.throw();
    expect(() => refuseAllowWithLatest('latest', { allowUnauthenticated: false })).not.to.throw();
  });

  describe('the policy', () => {
    it('checks nothing without a key, as before', () => {
      expect(judgeAuthentication(ID, undefined, {}, 'restored').state).to.equal('not-checked');
      expect(judgeAuthentication(ID, 'mismatch', { encryptionKey: '' }, 'restored').state).to.equal('not-checked');
    });

    it('refuses a wrong HMAC even when unauthenticated backups are allowed, in one sentence without the key', () => {
      const refuse = () => judgeAuthentication(ID, 'mismatch', { encryptionKey: KEY, allowUnauthenticated: true }, 'restored');
      expect(refuse).to.throw(NotAuthenticatedError, `Backup ${ID} is not authenticated and was not restored: ${unauthenticatedReason('mismatch')}.`);
      try {
        refuse();
      } catch (error) {
        expect((error as Error).message).not.to.include(KEY);
        expect((error as Error).message.match(/\. /g)).to.equal(null);
      }
    });

    it('refuses a missing HMAC unless allowed, naming how to allow it where the user is', () => {
      expect(() => judgeAuthentication(ID, 'no-hmac', { encryptionKey: KEY, allowHint: '--allow-unauthenticated' }, 'verified'))
        .to.throw(NotAuthenticatedError, /^Backup kf-20261201-120000-abcdef is not authenticated and was not verified: its velero-backup.json carries no HMAC .*; set --allow-unauthenticated to accept it anyway\.$/);
      const allowed = judgeAuthentication(ID, undefined, { encryptionKey: KEY, allowUnauthenticated: true }, 'restored');
      expect(allowed).to.deep.equal({ state: 'unauthenticated-allowed', note: `not authenticated (${unauthenticatedReason('no-hmac')}), accepted because allow-unauthenticated=true was given` });
      expect(judgeAuthentication(ID, 'authenticated', { encryptionKey: KEY }, 'restored').state).to.equal('authenticated');
    });
  });
});
