// The server's error answers on a connection: to a bad envelope, to a line the transport refused. Never throws.
import type { JSONRPCMessage } from '@modelcontextprotocol/server';
import { errorAnswer, errorText, JsonRpc } from '../errors.js';
import type { RefusingTransport, Send } from './compose.js';
import type { ReadableId } from './envelope.js';
import type { Refusal } from './line-transport.js';

/** Sends an error answer for `id` through `send` (written as `idText` when given and the transport can), never throwing. */
export function replier(transport: RefusingTransport, send: Send = (message, options) => transport.send(message, options)) {
  return (id: ReadableId, code: number, message: string, data?: unknown, idText?: string) =>
    void (
      idText !== undefined && transport.sendText
        ? transport.sendText(errorText(idText, code, message, data))
        : send(errorAnswer(id, code, message, data) as unknown as JSONRPCMessage)
    ).catch(() => undefined);
}

/**
 * A line the transport refused, answered as the server: `-32700` not JSON, `-32600` too large, too
 * deep, or a request whose id is already in flight (the first one is still answered).
 */
export function refuseOnServer(reply: ReturnType<typeof replier>, { reason, id, limit, idText }: Refusal): void {
  if (reason === 'parse-error') return reply(null, JsonRpc.PARSE_ERROR, 'Parse error');
  if (reason === 'duplicate-id') return reply(id, JsonRpc.INVALID_REQUEST, 'Invalid Request: a request with this id is already in flight', undefined, idText);
  const what = reason === 'too-large' ? `message exceeds ${limit} bytes` : `message nests deeper than ${limit} levels`;
  reply(id, JsonRpc.INVALID_REQUEST, `Invalid Request: ${what}`, { limit }, idText);
}
