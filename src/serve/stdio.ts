// Serving one stdio connection (or any message stream): the envelope guard in front, then the first message picks the era that serves it.
import type { JSONRPCMessage, MessageExtraInfo, Transport } from '@modelcontextprotocol/server';
import type { AccessGate } from '../access/gate.js';
import { eraOfFirstMessage } from '../eras/claim.js';
import { edgeOf } from '../eras/edges.js';
import type { Logger } from '../logger.js';
import { deliverTo, guardedTail, installServerGuard, type MessageKind } from '../wire/dispatch.js';
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
 * (`eraOfFirstMessage`), and that era's edge serves the connection (`EraEdge.serveStdio`).
 *
 * @example
 * const connection = await serveConnection(new LineTransport(process.stdin, process.stdout), downstream, options);
 */
export async function serveConnection(transport: Transport, downstream: DownstreamSession, options: StdioServeOptions): Promise<Connection> {
  const { gate, logger, connections } = options;
  const { session } = downstream;
  const lossy = transport as Transport & { onloss?: (loss: OutputLoss) => void };
  const prior = lossy.onloss;
  // Lost output is ours to report loudly.
  lossy.onloss = (loss) => {
    const why = loss.reason === 'overflow' ? 'client is not reading its output' : `write failed: ${loss.error}`;
    logger.error({ session: session.id, ...loss }, `closing session: ${why}; ${loss.messages} message(s) lost`);
    prior?.(loss);
  };
  const onerror = (err: Error) =>
    err instanceof TransportFailure
      ? logger.warn({ session: session.id, err: err.message }, 'session transport failed')
      : logger.debug({ session: session.id, err: err.message }, 'session transport');
  const waiting: [JSONRPCMessage, MessageKind, MessageExtraInfo | undefined][] = [];
  let opened = false;
  let closeEntry: () => Promise<void> = async () => void (await transport.close());
  const released = () => {
    downstream.close();
    connections.delete(connection);
  };
  const guard = installServerGuard(
    transport,
    (message, kind, extra) => {
      waiting.push([message, kind, extra]);
      if (opened || !('method' in message)) return;
      opened = true;
      void open(message).catch((err: unknown) => {
        logger.warn({ session: session.id, err: String(err) }, 'session failed to open');
        void transport.close();
      });
    },
    { maxInFlight: options.maxInFlight },
  );
  const open = async (first: JSONRPCMessage): Promise<void> => {
    // Whatever serves the session is connected to a tail of the transport (started already;
    // sends and closes pass through), so the guard stays the transport's only handler and
    // nothing can overtake the messages waiting for the era to be picked. Messages reach it
    // classified: a facade Server behind it classifies nothing again.
    const tail = guardedTail(transport);
    // The era's own way of serving it (eras/rev2025.ts: a Server on the tail; rev2026.ts: SDK v2's entry behind the listen tap).
    closeEntry = await edgeOf(eraOfFirstMessage(first as { params?: unknown })).serveStdio(tail, {
      createServer: (era) => downstream.createServer(era),
      listen: {
        accept: (uri) => gate.listen(downstream.caller, session, uri),
        release: (uri) => void gate.release(session, uri),
      },
      onerror,
    });
    const deliver = deliverTo(tail);
    transport.onclose = () => {
      tail.onclose?.();
      released();
    };
    guard.setNext(deliver);
    for (const [message, kind, extra] of waiting.splice(0)) deliver(message, kind, extra);
  };
  transport.onerror = onerror;
  transport.onclose = released;
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
