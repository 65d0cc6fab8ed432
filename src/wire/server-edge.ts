// The server side of one connection, as wrappers: the edge that classifies each message once and answers what is invalid, the in-flight bound, and the hold until what serves the connection is up.
import type { JSONRPCMessage, MessageExtraInfo, Transport } from '@modelcontextprotocol/server';
import { JsonRpc } from '../errors.js';
import { refuseOnServer, replier } from './answers.js';
import type { ClassifiedHandler, MessageKind, RefusingTransport, Send, Wrapper } from './compose.js';
import { classify } from './envelope.js';
import { InFlightGate } from './in-flight.js';
import type { Refusal } from './line-transport.js';

const CANCELLED = 'notifications/cancelled';

/** The handlers the server's edge gives a connection's transport (its `onmessage` and `onrefused`). */
export interface ServerEdge {
  onmessage: NonNullable<Transport['onmessage']>;
  onrefused: (refusal: Refusal) => void;
}

/**
 * The server side of {@link installDispatch} for a connection whose handler changes after its
 * first message (an era is picked, an SDK entry takes over): the one place its messages are
 * classified. A bad envelope with a readable id gets `-32600` with that id (id null otherwise), a
 * refused line `-32700` / `-32600`, and never reaches `next` (SDK 2.x's `serveStdio` would drop it
 * unanswered before the era is pinned). `next` gets the kind with the message, so a Protocol behind
 * it (`guardedTail`, `dispatch.ts`) classifies nothing again. Answers go out through `send` (the
 * connection's composed outbound). The caller sets the returned handlers on the transport.
 */
export function serverEdge(transport: RefusingTransport, send: Send, next: ClassifiedHandler): ServerEdge {
  const reply = replier(transport, send);
  return {
    onmessage: (message, extra) => {
      const envelope = classify(message);
      if (envelope.kind !== 'invalid') return next(message, envelope.kind, extra);
      if (envelope.answer) return reply(envelope.id, JsonRpc.INVALID_REQUEST, `Invalid Request: ${envelope.reason}`);
      transport.onerror?.(new Error(`dropped an invalid message: ${envelope.reason}`));
    },
    onrefused: (refusal) => refuseOnServer(reply, refusal),
  };
}

/** The in-flight bound of one connection, as its inbound and outbound wrappers. */
export interface InFlightBound {
  /** Counts a request in, and a cancel as its end. */
  receive: Wrapper<ClassifiedHandler>;
  /** Counts an answer out as a request's end. */
  send: Wrapper<Send>;
}

/**
 * Bounds the requests one client may have in flight to `max`, pausing the transport's input at the
 * bound (one gate for the connection's whole life). Fed by outgoing answers (the SDK sends nothing
 * for a request the client cancelled: the cancel closes it instead). Undefined when there is no
 * bound or the transport cannot pause.
 */
export function inFlightBound(transport: RefusingTransport, max: number | undefined): InFlightBound | undefined {
  const { pauseInput, resumeInput } = transport;
  if (max === undefined || !pauseInput || !resumeInput) return undefined;
  const gate = new InFlightGate(max, pauseInput.bind(transport), resumeInput.bind(transport));
  return {
    receive: (next) => (message, kind, extra) => {
      if (kind === 'request') gate.opened((message as { id: string | number }).id);
      else if (kind === 'notification' && (message as { method: string }).method === CANCELLED) {
        gate.closed((message as { params?: { requestId?: unknown } }).params?.requestId);
      }
      next(message, kind, extra);
    },
    send: (next) => (message, sendOptions) => {
      const m = message as { id?: unknown; method?: unknown };
      if (m.method === undefined) gate.closed(m.id);
      return next(message, sendOptions);
    },
  };
}

/**
 * The last inbound stage before what serves a connection is known: messages wait, in order, until
 * the first request or notification has been given to `open`, and `open` has resolved to the
 * handler that serves them (a connection's era is picked by its first message); then they, and every
 * later one, go to that handler.
 */
export class HoldUntilOpen {
  private readonly waiting: [JSONRPCMessage, MessageKind, MessageExtraInfo | undefined][] = [];
  private opening = false;
  private next: ClassifiedHandler | undefined;

  constructor(
    private readonly open: (first: JSONRPCMessage) => Promise<ClassifiedHandler>,
    private readonly failed: (err: unknown) => void,
  ) {}

  /** The stage's handler. */
  readonly receive: ClassifiedHandler = (message, kind, extra) => {
    if (this.next) return this.next(message, kind, extra);
    this.waiting.push([message, kind, extra]);
    if (this.opening || kind === 'response') return;
    this.opening = true;
    this.open(message).then((next) => {
      this.next = next;
      for (const [m, k, e] of this.waiting.splice(0)) next(m, k, e);
    }, this.failed);
  };
}
