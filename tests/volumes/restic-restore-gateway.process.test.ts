// The restore gateway (restic-restore-gateway.ts) over s3rver behind HTTPS, its certificate signed by a CA of its own:
// the movers trust that CA beside the gateway's, and the gateway reads it from the store CA mount.
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { makeCertificates } from '../support/cluster/tls.ts';
import { startS3Server } from '../support/s3/server.ts';
import { describeRestoreGateway } from './restic-restore-gateway.ts';

describeRestoreGateway('s3rver over HTTPS', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'restore-gateway-s3-'));
  const certs = await makeCertificates();
  writeFileSync(join(dir, 'key.pem'), certs.key);
  writeFileSync(join(dir, 'cert.pem'), certs.cert);
  const s3 = await startS3Server({
    buckets: ['restores'], credentials: { accessKeyId: 'restore-gateway', secretAccessKey: randomBytes(20).toString('hex') },
    tlsKeyFile: join(dir, 'key.pem'), tlsCertFile: join(dir, 'cert.pem'),
  });
  if (!s3.endpoint.startsWith('https:')) throw new Error(`s3rver answers at ${s3.endpoint}, not over HTTPS`);
  return {
    endpoint: s3.endpoint, accessKeyId: s3.accessKeyId, secretAccessKey: s3.secretAccessKey, caPem: certs.caCert,
    async stop() {
      await s3.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
});
