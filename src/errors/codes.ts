// The one table of low-level error codes (Node's `code`, undici's, the AWS SDK's error `name`) and the one way to read
// them out of an error. Network and TLS failures arrive wrapped: the SDK puts Node's error in `cause`, and a
// happy-eyeballs connect that fails on every address throws an AggregateError whose members carry the codes.

/** Nothing reached the server: safe to send any request again. */
export const CONNECTION_REFUSED_CODES: ReadonlySet<string> = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH']);

/** The connection broke: the request may or may not have been acted on. */
export const CONNECTION_RESET_CODES: ReadonlySet<string> = new Set(['ECONNRESET', 'EPIPE', 'ECONNABORTED', 'UND_ERR_SOCKET', 'ERR_STREAM_PREMATURE_CLOSE']);

/** No answer in time: the request may or may not have been acted on. */
export const TIMEOUT_CODES: ReadonlySet<string> = new Set(['ETIMEDOUT', 'ESOCKETTIMEDOUT', 'UND_ERR_CONNECT_TIMEOUT', 'UND_ERR_HEADERS_TIMEOUT', 'TimeoutError', 'RequestTimeout']);

/** The TLS handshake failed: the CA chain, the certificate's name, or the scheme is wrong. */
export const TLS_CODES: ReadonlySet<string> = new Set([
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'UNABLE_TO_GET_ISSUER_CERT',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'CERT_HAS_EXPIRED',
  'CERT_NOT_YET_VALID',
  'CERT_UNTRUSTED',
  'CERT_SIGNATURE_FAILURE',
  'ERR_TLS_CERT_ALTNAME_INVALID',
  'EPROTO',
  'ERR_SSL_WRONG_VERSION_NUMBER',
]);

/** Any failure to talk to the server at all (refused, reset or timed out). */
export function isNetworkCode(code: string): boolean {
  return CONNECTION_REFUSED_CODES.has(code) || CONNECTION_RESET_CODES.has(code) || TIMEOUT_CODES.has(code);
}

// OpenSSL says "wrong version number" (an https client talking to a plain-http port) only in the message.
const WRONG_VERSION_TEXT = /wrong version number|ssl3_get_record|packet length too long/i;

/**
 * Every code in an error: its `code` and `name`, those of its `cause` chain and of an AggregateError's members, in
 * that order (the outermost first). Only codes are read, never free text that could quote a secret.
 */
export function errorCodes(error: unknown, depth = 0): string[] {
  if (!error || typeof error !== 'object' || depth > 4) return [];
  const e = error as { code?: unknown; name?: unknown; cause?: unknown; errors?: unknown; message?: unknown };
  const codes: string[] = [];
  if (typeof e.code === 'string') codes.push(e.code);
  if (typeof e.name === 'string') codes.push(e.name);
  if (typeof e.message === 'string' && WRONG_VERSION_TEXT.test(e.message)) codes.push('ERR_SSL_WRONG_VERSION_NUMBER');
  codes.push(...errorCodes(e.cause, depth + 1));
  if (Array.isArray(e.errors)) for (const inner of e.errors) codes.push(...errorCodes(inner, depth + 1));
  return codes;
}
