// Origin and Host checks of an HTTP request: browser cross-origin calls and DNS rebinding of a loopback server. Pure.
import { isIP } from 'node:net';

/** What the check is compiled from: where the server listens and what the operator allowed on top. */
export interface OriginHostOptions {
  /** The address the server is bound to, as given to `listen` (`127.0.0.1`, `::1`, `[::1]`, `localhost`, `0.0.0.0`, a name). */
  host: string;
  /** The port the server is bound to. */
  port: number;
  /**
   * Origins allowed besides the server's own, each exact (`https://app.example.com`, no path);
   * compared case-insensitively, an http(s) default port (`:443`, `:80`) dropped. Default: [].
   */
  allowedOrigins?: readonly string[];
  /**
   * `Host` values allowed besides the loopback names: `name` (matches `name` and `name:<port>`)
   * or `name:port` (matches exactly). When the server is not bound to loopback, setting this
   * turns the Host check on. Default: [].
   */
  allowedHosts?: readonly string[];
}

/** A request's headers as Node gives them with duplicates visible: `req.rawHeaders` or `req.headersDistinct`. */
export type RequestHeaders = readonly string[] | Readonly<Record<string, readonly string[] | undefined>>;

/** The verdict on one request; a refusal is answered 403 (`message` is for the log and the body, and quotes no header). */
export type OriginHostDecision = { ok: true } | { ok: false; status: 403; reason: 'host' | 'origin'; message: string };

/** Decides one request. */
export type OriginHostCheck = (headers: RequestHeaders) => OriginHostDecision;

/**
 * Compiles the rules once; the returned function decides each request.
 *
 * Host: when bound to loopback, `Host` must be `localhost`, `127.0.0.1` or `[::1]` with the bound
 * port (no port means 80), or one of `allowedHosts`: anything else, a missing, duplicated or
 * malformed `Host` included, is refused (DNS rebinding). Names compare case-insensitively and
 * exactly: `localhost.` (trailing dot) and `127.0.0.1.evil.com` are other names. IPv6 literals
 * compare by address (`[0:0::1]` is `[::1]`). When bound elsewhere, `Host` is checked only if
 * `allowedHosts` is set (a duplicated `Host` is refused regardless).
 *
 * Origin: absent passes (non-browser clients send none). Present, it must be one of
 * `allowedOrigins` or, when bound to loopback, `http://localhost:<port>`, `http://127.0.0.1:<port>`
 * or `http://[::1]:<port>`; `null` (sandboxed frames, `file://` pages), duplicated, empty or any
 * other value is refused.
 *
 * Not the SDK's `hostHeaderValidation`/`originValidation` (`@modelcontextprotocol/node`, `server`):
 * those compare host names only, ignoring the port and the origin's scheme, and see one header value.
 *
 * @example
 * const check = createOriginHostCheck({ host: '127.0.0.1', port: 7330 });
 * const verdict = check(req.rawHeaders);
 * if (!verdict.ok) res.writeHead(verdict.status).end(verdict.message);
 */
export function createOriginHostCheck(options: OriginHostOptions): OriginHostCheck {
  const loopback = isLoopback(options.host);
  const port = options.port;
  const hosts = (options.allowedHosts ?? []).map((entry) => {
    const parsed = parseHost(entry);
    if (parsed === undefined) throw new TypeError(`allowedHosts: "${entry}" is not a host name or host:port`);
    return parsed;
  });
  if (loopback) hosts.push(...['localhost', '127.0.0.1', '[::1]'].map((hostname) => ({ hostname, port })));
  const checkHost = loopback || hosts.length > 0;
  const origins = new Set((options.allowedOrigins ?? []).map(normaliseOrigin));
  if (loopback) for (const name of ['localhost', '127.0.0.1', '[::1]']) origins.add(`http://${name}${port === 80 ? '' : `:${port}`}`);

  const hostAllowed = (value: string): boolean => {
    const h = parseHost(value);
    return (
      h !== undefined &&
      hosts.some((a) => a.hostname === h.hostname && (a.port === undefined ? h.port === undefined || h.port === port : (h.port ?? 80) === a.port))
    );
  };
  return (headers) => {
    const host = values(headers, 'host');
    if (host.length > 1) return refuse('host', 'duplicate Host headers');
    if (checkHost && (host[0] === undefined || !hostAllowed(host[0]))) return refuse('host', 'Host not allowed');
    const origin = values(headers, 'origin');
    if (origin.length > 1) return refuse('origin', 'duplicate Origin headers');
    if (origin[0] !== undefined && !origins.has(origin[0].toLowerCase())) return refuse('origin', 'Origin not allowed');
    return { ok: true };
  };
}

