// The upstream the fast-lane tests of both eras read from: `x://<n>` resources, one that never answers and one that fails.
import { createUpstreamServer } from './upstream-server.mjs';

/**
 * An upstream with resources `x://<n>` (text `text of x://<n>`); `x://slow` never answers (calls
 * `onSlow`, then `onCancelled` when the read is cancelled); `x://boom` fails; anything else is not found.
 */
export function resourcesUpstream(onCancelled?: () => void, onSlow?: () => void) {
  return createUpstreamServer({
    resources: [{ uri: 'x://1', name: 'one' }],
    read: (uri, signal) => {
      if (uri === 'x://slow') {
        onSlow?.();
        return new Promise(() => signal.addEventListener('abort', () => onCancelled?.()));
      }
      if (uri === 'x://boom') throw new Error('boom');
      if (uri.startsWith('x://')) return { contents: [{ uri, text: `text of ${uri}` }] };
      throw Object.assign(new Error('Resource not found'), { code: -32002 });
    },
  }).server;
}
