// The restore gateway's process, as its Job runs it with the official node image (`node <dir>/restic-gateway.mjs`):
// the bucket from the environment (its keys from the gateway's Secret only), the users, certificate and key from the
// Secret's files, the bucket's private CA from the store CA mount when there is one. It binds the Pod's IP and serves
// until the Job ends.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createRestoreGateway } from './server.ts';

function required(name: string): string {
  const value = process.env[name];
  if (!value) {
    process.stderr.write(`the restore gateway needs ${name} in its environment\n`);
    process.exit(2);
  }
  return value;
}

const dir = required('GATEWAY_DIR');
const caFile = process.env.GATEWAY_S3_CA_FILE;
const { server } = createRestoreGateway({
  bucket: {
    endpoint: required('GATEWAY_S3_ENDPOINT'),
    bucket: required('GATEWAY_S3_BUCKET'),
    region: process.env.GATEWAY_S3_REGION || 'us-east-1',
    pathStyle: process.env.GATEWAY_S3_PATH_STYLE !== 'false',
    accessKeyId: required('AWS_ACCESS_KEY_ID'),
    secretAccessKey: required('AWS_SECRET_ACCESS_KEY'),
    caPem: caFile && existsSync(caFile) ? readFileSync(caFile, 'utf8') : undefined,
    systemRootsPem: process.env.SSL_CERT_FILE && existsSync(process.env.SSL_CERT_FILE) ? readFileSync(process.env.SSL_CERT_FILE, 'utf8') : undefined,
    proxyEnv: process.env,
  },
  root: process.env.GATEWAY_ROOT ?? '',
  htpasswd: readFileSync(join(dir, 'htpasswd'), 'utf8'),
  certificate: readFileSync(join(dir, 'tls.crt'), 'utf8'),
  privateKey: readFileSync(join(dir, 'tls.key'), 'utf8'),
  log: (line) => process.stderr.write(`${line}\n`),
});
const port = Number(required('GATEWAY_PORT'));
server.listen(port, required('POD_IP'), () => process.stderr.write(`the restore gateway serves on port ${port}\n`));
process.on('SIGTERM', () => server.close(() => process.exit(0)));
