// A 2026-07-28 `subscriptions/listen` over HTTP: one SSE response per listen, bound to the caller that opened it.
import type { ServerResponse } from 'node:http';
import { SUBSCRIPTION_ID_META_KEY } from '@modelcontextprotocol/server';
import { errorAnswer, JsonRpc } from '../../errors.js';
import { acceptEach } from '../../eras/listen-accept.js';
import type { DownstreamSession, SessionOptions } from '../proxy-types.js';

/** What a listen needs from the gateway. */
export interface ListenDeps {
  /** Opens the session whose subscriptions this listen holds (notifications go to `sink`). */
  openSession(options: SessionOptions): DownstreamSession;
  /**
   * Subscribes the session to a namespaced URI (decided by policy): the URI as held (its canonical
   * form, which updates carry), or undefined when it is not served or not allowed.
   */
  accept(session: DownstreamSession, uri: string): Promise<string | undefined>;
  /** Bound on unsent output; past it the stream is closed (the client reconnects). */
  maxQueuedBytes: number;
  /** Interval of SSE keep-alive comments, in ms. */
  keepAliveMs: number;
}

type Id = string | number;
interface Filter {
  resourceSubscriptions?: unknown;
  resourcesListChanged?: unknown;
  toolsListChanged?: unknown;
  promptsListChanged?: unknown;
}

/** A live listen, for shutdown. */
export interface OpenListen {
  /** Ends the listen gracefully (the empty result), then the response. Idempotent. */
  close(): void;
}

/**
 * Serves one listen request: every requested URI is subscribed through the relay first (so no
 * change after the acknowledgement is missed), the acknowledgement names exactly the accepted ones,
 * and each update for them (or `list_changed`, when asked for) is one SSE event stamped with the
 * subscription id (the request id). The client ending the response ends the listen and releases
 * its subscriptions. Returns a handle for shutdown.
 */
export async function serveListen(res: ServerResponse, message: { id: Id; params?: { notifications?: unknown } }, deps: ListenDeps): Promise<OpenListen> {
  const id = message.id;
  const notifications = message.params?.notifications;
  if (typeof notifications !== 'object' || notifications === null || Array.isArray(notifications)) {
    res
      .writeHead(200, { 'content-type': 'application/json' })
      .end(JSON.stringify(errorAnswer(id, JsonRpc.INVALID_PARAMS, "Invalid params: 'notifications' is required and must be a valid SubscriptionFilter")));
    return { close: () => undefined };
  }
  const filter = notifications as Filter;
  const stamp = { [SUBSCRIPTION_ID_META_KEY]: id };
  let open = true;
  /** Events that happen before the acknowledgement is out wait for it. */
  let early: Record<string, unknown>[] | undefined = [];
  const event = (payload: Record<string, unknown>) => {
    if (!open) return;
    if (early) return void early.push(payload);
    res.write(`event: message\ndata: ${JSON.stringify({ jsonrpc: '2.0', ...payload })}\n\n`);
    if (res.writableLength > deps.maxQueuedBytes) end(false); // a client that does not read: drop the stream
  };
  const wantsListChanged = filter.resourcesListChanged === true;
  const wantsTools = filter.toolsListChanged === true;
  const wantsPrompts = filter.promptsListChanged === true;
  const downstream = deps.openSession({
    sink: {
      sendUpdated: (uri) => event({ method: 'notifications/resources/updated', params: { uri, _meta: stamp } }),
      sendListChanged: (kind = 'resources') => {
        const wanted = kind === 'tools' ? wantsTools : kind === 'prompts' ? wantsPrompts : wantsListChanged;
        if (wanted) event({ method: `notifications/${kind}/list_changed`, params: { _meta: stamp } });
      },
    },
  });
  let keepAlive: NodeJS.Timeout | undefined;
  const end = (graceful: boolean) => {
    if (!open) return;
    early = undefined;
    if (graceful) event({ id, result: { resultType: 'complete', _meta: stamp } });
    open = false;
    clearInterval(keepAlive);
    downstream.close();
    res.end();
  };
  res.once('close', () => end(false));

  const requested = Array.isArray(filter.resourceSubscriptions) ? filter.resourceSubscriptions.filter((u): u is string => typeof u === 'string') : [];
  const accepted = await acceptEach(
    requested,
    (uri) => deps.accept(downstream, uri),
    () => open,
  );
  const honored: Record<string, unknown> = {};
  if (accepted.length > 0) honored.resourceSubscriptions = accepted;
  if (wantsListChanged) honored.resourcesListChanged = true;
  if (wantsTools) honored.toolsListChanged = true;
  if (wantsPrompts) honored.promptsListChanged = true;
  // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- the client may have gone during the await above
  if (!open) return { close: () => undefined };
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache, no-transform', connection: 'keep-alive', 'x-accel-buffering': 'no' });
  const waiting = early;
  early = undefined;
  event({ method: 'notifications/subscriptions/acknowledged', params: { notifications: honored, _meta: stamp } });
  for (const payload of waiting) event(payload);
  if (Object.keys(honored).length === 0) {
    end(true); // nothing to listen for
  } else {
    keepAlive = setInterval(() => open && res.write(': keepalive\n\n'), deps.keepAliveMs);
    keepAlive.unref();
  }
  return { close: () => end(true) };
}
