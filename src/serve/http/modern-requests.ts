// The 2026-07-28 path of the HTTP endpoint: stateless requests through SDK v2's handler (a plain read or tool call through the edge lane), and `subscriptions/listen` as one SSE response each.
import { withFields } from '../../copy.js';
import { MODERN } from '../../eras/era.js';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { createMcpHandler, type AuthInfo } from '@modelcontextprotocol/server';
import type { Caller } from '../../caller.js';
import type { HttpConfig } from '../../config/schema.js';
import type { Logger } from '../../logger.js';
import { spelledId } from '../../wire/raw-id.js';
import type { AuthSuccess } from '../auth/authenticator.js';
import type { DownstreamSession, Proxy } from '../proxy-types.js';
import { authInfoFor, callerOf } from '../request-caller.js';
import { echoIdAsSent } from './echo-id.js';
import { serveListen, type OpenListen } from './listen-stream.js';
import type { LiveIdentities } from './live-identities.js';
import type { PrincipalBounds } from './principal-bounds.js';
import { httpErrorBody, JsonRpc } from '../../errors.js';
import { json } from './reply.js';
import { requestCaller } from './request-identity.js';
import type { Server } from '@modelcontextprotocol/server';
import { LazyAbort } from '../../cancel.js';
import { edgeOf } from '../../eras/edges.js';
import { plainHeaders } from '../../eras/rev2026-http-lane.js';
import { modernWire, type ModernWire } from '../../eras/rev2026-lane.js';
import { traceDownstream, tracing } from '../../observe/tracing.js';
import { isPlainObject, keyCount } from '../../wire/envelope.js';
import { NEVER_ABORTED } from '../lane-requests.js';
import { answerCall, laneAnswers } from '../modern-lane.js';
import { LaneResponse } from './lane-response.js';

const READ = 'resources/read';
const CALL = 'tools/call';
// The 2026-07-28 edge: cache fields, not-found code, revision.
// eslint-disable-next-line @typescript-eslint/unbound-method -- an era edge is a plain object of functions
const { answer: cacheFields, notFoundCode, revision } = edgeOf(MODERN);

/** Options of {@link ModernRequests}. */
export interface ModernRequestsOptions {
  proxy: Pick<Proxy, 'statelessServer' | 'openSession' | 'gate' | 'bridge' | 'fastLane' | 'offers'>;
  config: Pick<HttpConfig, 'maxSessions' | 'maxBodyBytes'>;
  logger: Logger;
  /** The credentials of requests and listens in flight, resolved again on reload. */
  identities: LiveIdentities;
  bounds: PrincipalBounds;
  /** Bound on unsent output per listen stream. */
  maxQueuedBytes: number;
  /** Interval of SSE keep-alive comments, in ms. */
  keepAliveMs: number;
}

/** One request as far as this path reads it. */
interface ModernMessage {
  id?: string | number;
  method?: string;
  params?: { notifications?: unknown };
}

/**
 * Serves 2026-07-28 requests: each is stateless (SDK v2's `createMcpHandler` with
 * `legacy: 'reject'`) and acts for its own credential; `subscriptions/listen` is served here as an
 * SSE response per listen (at most `maxSessions` open at once).
 */
export class ModernRequests {
  private readonly listens = new Set<OpenListen>();
  private requests = 0;
  private readonly handler: ReturnType<typeof createMcpHandler>;
  /** The Node adapter (and hono under it) is loaded on the first 2026 request, not by every gateway. */
  private node: Promise<(req: IncomingMessage, res: ServerResponse, body: unknown) => Promise<void>> | undefined;
  /** The first Server the SDK's handler made (configured for this era by it): the lane's codec and seam. */
  private first: Server | undefined;
  private wire: ModernWire | undefined;

  constructor(private readonly options: ModernRequestsOptions) {
    const { proxy, logger } = options;
    this.handler = createMcpHandler(
      (ctx) => {
        const caller = callerOf(ctx.authInfo);
        if (!caller) throw new Error('unauthenticated request reached the MCP handler');
        const server = proxy.statelessServer(MODERN, caller);
        if (proxy.fastLane) this.first ??= server;
        return server;
      },
      { legacy: 'reject', onerror: (err) => logger.debug({ err: err.message }, 'http: modern request') },
    );
  }

  /** Serves one authenticated, checked 2026-07-28 request. */
  async serve(req: IncomingMessage, res: ServerResponse, body: unknown, who: AuthSuccess, text: string): Promise<void> {
    const caller = requestCaller(this.options.identities, who, `r${++this.requests}`, res);
    const message = (typeof body === 'object' && body !== null ? body : {}) as ModernMessage;
    // A numeric id written otherwise than JSON.stringify would (`1e2`) is echoed as sent.
    if (typeof message.id === 'number') {
      const spelled = spelledId(message.id, text);
      if (spelled !== String(message.id)) echoIdAsSent(res, message.id, spelled);
    }
    if (message.method === 'subscriptions/listen' && (typeof message.id === 'string' || typeof message.id === 'number')) {
      return this.listen(res, message as ModernMessage & { id: string | number }, who, caller);
    }
    const first = this.first;
    const wire = first && (this.wire ??= modernWire(first));
    if (first && !wire) this.first = undefined; // not where SDK 2.4 has it: the next Server the SDK makes is tried
    if (first && wire && (message.method === READ || message.method === CALL) && this.lane(req, res, message, text, { wire, server: first }, caller)) return;
    (req as IncomingMessage & { auth?: AuthInfo }).auth = authInfoFor(caller);
    await (
      await this.nodeHandler()
    )(req, res, body);
  }

