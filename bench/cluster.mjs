// Bench phase `cluster`: 3 replicas + Redis through HAProxy against 1 replica without Redis; aggregate reads/s and Redis round trips per read.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { createInterface } from 'node:readline';

const MODERN = '2026-07-28';
const META = { 'io.modelcontextprotocol/protocolVersion': MODERN, 'io.modelcontextprotocol/clientCapabilities': {} };
/** Commands a Lua script runs inside Redis: counted by INFO, but not round trips. */
const IN_SCRIPT = new Set(['time', 'hmget', 'hset', 'pexpire']);

const freePort = () =>
  new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });

const binary = (name) => {
  const which = spawnSync('sh', ['-c', `command -v ${name}`], { encoding: 'utf8' });
  if (which.status === 0 && which.stdout.trim()) return which.stdout.trim();
  return ['/usr/sbin', '/usr/bin'].map((d) => join(d, name)).find((p) => existsSync(p));
};

/** Spawns `command`, resolving once a line matches `ready` (or a TCP port answers, via `probe`); the handle kills it. */
const service = (label, command, args, ready) =>
  new Promise((resolve, reject) => {
    const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let tail = '';
    const handle = {
      pid: child.pid,
      close: async () => {
        if (child.exitCode !== null || child.signalCode !== null) return;
        const exited = new Promise((r) => child.once('exit', r));
        child.kill('SIGTERM');
        await exited;
      },
    };
    for (const stream of [child.stdout, child.stderr]) {
      createInterface({ input: stream }).on('line', (line) => {
        tail = (tail + line + '\n').slice(-2048);
        if (ready?.test(line)) resolve(handle);
      });
    }
    child.once('exit', (code) => reject(new Error(`${label} exited (${code}): ${tail}`)));
    if (!ready) resolve(handle);
  });

/** A 2026 stateless read (one POST); resolves once the answer is read; rejects on anything but a result. */
const modernRead = async (url, token, uri, id) => {
  const res = await fetch(url, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      authorization: `Bearer ${token}`,
      'mcp-protocol-version': MODERN,
      'mcp-method': 'resources/read',
      'mcp-name': uri,
    },
    body: JSON.stringify({ jsonrpc: '2.0', id, method: 'resources/read', params: { uri, _meta: META } }),
  });
  const text = await res.text();
  if (res.status !== 200 || !text.includes('"result"')) throw new Error(`read failed: ${res.status} ${text.slice(0, 200)}`);
};

/** Redis's own top-level command counts (INFO commandstats), without script internals and this client's own commands. */
const commandCounts = async (url) => {
  const { createClient } = await import('redis');
  const client = createClient({ url });
  await client.connect();
  try {
    const counts = {};
    for (const m of (await client.info('commandstats')).matchAll(/^cmdstat_([a-z|]+):calls=(\d+)/gm)) {
      if (!IN_SCRIPT.has(m[1]) && !['hello', 'client|setinfo', 'info'].includes(m[1])) counts[m[1]] = Number(m[2]);
    }
    return counts;
  } finally {
    await client.close();
  }
};
const tripsBetween = (a, b) => Object.entries(b).reduce((n, [cmd, calls]) => n + calls - (a[cmd] ?? 0), 0);

/**
 * The phase. `ctx` is run.mjs's toolbox: { N, tmp, ROOT, FIXTURE, BASE_ARGS, HTTP_TOKEN, textUris, pool, now, addRow, notes, progress,
 * RATIO, PROXY, interleavedMedians, spawnHttpProxy, closeHandles, attempt }.
 */
