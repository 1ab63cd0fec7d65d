// What one run of the repository gateway (gateway.ts) is reached with, all made for that run and gone with it: a
// self-signed serving certificate for the gateway's Service names (restic trusts it with --cacert, so no CA of the
// cluster or of the operator is involved), and one user per profile namespace with a random password, in the htpasswd
// file rclone reads. rclone accepts `{SHA}` entries (rclone/rclone cmd/serve/httplib/auth.go through
// github.com/abbot/go-http-auth, measured with Debian's rclone 1.60): a salted slow hash buys nothing for a 256-bit random
// password that lives for one run.
import { createHash, randomBytes, webcrypto } from 'node:crypto';
import * as x509 from '@peculiar/x509';

x509.cryptoProvider.set(webcrypto as unknown as Parameters<typeof x509.cryptoProvider.set>[0]);

export interface GatewayCertificate {
  /** PEM of the certificate: the gateway serves it, and the movers trust it */
  certificate: string;
  /** PEM (PKCS#8) of its private key: only the gateway's Secret, in the model's namespace, holds it */
  privateKey: string;
}

const ALGORITHM = { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' } as const;

/** A certificate for `dnsNames` (and `ipAddresses`), valid from a minute ago (clock skew) for `validHours`. */
export async function makeGatewayCertificate(dnsNames: readonly string[], validHours: number, now: Date = new Date(), ipAddresses: readonly string[] = []): Promise<GatewayCertificate> {
  const keys = await webcrypto.subtle.generateKey(ALGORITHM, true, ['sign', 'verify']);
  const cert = await x509.X509CertificateGenerator.createSelfSigned({
    serialNumber: randomBytes(16).toString('hex').replace(/^[89a-f]/, '1'),
    name: `CN=${dnsNames[0]}`,
    notBefore: new Date(now.getTime() - 60_000),
    notAfter: new Date(now.getTime() + validHours * 3_600_000),
    keys: keys as unknown as Parameters<typeof x509.X509CertificateGenerator.createSelfSigned>[0]['keys'],
    signingAlgorithm: ALGORITHM,
    extensions: [
      // a leaf that is its own trust anchor: Go's verifier (restic) wants a CA-capable self-signed root for --cacert
      new x509.BasicConstraintsExtension(true, 0, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature | x509.KeyUsageFlags.keyCertSign, true),
      new x509.ExtendedKeyUsageExtension([x509.ExtendedKeyUsage.serverAuth]),
      new x509.SubjectAlternativeNameExtension([
        ...dnsNames.map((value) => ({ type: 'dns' as const, value })), ...ipAddresses.map((value) => ({ type: 'ip' as const, value })),
      ]),
    ],
  });
  const pkcs8 = Buffer.from(await webcrypto.subtle.exportKey('pkcs8', keys.privateKey));
  return {
    certificate: cert.toString('pem'),
    privateKey: `-----BEGIN PRIVATE KEY-----\n${pkcs8.toString('base64').replace(/(.{64})/g, '$1\n').replace(/\n$/, '')}\n-----END PRIVATE KEY-----\n`,
  };
}

/** One gateway user per namespace: its name is the namespace (a DNS label), its password fresh for the run. */
export interface GatewayUser {
  namespace: string;
  password: string;
}

export function makeGatewayUsers(namespaces: Iterable<string>): GatewayUser[] {
  return [...new Set(namespaces)].sort().map((namespace) => ({ namespace, password: randomBytes(32).toString('hex') }));
}

/** The htpasswd file: `user:{SHA}base64(sha1(password))` per line. */
export function htpasswdOf(users: readonly GatewayUser[]): string {
  return users.map((u) => `${u.namespace}:{SHA}${createHash('sha1').update(u.password).digest('base64')}\n`).join('');
}
