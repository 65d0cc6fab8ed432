// MCP 2025-11-25 at the session edge: not-found is -32002, built so and sent as built; results as they are; a Server straight on a stdio connection.
import type { Server } from '@modelcontextprotocol/server';
import { JsonRpc } from '../errors.js';
import { Revisions } from '../protocol.js';
import { LEGACY, type EraEdge } from './era.js';

/** The SDK 2.x Protocol internals the 2025 edge relies on (TypeScript-private, present at run time; pinned by a test). */
interface CodecHolder {
  _negotiatedWireCodec?: (this: object) => { encodeErrorCode(code: number): number };
}

const asThrown = (code: number): number => code;

/**
 * Makes `server` answer a thrown error with the code it was thrown with. SDK 2.x encodes `-32002`
 * as `-32602` (the 2026-07-28 code) in every era; a 2025-11-25 client is owed `-32002`, which the
 * facade builds in the first place. The SDK's wire codec is wrapped once per codec (a prototype
 * child whose `encodeErrorCode` is the identity), so each request costs one comparison.
 * Throws when the SDK lacks the method (an SDK change); a test pins it.
 */
function answerCodesAsThrown(server: object): void {
  const holder = server as CodecHolder;
  const base = holder._negotiatedWireCodec;
  if (typeof base !== 'function') throw new Error('the SDK Protocol lacks _negotiatedWireCodec: not-found cannot be answered as -32002');
  let from: object | undefined;
  let to: object | undefined;
  holder._negotiatedWireCodec = function (this: object) {
    const codec = base.call(this);
    if (codec !== from) {
      from = codec;
      to = Object.create(codec, { encodeErrorCode: { value: asThrown } }) as object;
    }
    return to as ReturnType<typeof base>;
  };
}

/**
 * The 2025-11-25 edge: `-32002` for not-found, results as they are (no cache fields in this era), the
 * session open once `initialize` is done, and on stdio a Server connected straight to the connection
 * (SDK 2.x's `serveStdio` entry classifies every message in and out with zod guards, a fifth of a
 * relayed read).
 */
export const rev2025: EraEdge = {
  era: LEGACY,
  revision: Revisions.legacy,
  fastLane: true,
  notFoundCode: JsonRpc.RESOURCE_NOT_FOUND,
  answer: (result) => result,
  prepare: answerCodesAsThrown,
  opened(server: Server, then) {
    // eslint-disable-next-line @typescript-eslint/no-deprecated -- read once when the 2025 handshake ends, outside any request's context
    server.oninitialized = () => then(server.getNegotiatedProtocolVersion());
  },
  stdio: (hooks) => ({
    async serve(tail) {
      const server = hooks.createServer(LEGACY);
      await server.connect(tail);
      return () => server.close();
    },
  }),
};
