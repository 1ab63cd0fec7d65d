// The volume benches' S3: s3rver over HTTPS by default, as every S3 a user runs is (AWS, Ceph RGW behind
// s3-integrator, MinIO), so that every side pays TLS to the store alike. The certificate is signed by a CA made for the
// run (tests/support/cluster/tls.ts). The movers trust it as the product does: its PEM is the settings' `tlsCaChain`,
// which the run's Secret carries as the store CA (src/jobs/template.ts: restic's --cacert, rclone's RCLONE_CA_CERT);
// a process the bench runs itself gets the same PEM as a file (`caFile`). Verification is never turned off.
// Nothing of the bench process's environment reaches those processes (AWS_CA_BUNDLE, which this machine sets, would
// make rclone trust the system's CAs instead of the run's).
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { MoverS3Settings } from '../../src/volumes/settings.ts';
import { makeCertificates } from '../../tests/support/cluster/tls.ts';
import { startS3Server, type S3ServerHandle, type S3ServerOptions } from '../../tests/support/s3/server.ts';
import { s3For } from '../../tests/volumes/helpers.ts';

export interface BenchS3 {
  server: S3ServerHandle;
  /** 'https' (default) or 'http' (plain, the benches' S3 before 2026-12-07) */
  scheme: 'https' | 'http';
  /** the CA's PEM file, for a process the bench runs itself (restic --cacert, RCLONE_CA_CERT); undefined over HTTP */
  caFile: string | undefined;
  /** the movers' settings for `bucket` (with the CA chain over HTTPS) */
  settings(bucket: string, path?: string): MoverS3Settings;
  stop(): Promise<void>;
}

export async function startBenchS3(options: S3ServerOptions & { scheme?: 'https' | 'http' } = {}): Promise<BenchS3> {
  const { scheme = 'https', ...serverOptions } = options;
  const dir = mkdtempSync(join(tmpdir(), 'bench-s3-tls-'));
  try {
    let caPem: string | undefined;
    let caFile: string | undefined;
    if (scheme === 'https') {
      const certs = await makeCertificates();
      caPem = certs.caCert;
      caFile = join(dir, 'ca.pem');
      writeFileSync(caFile, certs.caCert);
      writeFileSync(join(dir, 'key.pem'), certs.key);
      writeFileSync(join(dir, 'cert.pem'), certs.cert);
      Object.assign(serverOptions, { tlsKeyFile: join(dir, 'key.pem'), tlsCertFile: join(dir, 'cert.pem') });
    }
    const server = await startS3Server(serverOptions);
    if (!server.endpoint.startsWith(`${scheme}://`)) throw new Error(`the bench's S3 answers at ${server.endpoint}, not over ${scheme}`);
    return {
      server, scheme, caFile,
      settings: (bucket, path) => ({ ...s3For(server, bucket), ...(path !== undefined ? { path } : {}), ...(caPem ? { tlsCaChain: caPem } : {}) }),
      async stop() {
        await server.stop();
        rmSync(dir, { recursive: true, force: true });
      },
    };
  } catch (error) {
    rmSync(dir, { recursive: true, force: true });
    throw error;
  }
}

/** `--s3 http|https` of a bench script (default https). */
export function s3Scheme(value: string | undefined): 'https' | 'http' {
  if (value === undefined || value === 'https') return 'https';
  if (value === 'http') return 'http';
  throw new Error(`--s3 must be https or http, not "${value}"`);
}
