// S3 settings from flags and the AWS environment variables: precedence, defaults and the one-sentence refusals.
import { expect } from 'chai';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseS3Url, s3SettingsFrom } from '../../src/cli/s3-options.ts';
import { UsageError } from '../../src/cli/usage.ts';

const CREDS = { AWS_ACCESS_KEY_ID: 'AKIDEXAMPLE', AWS_SECRET_ACCESS_KEY: 'secret-value-1234' };

describe('CLI S3 options', () => {
  it('splits s3://bucket/prefix, trimming slashes; the bucket alone is the bucket root', () => {
    expect(parseS3Url('s3://kubeflow-backups/prod/cluster-1/')).to.deep.equal({ bucket: 'kubeflow-backups', path: 'prod/cluster-1' });
    expect(parseS3Url('s3://kubeflow-backups')).to.deep.equal({ bucket: 'kubeflow-backups', path: '' });
    expect(() => parseS3Url('s3://Not_A_Bucket/x')).to.throw(UsageError, /not a valid S3 bucket name/);
    expect(() => parseS3Url('s3://bucket-a/a//b')).to.throw(UsageError, /empty segment/);
  });

  it('takes credentials and region from the environment, and flags over environment variables', () => {
    const fromEnv = s3SettingsFrom({ 's3-url': 's3://bucket-a/p' }, { ...CREDS, AWS_REGION: 'eu-west-1', AWS_ENDPOINT_URL: 'http://minio.local:9000/' });
    expect(fromEnv).to.deep.include({ accessKey: 'AKIDEXAMPLE', secretKey: 'secret-value-1234', bucket: 'bucket-a', path: 'p', region: 'eu-west-1', endpoint: 'http://minio.local:9000', uriStyle: 'path' });
    const flags = s3SettingsFrom(
      { 's3-url': 's3://bucket-a/p', region: 'us-west-2', endpoint: 'https://s3.example.com', 'path-style': true },
      { ...CREDS, AWS_REGION: 'eu-west-1', AWS_ENDPOINT_URL_S3: 'http://ignored:1', KFU_S3_URL: 's3://other/x' },
    );
    expect(flags).to.deep.include({ region: 'us-west-2', endpoint: 'https://s3.example.com', uriStyle: 'path', bucket: 'bucket-a' });
  });

  it('addresses buckets by the charm\'s rule: host for AWS (regional endpoint), path elsewhere, --uri-style over both', () => {
    const aws = s3SettingsFrom({ 's3-url': 's3://bucket-a', endpoint: 'https://s3.amazonaws.com', region: 'us-west-2' }, CREDS);
    expect([aws.uriStyle, aws.endpoint]).to.deep.equal(['host', undefined]);
    expect(s3SettingsFrom({ 's3-url': 's3://bucket-a' }, CREDS).uriStyle).to.equal('host');
    expect(s3SettingsFrom({ 's3-url': 's3://bucket-a', endpoint: 'https://minio.example.com', 'uri-style': 'virtual' }, CREDS).uriStyle).to.equal('host');
    expect(s3SettingsFrom({ 's3-url': 's3://bucket-a', endpoint: 'https://s3.amazonaws.com', 'uri-style': 'path' }, CREDS).uriStyle).to.equal('path');
    expect(() => s3SettingsFrom({ 's3-url': 's3://bucket-a', 'uri-style': 'sideways' }, CREDS)).to.throw(UsageError, /--uri-style must be one of "path", "host", "virtual" or "auto"/);
  });

  it('prefers AWS_ENDPOINT_URL_S3 over AWS_ENDPOINT_URL, and reads KFU_S3_URL when --s3-url is absent', () => {
    const settings = s3SettingsFrom({}, { ...CREDS, AWS_ENDPOINT_URL_S3: 'http://s3-only:9000', AWS_ENDPOINT_URL: 'http://general:9000', KFU_S3_URL: 's3://bucket-b/q' });
    expect(settings).to.deep.include({ endpoint: 'http://s3-only:9000', bucket: 'bucket-b', path: 'q', region: 'us-east-1' });
  });

  it('refuses endpoints that are not http(s) or that carry credentials, without echoing them', () => {
    expect(() => s3SettingsFrom({ 's3-url': 's3://bucket-a', endpoint: 'ftp://x' }, CREDS)).to.throw(UsageError, /not an http\(s\) URL/);
    let message = '';
    try {
      s3SettingsFrom({ 's3-url': 's3://bucket-a', endpoint: 'https://user:hunter22@s3.example.com' }, CREDS);
    } catch (error) {
      message = (error as Error).message;
    }
    expect(message).to.match(/must not carry credentials/);
    expect(message).not.to.include('hunter22');
  });

  it('trusts the certificates of --ca-file and refuses a file without one', () => {
    const dir = mkdtempSync(join(tmpdir(), 'kfu-ca-'));
    const pem = `-----BEGIN CERTIFICATE-----\nMIIBszCCAVmgAwIBAgIUQ==\n-----END CERTIFICATE-----`;
    writeFileSync(join(dir, 'ca.pem'), `${pem}\n${pem}\n`);
    writeFileSync(join(dir, 'empty.pem'), 'nothing here');
    expect(s3SettingsFrom({ 's3-url': 's3://bucket-a', 'ca-file': join(dir, 'ca.pem') }, CREDS).tlsCaChain).to.have.length(2);
    expect(() => s3SettingsFrom({ 's3-url': 's3://bucket-a', 'ca-file': join(dir, 'empty.pem') }, CREDS)).to.throw(UsageError, /holds no PEM certificate/);
  });
  it('--immutability (or KFU_IMMUTABILITY) puts the policy into the settings; off without it; a bad value is one sentence', () => {
    expect(s3SettingsFrom({ 's3-url': 's3://bucket-a', immutability: '30d governance' }, CREDS).immutability).to.deep.equal({ mode: 'GOVERNANCE', seconds: 30 * 86_400, text: '30d governance' });
    expect(s3SettingsFrom({ 's3-url': 's3://bucket-a' }, { ...CREDS, KFU_IMMUTABILITY: '7d' }).immutability).to.deep.equal({ mode: 'COMPLIANCE', seconds: 7 * 86_400, text: '7d' });
    expect(s3SettingsFrom({ 's3-url': 's3://bucket-a' }, CREDS).immutability).to.equal(undefined);
    expect(() => s3SettingsFrom({ 's3-url': 's3://bucket-a', immutability: 'forever' }, CREDS)).to.throw(UsageError, /^--immutability must be a duration and an optional mode, like 30d, 12w compliance or 90d governance \(units s, m, h, d, w, y\), not "forever"\.$/);
  });
});
