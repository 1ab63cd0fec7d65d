// Name resolution of `*.localhost` for Node processes of the tests (loaded with `node --require`, e.g. through
// NODE_OPTIONS into a dispatch of the charm). RFC 6761 section 6.3 says resolvers should answer every name under
// `localhost.` with the loopback address, and systemd's nss-myhostname does; glibc without it (this machine) answers
// ENOTFOUND. Virtual-hosted S3 requests name the bucket in the host (`<bucket>.s3.localhost`), so the tests need it.
// Every other name goes to the real resolver.
'use strict';
const dns = require('node:dns');

const LOCALHOST_NAME = /(^|\.)localhost\.?$/i;
const resolveOriginal = dns.lookup;

dns.lookup = function lookup(hostname, options, callback) {
  if (typeof hostname === 'string' && LOCALHOST_NAME.test(hostname) && hostname.toLowerCase() !== 'localhost') {
    const done = typeof options === 'function' ? options : callback;
    const all = typeof options === 'object' && options !== null && options.all === true;
    if (all) process.nextTick(done, null, [{ address: '127.0.0.1', family: 4 }]);
    else process.nextTick(done, null, '127.0.0.1', 4);
    return {};
  }
  return resolveOriginal.apply(this, arguments);
};
