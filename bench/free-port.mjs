// Bench helper: a TCP port on 127.0.0.1 that the OS had free a moment ago (for a child that needs a port number up front).
import { createServer } from 'node:net';

/** Resolves with a port the OS assigned to a listener on 127.0.0.1, closed again before it resolves. */
export const freePort = () =>
  new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
