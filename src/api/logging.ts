// What the service's log says about a request. Secrets never reach it: the Authorization and
// Cookie headers are redacted, and so is any query parameter that carries a secret, by name or
// by the API-key prefix (a key sent in a query string is refused, but its URL is still logged).
// `state` is the SnapTrade portal's single-use token: whoever holds it first completes the
// owner's pending connection, so it is a secret until used.
import { API_KEY_PREFIX } from '../ledger/ids.ts';

const SECRET_PARAMS = /^(api[_-]?key|key|token|access[_-]?token|secret|password|authorization|state)$/i;

/** `url` with the values of secret-bearing query parameters replaced by `[redacted]`. */
export function redactSecrets(url: string): string {
  const q = url.indexOf('?');
  if (q < 0) return url.includes(API_KEY_PREFIX) ? url.replaceAll(new RegExp(`${API_KEY_PREFIX}[^/?#&]*`, 'g'), '[redacted]') : url;
  const query = url.slice(q + 1).split('&').map((pair) => {
    const eq = pair.indexOf('=');
    const name = eq < 0 ? pair : pair.slice(0, eq);
    const value = eq < 0 ? '' : pair.slice(eq + 1);
    let decoded = value;
    try {
      decoded = decodeURIComponent(value);
    } catch {
      // a malformed escape is kept as it is
    }
    return SECRET_PARAMS.test(name) || decoded.includes(API_KEY_PREFIX) ? `${name}=[redacted]` : pair;
  });
  return `${redactSecrets(url.slice(0, q))}?${query.join('&')}`;
}

/** Pino options for fastify's logger at `level`. */
export function loggerOptions(level: string) {
  return {
    level,
    redact: ['req.headers.authorization', 'req.headers.cookie'],
    serializers: {
      req(request: { method: string; url: string; hostname?: string; ip?: string; socket?: { remotePort?: number } }) {
        return { method: request.method, url: redactSecrets(request.url), host: request.hostname, remoteAddress: request.ip, remotePort: request.socket?.remotePort };
      },
    },
  };
}
