// Serving one stdio connection (or any message stream): the envelope guard in front, then the first message picks the era that serves it.
import type { JSONRPCMessage, Server, Transport } from '@modelcontextprotocol/server';
import type { AccessGate } from '../access/gate.js';
import { eraOfFirstMessage } from '../eras/claim.js';
import { edgeOf } from '../eras/edges.js';
import type { Logger } from '../logger.js';
import { compose, type ClassifiedHandler, type RefusingTransport, type Wrapper } from '../wire/compose.js';
import { deliverTo, guardedTail, type GuardedTail } from '../wire/dispatch.js';
import { HoldUntilOpen, inFlightBound, serverEdge } from '../wire/server-edge.js';
import { TransportFailure, type OutputLoss } from '../wire/line-transport.js';
import type { Connection, DownstreamSession } from './proxy-types.js';

/** What {@link serveConnection} needs from the composition root. */
export interface StdioServeOptions {
  /** Decides the URIs a 2026 `subscriptions/listen` may hold. */
  gate: Pick<AccessGate, 'listen' | 'release'>;
  logger: Logger;
  /** `wire.maxInFlight`: requests one connection may have unanswered. */
  maxInFlight: number;
  /** Where the live connections are kept, for shutdown: added once started, deleted when released. */
  connections: Pick<Set<Connection>, 'add' | 'delete'>;
}

/**
 * Serves `downstream` over `transport`; the session is released when the transport closes.
 *
 * The first request or notification decides the era, as SDK 2.x's serveStdio does
 * (`eraOfFirstMessage`), and that era's edge serves the connection (`EraEdge.stdio`). The connection's wrappers are composed here, in order.
 *
 * @example
 * const connection = await serveConnection(new LineTransport(process.stdin, process.stdout), downstream, options);
 */
export async function serveConnection(transport: Transport, downstream: DownstreamSession, options: StdioServeOptions): Promise<Connection> {
  const { gate, logger, connections } = options;
  const { session } = downstream;
  const lossy = transport as RefusingTransport & { onloss?: (loss: OutputLoss) => void };
  const prior = lossy.onloss;
  const onerror = (err: Error) =>
    err instanceof TransportFailure
      ? logger.warn({ session: session.id, err: err.message }, 'session transport failed')
      : logger.debug({ session: session.id, err: err.message }, 'session transport');
  let tail: GuardedTail | undefined;
  let closeEntry: () => Promise<void> = async () => {
    await transport.close();
  };
  const released = () => {
    downstream.close();
    connections.delete(connection);
  };
  const open = async (first: JSONRPCMessage): Promise<ClassifiedHandler> => {
    let server: Server | undefined;
    const edge = edgeOf(eraOfFirstMessage(first as { params?: unknown }));
    /** Whether `server` is of the connection's era (a 2026 entry falling back to 2025 creates a 2025 one, served without a lane). */
    let serverInEra = false;
    const era = edge.stdio({
      createServer: (e) => {
        serverInEra = e === edge.era;
        return (server = downstream.createServer(e));
      },
      listens: downstream.listens,
      listen: {
        accept: (uri) => gate.listen(downstream.caller, session, uri),
        release: (uri) => void gate.release(session, uri),
      },
      onerror,
    });
    // Out, from what serves the session: the era's wrappers (2026: an answer ends a listen), then the connection's.
    const outbound = compose([era.send], wire);
    tail = guardedTail(outbound, () => transport.close());
    closeEntry = await era.serve(tail);
    // In, behind the connection's wrappers: the era's (2026: the listen tap), the fast lane (plain reads
    // and calls answered past the SDK), then the facade Server or SDK entry on the tail. A 2025 Server
    // exists by now; SDK v2's serveStdio makes the 2026 one when the opening exchange asks for it, so
    // the lane is looked up again, once, when the connection's Server changes.
    const lane: Wrapper<ClassifiedHandler> | undefined = downstream.fastLane
      ? (next) => {
          let laneOf: Server | undefined;
          let handler: ClassifiedHandler = next;
          return (message, kind, extra) => {
            if (server !== laneOf) {
              laneOf = server;
              handler = (server && serverInEra ? downstream.fastLane?.(server, outbound)?.(next) : undefined) ?? next;
            }
            handler(message, kind, extra);
          };
        }
      : undefined;
    return compose([era.refuse?.(outbound), era.receive, lane], deliverTo(tail));
  };
  // The connection's wrappers, in order. In: the edge classifies once and answers what is invalid or
  // refused, the in-flight bound counts requests, messages wait until the first one's era serves
  // them. Out: the in-flight bound counts answers, then the wire.
  const inFlight = inFlightBound(transport, options.maxInFlight);
  const wire = compose([inFlight?.send], (message, sendOptions) => transport.send(message, sendOptions));
  const waiting = new HoldUntilOpen(open, (err) => {
    logger.warn({ session: session.id, err: String(err) }, 'session failed to open');
    void transport.close();
  });
  const edge = serverEdge(transport, wire, compose([inFlight?.receive], waiting.receive));
  transport.onmessage = edge.onmessage;
  lossy.onrefused = edge.onrefused;
  transport.onerror = onerror;
  transport.onclose = () => {
    tail?.onclose?.();
    released();
  };
  // Lost output is ours to report loudly.
  lossy.onloss = (loss) => {
    const why = loss.reason === 'overflow' ? 'client is not reading its output' : `write failed: ${loss.error}`;
    logger.error({ session: session.id, ...loss }, `closing session: ${why}; ${loss.messages} message(s) lost`);
    prior?.(loss);
  };
  await transport.start();
  const connection: Connection = {
    async close() {
      await closeEntry().catch(() => undefined);
      released();
    },
  };
  connections.add(connection);
  return connection;
}