/**
 * True for a loopback address or name: `localhost`, 127.0.0.0/8, `::1` (bracketed or not, in any
 * spelling) and IPv4-mapped 127.0.0.0/8. Case-insensitive; `localhost.` and `*.localhost` are not
 * taken for loopback.
 *
 * @example isLoopback('127.0.0.1') // true
 * @example isLoopback('0.0.0.0') // false
 */
export function isLoopback(host: string): boolean {
  const bracketed = host.startsWith('[') && host.endsWith(']');
  const bare = bracketed ? host.slice(1, -1) : host;
  if (!bracketed && bare.toLowerCase() === 'localhost') return true;
  if (!bracketed && isIP(bare) === 4) return bare.split('.')[0] === '127';
  if (isIP(bare) === 6) {
    const canonical = new URL(`http://[${bare}]`).hostname;
    return canonical === '[::1]' || /^\[::ffff:7f[0-9a-f]{2}:[0-9a-f]{1,4}\]$/.test(canonical);
  }
  return false;
}

/** `name[:port]` or `[v6][:port]`, host lower-cased and IPv6 in canonical form; undefined when malformed. */
function parseHost(value: string): { hostname: string; port: number | undefined } | undefined {
  const m = /^(?:\[([0-9A-Fa-f:.]+)\]|([A-Za-z0-9_-]+(?:\.[A-Za-z0-9_-]+)*\.?))(?::(0|[1-9][0-9]{0,4}))?$/.exec(value);
  if (m === null) return undefined;
  const port = m[3] === undefined ? undefined : Number(m[3]);
  if (port !== undefined && port > 65_535) return undefined;
  if (m[1] !== undefined) return isIP(m[1]) === 6 ? { hostname: new URL(`http://[${m[1]}]`).hostname, port } : undefined;
  return { hostname: m[2]!.toLowerCase(), port };
}

/** An allowed-origin entry as browsers serialise it: lower-case, no default port, no trailing slash. */
function normaliseOrigin(entry: string): string {
  const lower = entry.toLowerCase().replace(/\/$/, '');
  if (!/^[a-z][a-z0-9+.-]*:\/\/[^/?#@\s]+$/.test(lower) || !URL.canParse(lower)) {
    throw new TypeError(`allowedOrigins: "${entry}" is not an origin (scheme://host[:port], no path)`);
  }
  // http(s) through URL to drop a default port; other schemes (chrome-extension://<id>) as written.
  return /^https?:/.test(lower) ? new URL(lower).origin : lower;
}

/** Every value of header `name` (lower-case), duplicates kept. */
function values(headers: RequestHeaders, name: string): readonly string[] {
  if (!isRawHeaders(headers)) return headers[name] ?? [];
  const out: string[] = [];
  for (let i = 0; i + 1 < headers.length; i += 2) if (headers[i]!.toLowerCase() === name) out.push(headers[i + 1]!);
  return out;
}

function isRawHeaders(headers: RequestHeaders): headers is readonly string[] {
  return Array.isArray(headers);
}

function refuse(reason: 'host' | 'origin', message: string): OriginHostDecision {
  return { ok: false, status: 403, reason, message };
}
