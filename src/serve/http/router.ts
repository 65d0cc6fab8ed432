// Routing of the HTTP endpoint: Origin/Host, the open paths (health, readiness, metadata), method, credentials, media type, body; then the era's path.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AuthConfig, HttpConfig } from '../../config/schema.js';
import type { Logger } from '../../logger.js';
import { exceedsDepth } from '../../wire/json-depth.js';
import { readableId } from '../../wire/envelope.js';
import { spelledId } from '../../wire/raw-id.js';
import { errorText, httpErrorBody, JsonRpc } from '../../errors.js';
import { wwwAuthenticate, type AuthResult, type AuthSuccess, type Authenticator } from '../auth/authenticator.js';
import { ANONYMOUS } from '../auth/credential.js';
import { protectedResourceMetadata, protectedResourceMetadataPaths } from '../auth/protected-resource.js';
import type { OriginHostCheck } from '../origin-host.js';
import type { Proxy } from '../proxy-types.js';
import { readBody } from './body.js';
import { isJsonContentType } from './content-type.js';
import type { PrincipalBounds } from './principal-bounds.js';
import { header, json } from './reply.js';
import { isModernRequest } from '../../eras/request-era.js';
import type { OpsPaths } from './ops-paths.js';
import { fromHeaders, within } from '../../observe/tracing.js';

/** The methods the MCP path serves; any other gets 405 with this `Allow`. */
export const MCP_METHODS = 'GET, POST, DELETE';

/** One era's path: serves a request that passed every check, with its body (parsed and as sent). */
export interface EraPath {
  serve(req: IncomingMessage, res: ServerResponse, body: unknown, who: AuthSuccess, text: string): Promise<void>;
}

/** Options of {@link HttpRouter}. */
export interface HttpRouterOptions {
  proxy: Pick<Proxy, 'pool' | 'gate'>;
  config: Pick<HttpConfig, 'path' | 'maxBodyBytes'>;
  logger: Logger;
  /** Absent: every request is the principal `anonymous`. */
  auth: AuthConfig | undefined;
  /** Makes the authenticator for an `auth` block (undefined for none). */
  authenticatorFor(auth: AuthConfig | undefined): Authenticator | undefined;
  /** Deepest JSON nesting accepted in a request body (`wire.maxDepth`). */
  maxDepth: number;
  bounds: PrincipalBounds;
  /** The 2025-11-25 session path. */
  legacy: EraPath;
  /** The 2026-07-28 request path. */
  modern: EraPath;
  /** `/healthz`, `/readyz` and (when served here) `/metrics`. */
  ops: OpsPaths;
}

/**
 * Every request passes the same checks in the same order before it reaches MCP handling: Origin and
 * Host first (on every path), then the open paths (`/healthz`, `/readyz`, the OAuth Protected
 * Resource Metadata), the method (405), the credentials (401), the principal's unread output, the
 * media type (415, before the body is read), the body (413, 400, depth), the principal's requests
 * in flight; then the request goes to its era's path.
 */
export class HttpRouter {
  private authConfig: AuthConfig | undefined;
  private authenticator: Authenticator | undefined;
  /** Made once the port is known: until then every request is refused. */
  private guard: OriginHostCheck | undefined;
  private base = '';
  private readonly metadataPaths: Set<string>;
  /** The configured MCP path when it is already in the form `URL` gives a path (then a request for exactly it needs no `URL`). */
  private readonly plainPath: string | undefined;

  constructor(private readonly options: HttpRouterOptions) {
    this.authConfig = options.auth;
    this.authenticator = options.authenticatorFor(options.auth);
    this.metadataPaths = new Set(protectedResourceMetadataPaths(options.config.path));
    const path = options.config.path;
    this.plainPath = new URL(path, 'http://localhost').pathname === path ? path : undefined;
  }

  /** The `auth` block in force. */
  get auth(): AuthConfig | undefined {
    return this.authConfig;
  }

  /** Replaces the authentication (a reload); returns the new authenticator (its verification cache starts empty). */
  setAuth(auth: AuthConfig | undefined): Authenticator | undefined {
    this.authenticator = this.options.authenticatorFor(auth);
    this.authConfig = auth;
    return this.authenticator;
  }

  /** Arms the router once the endpoint is bound: the Origin/Host check for its port, and its base URL. */
  listening(guard: OriginHostCheck, base: string): void {
    this.guard = guard;
    this.base = base;
  }

