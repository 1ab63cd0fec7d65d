// A CA made at start and a serving certificate it signs for localhost, so clients verify TLS as in production
// (no insecure-skip-tls-verify in the kubeconfig): the CA goes into the kubeconfig's certificate-authority-data, as
// kubeadm writes it for a real cluster (upstream: kubernetes/kubernetes cmd/kubeadm/app/phases/kubeconfig).
import { generate } from 'selfsigned';

export interface ServingCertificates {
  caCert: string;
  cert: string;
  key: string;
}

/** `hosts`: more DNS names the serving certificate is valid for (a stand-in for a public endpoint). */
export async function makeCertificates(hosts: string[] = []): Promise<ServingCertificates> {
  const notAfterDate = new Date(Date.now() + 7 * 24 * 3600 * 1000);
  const ca = await generate([{ name: 'commonName', value: 'kubeflow-upgrader-test-ca' }], {
    keyType: 'ec',
    curve: 'P-256',
    algorithm: 'sha256',
    notAfterDate,
    extensions: [
      { name: 'basicConstraints', cA: true, critical: true },
      { name: 'keyUsage', keyCertSign: true, cRLSign: true, digitalSignature: true, critical: true },
    ],
  });
  const serving = await generate([{ name: 'commonName', value: 'kube-apiserver' }], {
    keyType: 'ec',
    curve: 'P-256',
    algorithm: 'sha256',
    notAfterDate,
    ca: { key: ca.private, cert: ca.cert },
    extensions: [
      { name: 'basicConstraints', cA: false },
      { name: 'keyUsage', digitalSignature: true, keyEncipherment: true },
      { name: 'extKeyUsage', serverAuth: true },
      { name: 'subjectAltName', altNames: [{ type: 2 as const, value: 'localhost' }, ...hosts.map((value) => ({ type: 2 as const, value })), { type: 7 as const, ip: '127.0.0.1' }] },
    ],
  });
  return { caCert: ca.cert, cert: serving.cert, key: serving.private };
}
