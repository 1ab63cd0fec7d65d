// The one table of low-level error codes: read out of wrapped errors the way Node, undici and the AWS SDK wrap them.
import { expect } from 'chai';
import { TLS_CODES, errorCodes, isNetworkCode } from '../../src/errors/codes.ts';
import { classifyNetworkError } from '../../src/retry/classification.ts';

const coded = (code: string, extra: object = {}) => Object.assign(new Error('x'), { code }, extra);

describe('error codes', () => {
  const cases: { name: string; error: unknown; codes: string[] }[] = [
    { name: 'a plain Node error', error: coded('ECONNREFUSED'), codes: ['ECONNREFUSED', 'Error'] },
    { name: 'a cause chain (the SDK wraps Node)', error: Object.assign(new Error('fetch failed'), { name: 'TypeError', cause: coded('ECONNRESET') }), codes: ['TypeError', 'ECONNRESET', 'Error'] },
    { name: "an AggregateError's members (happy eyeballs)", error: new AggregateError([coded('ECONNREFUSED'), coded('EHOSTUNREACH')]), codes: ['AggregateError', 'ECONNREFUSED', 'Error', 'EHOSTUNREACH', 'Error'] },
    { name: "OpenSSL's wrong version number, said only in the message", error: new Error('ssl3_get_record:wrong version number'), codes: ['Error', 'ERR_SSL_WRONG_VERSION_NUMBER'] },
    { name: 'not an object', error: 'ECONNREFUSED', codes: [] },
  ];
  for (const { name, error, codes } of cases) it(`reads ${name}`, () => expect(errorCodes(error)).to.deep.equal(codes));

  it('stops at a depth that a cyclic cause cannot exceed', () => {
    const e = coded('EPIPE') as Error & { cause?: unknown };
    e.cause = e;
    expect(errorCodes(e).length).to.be.lessThan(20);
  });

  const network: [string, boolean][] = [['ECONNREFUSED', true], ['ECONNRESET', true], ['ETIMEDOUT', true], ['UND_ERR_SOCKET', true], ['EACCES', false], ['NoSuchBucket', false]];
  for (const [code, expected] of network) it(`${code} ${expected ? 'is' : 'is not'} a network failure`, () => expect(isNetworkCode(code)).to.equal(expected));

  it('TLS codes are not network codes: a wrong CA needs another fix than a wrong address', () => {
    for (const code of TLS_CODES) expect(isNetworkCode(code), code).to.equal(false);
  });

  it('the retry classifier finds a refusal wrapped in a cause', () => {
    expect(classifyNetworkError(Object.assign(new Error('fetch failed'), { cause: coded('ECONNREFUSED') }))).to.include({ kind: 'connection-refused', notActedOn: true });
  });
});