  /** Checks and routes one request. */
  async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const { config, logger, bounds, maxDepth } = this.options;
    const { guard, base, metadataPaths } = this;
    // The MCP path exactly as configured is what almost every request asks for: it is its own pathname.
    const pathname = req.url !== undefined && req.url === this.plainPath ? req.url : new URL(req.url ?? '/', 'http://localhost').pathname;
    // Origin and Host first, on every path: a DNS-rebinding page must not read even /healthz.
    const checked = guard ? guard(req.headersDistinct) : ({ ok: false, reason: 'host', message: 'not listening' } as const);
    if (!checked.ok) {
      logger.info({ why: checked.reason, origin: req.headers.origin, host: req.headers.host }, 'http: request refused');
      return json(res, 403, httpErrorBody(JsonRpc.INVALID_REQUEST, `Forbidden: ${checked.message}`));
    }
    if (this.options.ops.owns(pathname)) return this.options.ops.handle(req, res, pathname, this.authenticator && ((r) => this.authenticate(r)));
    if (metadataPaths.has(pathname) && req.method !== 'GET') return json(res, 405, { error: 'method_not_allowed' }, { allow: 'GET' });
    if (metadataPaths.has(pathname)) {
      // Served only when there is an authorization server to name (auth.jwt.issuer): with static
      // tokens alone the document would only send OAuth-capable clients on a flow that cannot work.
      if (this.authConfig?.jwt?.issuer === undefined) return json(res, 404, { error: 'not_found' });
      return json(res, 200, protectedResourceMetadata(`${base}${config.path}`, this.authConfig));
    }
    if (pathname !== config.path) return json(res, 404, { error: 'not_found' });
    if (req.method !== 'GET' && req.method !== 'POST' && req.method !== 'DELETE') {
      return json(res, 405, httpErrorBody(JsonRpc.SERVER_ERROR, 'Method not allowed'), { allow: MCP_METHODS });
    }
    const who = await this.authenticate(req);
    if (!who.ok) {
      const metadataUrl = this.authConfig?.jwt?.issuer === undefined ? undefined : `${base}/.well-known/oauth-protected-resource${config.path}`;
      return json(res, 401, httpErrorBody(JsonRpc.UNAUTHORIZED, who.reason === 'missing' ? 'Unauthorized' : 'Invalid token'), {
        'www-authenticate': wwwAuthenticate(metadataUrl, who.reason),
      });
    }

    if (await bounds.refusedForOutput(req, res, who)) return;
    let body: unknown;
    let text = '';
    if (req.method === 'POST') {
      if (!isJsonContentType(req.headersDistinct['content-type'])) {
        return json(res, 415, httpErrorBody(JsonRpc.SERVER_ERROR, 'Unsupported Media Type: Content-Type must be application/json'));
      }
      const read = await readBody(req, config.maxBodyBytes);
      if (!read.ok) {
        if (read.reason === 'too-large')
          return json(res, 413, httpErrorBody(JsonRpc.INVALID_REQUEST, `Request body exceeds ${config.maxBodyBytes} bytes`), { connection: 'close' });
        return;
      }
      text = read.text;
      try {
        body = JSON.parse(text) as unknown;
      } catch {
        return json(res, 400, httpErrorBody(JsonRpc.PARSE_ERROR, 'Parse error'));
      }
      // Nothing deeper than wire.maxDepth goes on, in either era (the SDK and every recursive walk
      // would overflow the stack on it); answered like stdio, with the id when it can be read.
      if (exceedsDepth(text, maxDepth)) {
        const id = typeof body === 'object' && body !== null && !Array.isArray(body) ? readableId((body as { id?: unknown }).id) : null;
        const answer = errorText(spelledId(id, text), JsonRpc.INVALID_REQUEST, `Invalid Request: message nests deeper than ${maxDepth} levels`, {
          limit: maxDepth,
        });
        return void res.writeHead(400, { 'content-type': 'application/json' }).end(answer);
      }
    }
    if (await bounds.refusedInFlight(req, res, who, body)) return;
    const protocolHeader = header(req, 'mcp-protocol-version');
    const path = isModernRequest(req.method, protocolHeader, body) ? this.options.modern : this.options.legacy;
    // A W3C trace context in the headers is continued (a request's own `_meta` context wins over it).
    if (typeof req.headers.traceparent === 'string') return within(fromHeaders(req.headers), () => path.serve(req, res, body, who, text));
    return path.serve(req, res, body, who, text);
  }

  private async authenticate(req: IncomingMessage): Promise<AuthResult> {
    if (!this.authenticator) return { ok: true, ...ANONYMOUS.identity, credential: ANONYMOUS };
    return this.authenticator.authenticate(req.headersDistinct.authorization); // duplicates are refused there
  }
}