export async function clusterPhase(ctx) {
  const { N, ROOT, FIXTURE, BASE_ARGS, HTTP_TOKEN, textUris, pool, now, addRow, notes, progress, RATIO, PROXY, interleavedMedians, spawnHttpProxy } = ctx;
  const redisBin = binary('redis-server');
  const haproxyBin = binary('haproxy');
  if (!redisBin || !haproxyBin) {
    addRow('cluster: 3 replicas + Redis via HAProxy, aggregate reads/s', undefined, new Error('redis-server or haproxy not installed'), 'rps');
    return;
  }
  progress('cluster: redis-server, 1 + 3 replicas, haproxy');
  const handles = [];
  try {
    const redisPort = await freePort();
    const redisUrl = `redis://127.0.0.1:${redisPort}`;
    handles.push(
      await service(
        'redis-server',
        redisBin,
        ['--port', String(redisPort), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', ctx.tmp],
        /Ready to accept connections/,
      ),
    );
    const lbPort = await freePort();
    const upstream = { command: process.execPath, args: [FIXTURE, ...BASE_ARGS] };
    // Reads are cached hits (a TTL, no upstream on the path): what is measured is the gateway and what Redis adds to it.
    const common = { cache: { ttlMs: 600_000 }, http: { allowedHosts: [`127.0.0.1:${lbPort}`] } };
    const limited = { limits: { reads: [{ readsPerMinute: 60_000_000, burst: 1_000_000 }] } };
    const redis = (chain) => ({ redis: { url: redisUrl, keyPrefix: 'bench:', replicas: 3, chain } });
    const single = await spawnHttpProxy(upstream, { ...common });
    const singleLimited = await spawnHttpProxy(upstream, { ...common, ...limited });
    handles.push(single, singleLimited);
    const replicas = [];
    for (const chain of ['r1', 'r2', 'r3']) replicas.push(await spawnHttpProxy(upstream, { ...common, ...limited, ...redis(chain) }));
    handles.push(...replicas);
    const cfg = readFileSync(join(ROOT, 'examples', 'cluster', 'haproxy.cfg'), 'utf8')
      .replaceAll('127.0.0.1:7330', `127.0.0.1:${lbPort}`)
      .replace('127.0.0.1:7331', new URL(replicas[0].url).host)
      .replace('127.0.0.1:7332', new URL(replicas[1].url).host)
      .replace('127.0.0.1:7333', new URL(replicas[2].url).host);
    const cfgFile = join(ctx.tmp, 'haproxy.cfg');
    writeFileSync(cfgFile, cfg);
    handles.push(await service('haproxy', haproxyBin, ['-db', '-f', cfgFile]));
    const lb = `http://127.0.0.1:${lbPort}/mcp`;
    const uris = textUris('bench+', 50);
    let id = 0;
    const total = Math.min(N.throughput, 3000);
    const run = (url) => async () => {
      const t0 = now();
      await pool(total, N.inFlight, (i) => modernRead(url, HTTP_TOKEN, uris[i % uris.length], ++id));
      return total / ((now() - t0) / 1000);
    };
    // Warm every cache (each replica its own) and haproxy's connections; waits out haproxy's first health checks.
    for (let attempt = 0; ; attempt++) {
      try {
        for (const u of [single.url, singleLimited.url, ...replicas.map((r) => r.url)])
          await pool(uris.length, 8, (i) => modernRead(u, HTTP_TOKEN, uris[i], ++id));
        await pool(uris.length * 6, 8, (i) => modernRead(lb, HTTP_TOKEN, uris[i % uris.length], ++id));
        break;
      } catch (e) {
        if (attempt > 50) throw e;
        await new Promise((r) => setTimeout(r, 200));
      }
    }
    progress('cluster: throughput, 1 replica (no Redis) vs 3 replicas + Redis via haproxy, cached reads');
    const before = await commandCounts(redisUrl);
    const [one, three, oneLimited] = await interleavedMedians(N.throughputReps, run(single.url), run(lb), run(singleLimited.url));
    const after = await commandCounts(redisUrl);
    const reads = (N.throughputReps + 1) * total;
    const label = `(${total} cached 2026 reads, ${N.inFlight} in flight, median of ${N.throughputReps})`;
    addRow(
      `cluster: 1 replica without Redis, no limit → 3 replicas + Redis via haproxy, with a limit ${label}`,
      one,
      three,
      'rps',
      RATIO('≥ 1.0', (r) => r >= 1.0),
    );
    addRow(
      `cluster: 1 replica without Redis, with a limit → 3 replicas + Redis via haproxy ${label}`,
      oneLimited,
      three,
      'rps',
      RATIO('≥ 1.0', (r) => r >= 1.0),
    );
    addRow(
      'cluster: Redis round trips per read, rate limit configured',
      undefined,
      tripsBetween(before, after) / reads,
      'x',
      PROXY('≤ 1', (n) => n <= 1),
    );
    notes.add(
      "cluster rows: 3 replicas (serve --http, each its own stdio catalog fixture, cache TTL so reads are cached hits, `redis` block, a read limit that never refuses) behind Debian's haproxy with examples/cluster/haproxy.cfg, " +
        'against 1 replica without a `redis` block (with and without the same limit); 2026-07-28 stateless reads over fetch, interleaved. On this 2-core machine every process shares the same two cores, so the ratio checks that Redis costs nothing per read rather than that replicas add capacity. ' +
        "Round trips are Redis's own count (INFO commandstats, top-level commands only: a script's inner TIME/HMGET/HSET/PEXPIRE are not round trips) over every read of the measured runs.",
    );
  } finally {
    await Promise.all(handles.reverse().map((h) => h.close().catch(() => undefined)));
  }
}