  /**
   * The lane: a plain `resources/read`, or a plain `tools/call` while tools are offered, answered
   * here, past the SDK's handler, when that handler would accept it and answer it from the facade's
   * alone (see `eras/rev2026-http-lane.ts`, `ModernWire.plainRead` and `plainCall`): a body of
   * exactly `jsonrpc`, an id spelled as JSON writes it, the method and params of exactly `uri` (a
   * call: `name`, optionally plain `arguments`) and the bare envelope (no log level, no progress
   * token, capabilities asking for nothing); headers naming exactly this revision, the method and the
   * URI or tool name. The answer is built as the stdio lane builds it (`laneAnswers`, and for a call
   * `answerCall`: the same gate call, cache fields, codec and seam) and sent as the SDK's per-request
   * transport sends it (`LaneResponse`: one JSON body, or the SSE stream it switches to when an
   * upstream's message is relayed during a call). The client going away cancels it. False: the
   * request is not the lane's.
   */
  private lane(
    req: IncomingMessage,
    res: ServerResponse,
    message: ModernMessage,
    text: string,
    { wire, server }: { wire: ModernWire; server: Server },
    caller: Caller,
  ): boolean {
    const { id, params } = message as { id?: unknown; params?: unknown };
    if ((typeof id !== 'string' && typeof id !== 'number') || keyCount(message) !== 4 || (message as { jsonrpc?: unknown }).jsonrpc !== '2.0') return false;
    if (!isPlainObject(params)) return false;
    const { proxy, logger } = this.options;
    const isRead = message.method === READ;
    // A call only while the Server the SDK would make for it now offers tools (else its answer is the SDK's method-not-found).
    const capabilities = isRead ? wire.plainRead(params) : proxy.offers().tools ? wire.plainCall(params) : undefined;
    if (capabilities === undefined || !plainHeaders(req.headers, isRead ? READ : CALL, (isRead ? params.uri : params.name) as string)) return false;
    // The SDK's entry takes integer ids only (a fraction is a 400 there), each as JSON writes it.
    if (typeof id === 'number' && (!Number.isSafeInteger(id) || spelledId(id, text) !== String(id))) return false;
    const controller = new LazyAbort();
    const response = new LaneResponse(res, controller);
    const settle = laneAnswers(wire, { server, send: response.send, logger, caller, notFoundCode, ended: response.ended });
    const relay = proxy.bridge.relayFor({ era: MODERN, caller, capabilities, signal: NEVER_ABORTED, inputResponses: undefined, requestState: undefined });
    if (!isRead) {
      answerCall(settle, { gate: proxy.gate, caller, era: MODERN, protocolVersion: revision }, id, controller, params, relay, response.notify);
      return true;
    }
    const uri = params.uri as string;
    const run = (): Promise<Record<string, unknown>> => proxy.gate.read(caller, uri, controller, relay);
    const session = () => caller.session;
    const start = () => (tracing() ? traceDownstream({ method: READ, params: { uri }, id, session, protocolVersion: revision }, run) : run());
    settle(READ, id, controller, uri, params._meta as Record<string, unknown>, start, cacheFields);
    return true;
  }

  /** Ends every open listen gracefully (shutdown). */
  closeListens(): void {
    for (const l of [...this.listens]) l.close();
  }

  /** Closes the SDK handler (shutdown); never rejects. */
  async closeHandler(): Promise<void> {
    await this.handler.close().catch(() => undefined);
  }

  private nodeHandler() {
    const maxRequestBodySize = this.options.config.maxBodyBytes;
    return (this.node ??= import('@modelcontextprotocol/node').then(({ toNodeHandler }) => toNodeHandler(this.handler, { maxRequestBodySize })));
  }

  private async listen(res: ServerResponse, message: ModernMessage & { id: string | number }, who: AuthSuccess, caller: Caller): Promise<void> {
    const { proxy, config, logger, identities, bounds } = this.options;
    const listens = this.listens;
    if (listens.size >= config.maxSessions) {
      logger.warn({ limit: config.maxSessions }, 'http: listen refused: maxSessions open listens');
      return json(res, 503, httpErrorBody(JsonRpc.SERVER_ERROR, 'Too many open listens'), { 'retry-after': '1' });
    }
    const releaseListen = await bounds.listen(res, caller);
    if (!releaseListen) return;
    res.once('close', releaseListen);
    logger.debug({ principal: caller.principal, session: caller.session }, 'http: listen');
    // The listen acts for its credential as resolved now: refreshed or closed by a reload, closed at its expiry.
    let downstream: DownstreamSession | undefined;
    // eslint-disable-next-line prefer-const -- the revoke callback reads it before it is assigned
    let listen: OpenListen | undefined;
    let revoked = false;
    const held = identities.hold(who.credential, {
      refresh: (c) => downstream?.setIdentity(withFields(c.identity, { transport: 'http' as const })),
      revoke: (why) => {
        revoked = true;
        downstream?.setIdentity({ ...who.credential.identity, transport: 'http', revoked: true });
        logger.info({ session: caller.session, principal: caller.principal, why: `credential ${why}` }, 'http: listen closed');
        listen?.close();
      },
    });
    res.once('close', () => held.release());
    listen = await serveListen(res, message, {
      openSession: (o) =>
        (downstream = proxy.openSession({
          ...o,
          caller: { ...held.credential.identity, transport: 'http', ...(revoked ? { revoked } : {}) },
          id: caller.session,
        })),
      accept: (s, uri) => proxy.gate.listen(s.caller, s.session, uri),
      maxQueuedBytes: this.options.maxQueuedBytes,
      keepAliveMs: this.options.keepAliveMs,
    });
    // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- a revoke may have come during the await above
    if (revoked) return listen.close();
    listens.add(listen);
    const opened = listen;
    res.once('close', () => listens.delete(opened));
  }
}
