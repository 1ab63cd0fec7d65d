// The one addressing rule: which endpoint and which style, for AWS as Canonical's guides configure it, for custom
// endpoints and for IPs.
import { expect } from 'chai';
import { awsRegionalEndpoint, bucketInHost, effectiveEndpoint, isAwsEndpoint, parseUriStyle, resolveAddressing } from '../../src/store/addressing.ts';

describe('store/addressing: one rule for every S3 client', () => {
  it('reads every s3-uri-style spelling; empty is auto; anything else is unknown', () => {
    expect(['', 'auto', 'AUTO', 'path', 'host', 'virtual', ' Virtual '].map(parseUriStyle)).to.deep.equal(['auto', 'auto', 'auto', 'path', 'host', 'host', 'host']);
    expect(parseUriStyle('sideways')).to.equal(undefined);
  });

  it('AWS (no endpoint, or the global one of the guides): host style at the regional endpoint', () => {
    expect(resolveAddressing({ endpoint: 'https://s3.amazonaws.com', region: 'us-west-2', style: 'auto' })).to.deep.equal({ uriStyle: 'host' });
    expect(resolveAddressing({ endpoint: 'https://s3.eu-west-1.amazonaws.com', region: 'us-west-2', style: 'auto' })).to.deep.equal({ uriStyle: 'host' });
    expect(resolveAddressing({ endpoint: 'https://s3-eu-west-1.amazonaws.com/', region: 'eu-west-1', style: 'auto' })).to.deep.equal({ uriStyle: 'host' });
    expect(resolveAddressing({ region: 'us-east-1', style: 'auto' })).to.deep.equal({ uriStyle: 'host' });
    expect(effectiveEndpoint({ region: 'us-west-2' })).to.equal('https://s3.us-west-2.amazonaws.com');
    expect(awsRegionalEndpoint('cn-north-1')).to.equal('https://s3.cn-north-1.amazonaws.com.cn');
  });

  it('keeps special AWS names (FIPS, dual-stack) as given, still in host style', () => {
    expect(resolveAddressing({ endpoint: 'https://s3-fips.us-east-2.amazonaws.com', region: 'us-east-2', style: 'auto' }))
      .to.deep.equal({ endpoint: 'https://s3-fips.us-east-2.amazonaws.com', uriStyle: 'host' });
    expect(isAwsEndpoint('https://s3.dualstack.eu-west-1.amazonaws.com')).to.equal(true);
  });

  it('custom endpoints: path style unless told host; IPs are always path style', () => {
    expect(resolveAddressing({ endpoint: 'https://minio.example.com', region: 'us-east-1', style: 'auto' })).to.deep.equal({ endpoint: 'https://minio.example.com', uriStyle: 'path' });
    expect(resolveAddressing({ endpoint: 'https://minio.example.com', region: 'us-east-1', style: 'host' }).uriStyle).to.equal('host');
    expect(resolveAddressing({ endpoint: 'http://10.0.0.7:9000', region: 'us-east-1', style: 'host' }).uriStyle).to.equal('path');
    expect(resolveAddressing({ endpoint: 'http://[fd00::7]:9000', region: 'us-east-1', style: 'host' }).uriStyle).to.equal('path');
    expect(resolveAddressing({ endpoint: 'https://s3.amazonaws.com', region: 'us-east-1', style: 'path' })).to.deep.equal({ uriStyle: 'path' });
  });

  it('a dotted bucket over TLS stays in the path, as the SDK keeps it', () => {
    expect(bucketInHost({ bucket: 'kf.backups', region: 'us-east-1', uriStyle: 'host' })).to.equal(false);
    expect(bucketInHost({ bucket: 'kf.backups', endpoint: 'http://minio.local:9000', region: 'us-east-1', uriStyle: 'host' })).to.equal(true);
    expect(bucketInHost({ bucket: 'kf-backups', region: 'us-east-1', uriStyle: 'host' })).to.equal(true);
  });
});
