// Sealed values are bound to their backup, Secret and key; values sealed before that binding still open.
import { expect } from 'chai';
import { createCipheriv, randomBytes } from 'node:crypto';
import type { KubeObject } from '../../src/kube/types.ts';
import { createHash } from 'node:crypto';
import { kdf, keyIdOf, SealError, SecretOpener, SecretSealer, SEAL_BINDING, type SealParameters } from '../../src/archive/seal.ts';

const KEY = 'correct horse battery staple';
const BACKUP_A = 'kf-20250601-120000-aaaaaa';
const BACKUP_B = 'kf-20250601-130000-bbbbbb';

function secret(namespace: string, name: string, data: Record<string, string>): KubeObject {
  return { apiVersion: 'v1', kind: 'Secret', metadata: { name, namespace }, type: 'Opaque', data: Object.fromEntries(Object.entries(data).map(([k, v]) => [k, Buffer.from(v).toString('base64')])) };
}

describe('archive: sealed values bound to where they belong', () => {
  const salt = Buffer.alloc(16, 7);
  const sealerA = SecretSealer.create(KEY, BACKUP_A, salt);
  const openerA = SecretOpener.forBackup(BACKUP_A, sealerA.parameters, KEY);

  it('records the binding and opens a value where it was sealed', () => {
    expect(sealerA.parameters.binding).to.equal(SEAL_BINDING);
    expect(openerA.bound).to.equal(true);
    const s = secret('alice', 'db', { password: 'p4ss' });
    expect(openerA.open(sealerA.seal(s))).to.deep.equal(s);
  });

  it('refuses a value moved to another Secret, another namespace or another key of the same Secret', () => {
    const sealed = sealerA.seal(secret('alice', 'db', { password: 'p4ss', user: 'root' }));
    const renamed = { ...sealed, metadata: { ...sealed.metadata, name: 'other' } };
    expect(() => openerA.open(renamed)).to.throw(SealError, /data\.password of Secret alice\/other could not be opened: .*moved from another Secret or backup/);
    const moved = { ...sealed, metadata: { ...sealed.metadata, namespace: 'bob' } };
    expect(() => openerA.open(moved)).to.throw(SealError, /Secret bob\/db could not be opened/);
    const data = sealed.data as Record<string, string>;
    const swapped = { ...sealed, data: { password: data.user!, user: data.password! } };
    expect(() => openerA.open(swapped)).to.throw(SealError, /could not be opened/);
  });

  it('refuses a value moved to another backup, even one sealed with the same key and salt', () => {
    const sealed = sealerA.seal(secret('alice', 'db', { password: 'p4ss' }));
    const sealerB = SecretSealer.create(KEY, BACKUP_B, salt);
    const openerB = SecretOpener.forBackup(BACKUP_B, sealerB.parameters, KEY);
    expect(() => openerB.open(sealed)).to.throw(SealError, /could not be opened/);
  });

  it('opens a backup sealed the old way (scrypt key, AAD data/<key>) and says it is not bound', () => {
    // The format before binding: AES-256-GCM under the scrypt output itself, with only `data/<key>` as AAD.
    const key = kdf(KEY, salt);
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', key, iv);
    cipher.setAAD(Buffer.from('data/password'));
    const body = Buffer.concat([cipher.update(Buffer.from('p4ss')), cipher.final()]);
    const old: KubeObject = {
      apiVersion: 'v1', kind: 'Secret', metadata: { name: 'db', namespace: 'alice', annotations: { 'kubeflow-upgrader.io/sealed': 'aes-256-gcm', 'kubeflow-upgrader.io/sealed-key-id': sealerA.parameters.keyId } },
      data: { password: Buffer.concat([iv, body, cipher.getAuthTag()]).toString('base64') },
    };
    const parameters: SealParameters = { algorithm: 'aes-256-gcm', kdf: 'scrypt', keyId: sealerA.parameters.keyId, salt: salt.toString('base64') };
    const opener = SecretOpener.forBackup(BACKUP_A, parameters, KEY);
    expect(opener.bound).to.equal(false);
    expect(opener.open(old).data).to.deep.equal({ password: Buffer.from('p4ss').toString('base64') });
    // a bound value does not open when the manifest is rewritten to claim the old scheme: the keys differ
    const bound = sealerA.seal(secret('alice', 'db', { password: 'p4ss' }));
    expect(() => opener.open(bound)).to.throw(SealError, /could not be opened/);
  });

  it('refuses a binding this version does not know, in one sentence', () => {
    expect(() => SecretOpener.forBackup(BACKUP_A, { ...sealerA.parameters, binding: 'something-else' }, KEY))
      .to.throw(SealError, `Backup ${BACKUP_A} binds its sealed values as "something-else", which this version cannot open.`);
  });

  describe('the key id, salted per installation', () => {
    const HOME_A = 's3://team-a/kubeflow/';
    const HOME_B = 's3://team-b/kubeflow/';

    it('differs between installations for the same passphrase, and is recorded with its salt', () => {
      const [a, b] = [SecretSealer.create(KEY, BACKUP_A, salt, HOME_A), SecretSealer.create(KEY, BACKUP_A, salt, HOME_B)];
      expect(a.parameters.keyId).to.match(/^kfu-[0-9a-f]{16}$/);
      expect(a.parameters.keyId).not.to.equal(b.parameters.keyId);
      expect(a.parameters.keyIdSalt).to.equal(HOME_A);
      // the oracle: sha256 of scrypt over the key, salted with the label and the location, cut to 16 hex digits
      const expected = createHash('sha256').update(kdf(KEY, JSON.stringify(['kubeflow-upgrader key id v2', HOME_A]))).digest('hex').slice(0, 16);
      expect(a.parameters.keyId).to.equal(`kfu-${expected}`);
    });

    it('opens a backup copied to another location (the recorded salt, not where it is read), and one from before the salt', () => {
      const sealer = SecretSealer.create(KEY, BACKUP_A, salt, HOME_A);
      const s = secret('alice', 'db', { password: 'p4ss' });
      expect(SecretOpener.forBackup(BACKUP_A, sealer.parameters, KEY).open(sealer.seal(s))).to.deep.equal(s);
      // an older backup: no keyIdSalt, its id made with the fixed salt every installation shared
      const legacyId = `kfu-${createHash('sha256').update(kdf(KEY, 'kubeflow-upgrader key id v1')).digest('hex').slice(0, 16)}`;
      expect(sealerA.parameters.keyId).to.equal(legacyId);
      expect(keyIdOf(KEY)).to.equal(legacyId);
      expect(openerA.open(sealerA.seal(s))).to.deep.equal(s);
    });

    it('says the key is not the one that sealed the backup, naming only key ids', () => {
      const sealer = SecretSealer.create(KEY, BACKUP_A, salt, HOME_A);
      expect(() => SecretOpener.forBackup(BACKUP_A, sealer.parameters, 'another passphrase'))
        .to.throw(SealError, new RegExp(`^The encryption-key set now \\(key kfu-[0-9a-f]{16}\\) is not the key that sealed backup ${BACKUP_A} \\(key ${sealer.parameters.keyId}\\)\\.$`));
    });
  });
});

