// Micro-benchmark: bytes promoted to V8's old generation per request, in process (no pipes, no children), for the pieces of a stdio read.
// Usage: node bench/promotion.mjs [requests]
//
// Peak RSS under the read load is old-generation growth: objects that outlive two scavenges are
// promoted, and the old generation grows until the next mark-compact. A request's objects should
// die young (the ceiling relay promotes nothing). Each row runs `requests` sequential requests after
// a warm-up and reads, from V8's GC profiler, how much old space grew during scavenges, per request,
// at two young-generation sizes: a cost that does not shrink with a larger semi-space is not objects
// living a little too long but objects kept alive from the old generation (a chain), which only a
// mark-compact frees. Rows:
// - `Server._onrequest`: SDK v2's `Server` behind a transport that answers at once, `ping` as sent
//   by a client: the SDK's request path (validation, context, AbortController, answer encoding).
// - `ping handler only`: the same Server's registered `ping` handler called directly (validation
//   included): what the handler costs without the request machinery around it.
// - `AbortController`: one `new AbortController().signal` per request, held in a Map while in
//   flight. On Node 20 every AbortSignal gets a hidden class of its own.
// - `plain object`: the same with a plain object, as the floor.
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import v8 from 'node:v8';

const ROWS = ['onrequest', 'handler', 'abort-controller', 'plain'];
const LABELS = {
  onrequest: 'Server._onrequest (ping)',
  handler: 'ping handler only',
  'abort-controller': 'AbortController per request',
  plain: 'plain object per request',
};

/** Old-space growth during scavenges (bytes) while `run` goes. */
async function promotedDuring(run) {
  const profiler = new v8.GCProfiler();
  profiler.start();
  await run();
  const { statistics } = profiler.stop();
  const old = (s) => s.heapSpaceStatistics.find((x) => x.spaceName === 'old_space').spaceUsedSize;
  let promoted = 0;
  for (const s of statistics) if (s.gcType === 'Scavenge') promoted += old(s.afterGC) - old(s.beforeGC);
  return promoted;
}

/** One row, in this process: bytes promoted per request. */
async function measure(row, n) {
  const { Server } = await import('@modelcontextprotocol/server');
  let answered;
  const transport = {
    async start() {},
    async close() {},
    async send(message) {
      if (message.id !== undefined && answered) answered(message);
    },
  };
  const server = new Server({ name: 'bench', version: '1.0.0' }, { capabilities: { resources: {} } });
  await server.connect(transport);
  const request = (message) =>
    new Promise((resolve) => {
      answered = resolve;
      transport.onmessage(message);
    });
  await request({
    jsonrpc: '2.0',
    id: 0,
    method: 'initialize',
    params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'c', version: '1' } },
  });
  transport.onmessage({ jsonrpc: '2.0', method: 'notifications/initialized' });
  const handler = server._requestHandlers.get('ping');
  const inFlight = new Map();
  const once = {
    onrequest: (i) => request({ jsonrpc: '2.0', id: i, method: 'ping' }),
    handler: (i) =>
      handler({ jsonrpc: '2.0', id: i, method: 'ping' }, { mcpReq: { id: i, method: 'ping', requestState: () => undefined }, sessionId: undefined }),
    'abort-controller': async (i) => {
      inFlight.set(i, new AbortController().signal);
      await null;
      inFlight.delete(i);
    },
    plain: async (i) => {
      inFlight.set(i, { i, signal: {} });
      await null;
      inFlight.delete(i);
    },
  }[row];
  for (let i = 1; i <= n / 10; i++) await once(i); // warm-up
  const bytes = await promotedDuring(async () => {
    for (let i = 0; i < n; i++) await once(n + i);
  });
  return bytes / n;
}

const self = fileURLToPath(import.meta.url);
if (process.argv[2] === '--row') {
  process.stdout.write(JSON.stringify(await measure(process.argv[3], Number(process.argv[4]))));
} else {
  const n = Number(process.argv[2] ?? 30_000);
  process.stdout.write(`bytes promoted per request (${n} sequential requests, node ${process.version}):\n`);
  for (const row of ROWS) {
    const cells = [4, 16].map((mb) => {
      const child = spawnSync(process.execPath, [`--max-semi-space-size=${mb}`, self, '--row', row, String(n)], { encoding: 'utf8' });
      if (child.status !== 0) return `failed: ${child.stderr.trim().split('\n').pop()}`;
      return `${Math.round(Number(child.stdout))} B (semi-space ${mb} MB)`;
    });
    process.stdout.write(`  ${LABELS[row].padEnd(32)} ${cells.join(', ')}\n`);
  }
}
