// Bench phase `cluster`: 3 replicas + Redis through HAProxy against 1 replica without Redis; aggregate reads/s and Redis round trips per read.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { connectLightModern } from './light-http.mjs';
import { freePort } from './free-port.mjs';
import { cpuMs } from './proc-cpu.mjs';

const MODERN = '2026-07-28';
const META = { 'io.modelcontextprotocol/protocolVersion': MODERN, 'io.modelcontextprotocol/clientCapabilities': {} };
/** Commands a Lua script runs inside Redis: counted by INFO, but not round trips. */
const IN_SCRIPT = new Set(['time', 'hmget', 'hset', 'pexpire']);

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
 * Wraps a run so the CPU each named process used during it is summed (`cpu.ms[name]`, from every
 * thread's schedstat: bench/proc-cpu.mjs) with the reads it served (`cpu.reads`): µs per read per
 * process, the figure that stays steady on a shared machine. `processes` maps a name to a pid.
 * Only measured runs count: after `skipNext()` the next run is not counted (the unmeasured warm-up
 * round of interleavedMedians), since a gateway's first round after sitting idle costs 2 to 3
 * times a warm one, and the gateways of this phase sit idle for different lengths of time.
 * `cpu.rounds` (`cpu.warmRounds`) keeps each counted (uncounted) run's µs per read of the first process named after `client`.
 */
const withCpu = (processes, reads, run) => {
  const cpu = { ms: Object.fromEntries(Object.keys(processes).map((k) => [k, 0])), reads: 0, wallMs: 0, rounds: [], warmRounds: [] };
  const main = Object.keys(processes).find((k) => k !== 'client');
  let skip = false;
  const wrapped = async () => {
    const counted = !skip;
    skip = false;
    const before = Object.fromEntries(Object.entries(processes).map(([k, pid]) => [k, cpuMs(pid)]));
    const t0 = performance.now();
    const rps = await run();
    if (!counted) {
      cpu.warmRounds.push(Math.round(((cpuMs(processes[main]) - before[main]) * 1000) / reads));
      return rps;
    }
    cpu.wallMs += performance.now() - t0;
    for (const [k, pid] of Object.entries(processes)) {
      const used = cpuMs(pid) - before[k];
      cpu.ms[k] += used;
      if (k === main) cpu.rounds.push(Math.round((used * 1000) / reads));
    }
    cpu.reads += reads;
    return rps;
  };
  return { cpu, run: wrapped, skipNext: () => void (skip = true) };
};

/**
 * One unmeasured round of each side (its CPU not counted either), then `reps` rounds of both, the
 * order swapped every rep (a then b, b then a, …); each side's median reads/s.
 */
const alternatingMedians = async (reps, a, b) => {
  const samples = [[], []];
  a.skipNext();
  b.skipNext();
  for (let rep = -1; rep < reps; rep++) {
    const order = rep % 2 === 0 ? [1, 0] : [0, 1];
    for (const i of order) {
      const rps = await [a, b][i].run();
      if (rep >= 0) samples[i].push(rps);
    }
  }
  return samples.map((xs) => [...xs].sort((x, y) => x - y)[Math.floor(xs.length / 2)]);
};

/** `name µs` per read for each process, their sum, and the cores the side kept busy (CPU ms over wall ms). */
const cpuLine = ({ ms, reads, wallMs }) => {
  const per = Object.entries(ms).map(([k, v]) => `${k} ${Math.round((v * 1000) / reads)}`);
  const total = Object.values(ms).reduce((a, b) => a + b, 0);
  return `${per.join(', ')}; total ${Math.round((total * 1000) / reads)} µs/read, ${(total / wallMs).toFixed(2)} cores busy`;
};

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
    const lbUnlimitedPort = await freePort();
    const common = { cache: { ttlMs: 600_000 }, http: { allowedHosts: [`127.0.0.1:${lbPort}`, `127.0.0.1:${lbUnlimitedPort}`] } };
    const limited = { limits: { reads: [{ readsPerMinute: 60_000_000, burst: 1_000_000 }] } };
    const redis = (chain) => ({ redis: { url: redisUrl, keyPrefix: 'bench:', replicas: 3, chain } });
    const single = await spawnHttpProxy(upstream, { ...common });
    const singleLimited = await spawnHttpProxy(upstream, { ...common, ...limited });
    handles.push(single, singleLimited);
    // BENCH_CLUSTER_REPLICAS (default 3) replicas; BENCH_HAPROXY_CFG: another haproxy config to try (same ports as the example).
    const count = Number(process.env.BENCH_CLUSTER_REPLICAS ?? 3);
    const replicas = [];
    for (let i = 1; i <= count; i++) replicas.push(await spawnHttpProxy(upstream, { ...common, ...limited, ...redis(`r${i}`) }));
    handles.push(...replicas);
    // The same cluster without a limit: no Redis round trip on a read at all.
    const unlimited = [];
    for (let i = 1; i <= count; i++) unlimited.push(await spawnHttpProxy(upstream, { ...common, ...redis(`u${i}`) }));
    handles.push(...unlimited);
    // What Redis adds to a read on one gateway, without the other replicas and haproxy on the same two
    // cores: a pair of gateways with the limit, one with the `redis` block (its own key prefix) and one
    // without, started, warmed and measured together, so that both have the same history. A gateway's
    // CPU per read depends on it: after sitting idle V8 shrinks its heap limits, and the next rounds
    // run 2 to 7 times as many full GCs until the limits grow back.
    const soloPlain = await spawnHttpProxy(upstream, { ...common, ...limited });
    const soloRedis = await spawnHttpProxy(upstream, { ...common, ...limited, redis: { ...redis('s1').redis, keyPrefix: 'solo:' } });
    handles.push(soloPlain, soloRedis);
    const example = readFileSync(process.env.BENCH_HAPROXY_CFG ?? join(ROOT, 'examples', 'cluster', 'haproxy.cfg'), 'utf8');
    const haproxyConfig = (port, rs) =>
      example
        .replaceAll('127.0.0.1:7330', `127.0.0.1:${port}`)
        .replace(/^( *)server r1 .*\n(?:\1server r\d .*\n)*/m, (_, indent) => rs.map((r, i) => `${indent}server r${i + 1} ${new URL(r.url).host}\n`).join(''));
    const cfg = haproxyConfig(lbPort, replicas);
    const cfgFile = join(ctx.tmp, 'haproxy.cfg');
    writeFileSync(cfgFile, cfg);
    const haproxy = await service('haproxy', haproxyBin, ['-db', '-f', cfgFile]);
    handles.push(haproxy);
    const cfgUnlimited = haproxyConfig(lbUnlimitedPort, unlimited);
    const cfgUnlimitedFile = join(ctx.tmp, 'haproxy-unlimited.cfg');
    writeFileSync(cfgUnlimitedFile, cfgUnlimited);
    const haproxyUnlimited = await service('haproxy', haproxyBin, ['-db', '-f', cfgUnlimitedFile]);
    handles.push(haproxyUnlimited);
    const lb = `http://127.0.0.1:${lbPort}/mcp`;
    const lbUnlimited = `http://127.0.0.1:${lbUnlimitedPort}/mcp`;
    const uris = textUris('bench+', 50);
    let id = 0;
    const total = Number(process.env.BENCH_CLUSTER_READS ?? Math.min(N.throughput, 3000));
    // The measured reads go through the light keep-alive node:http client (one agent per address), as
    // the other HTTP rows do: fetch costs its client ~600 µs per read, which on two cores leaves the
    // replicas less CPU than the one gateway they are compared with. BENCH_CLUSTER_CLIENT=fetch: fetch.
    const viaFetch = process.env.BENCH_CLUSTER_CLIENT === 'fetch';
    const lights = new Map();
    handles.push({ close: async () => Promise.all([...lights.values()].map((c) => c.close())) });
    const light = (url) => {
      let c = lights.get(url);
      if (!c) lights.set(url, (c = connectLightModern(url, { token: HTTP_TOKEN, maxSockets: N.inFlight })));
      return c;
    };
    const readOne = (url, uri) => (viaFetch ? modernRead(url, HTTP_TOKEN, uri, ++id) : light(url).readResource({ uri }));
    const run = (urls) => async () => {
      const t0 = now();
      await pool(total, N.inFlight, (i) => readOne(urls[i % urls.length], uris[i % uris.length]));
      return total / ((now() - t0) / 1000);
    };
    // Warm every cache (each replica its own) and haproxy's connections; waits out haproxy's first health checks.
    for (let attempt = 0; ; attempt++) {
      try {
        for (const u of [single.url, singleLimited.url, ...replicas.map((r) => r.url), ...unlimited.map((r) => r.url)])
          await pool(uris.length, 8, (i) => modernRead(u, HTTP_TOKEN, uris[i], ++id));
        for (const u of [lb, lbUnlimited]) await pool(uris.length * 6, 8, (i) => modernRead(u, HTTP_TOKEN, uris[i % uris.length], ++id));
        // Then every gateway process takes the same number of reads with the measured client, so that a
        // replica (a third of each round's reads) runs code as warm as the single gateway's.
        const warm = Number(process.env.BENCH_CLUSTER_WARM ?? 3000);
        for (const u of [single.url, singleLimited.url, ...replicas.map((r) => r.url), ...unlimited.map((r) => r.url), soloPlain.url, soloRedis.url])
          if (warm > 0) await pool(warm, N.inFlight, (i) => readOne(u, uris[i % uris.length]));
        break;
      } catch (e) {
        if (attempt > 50) throw e;
        await new Promise((r) => setTimeout(r, 200));
      }
    }
    progress('cluster: throughput, 1 replica (no Redis) vs 3 replicas + Redis via haproxy, cached reads');
    const client = process.pid;
    const trio = (rs) => Object.fromEntries(rs.map((r, i) => [`replica${i + 1}`, r.pid]));
    const sides = {
      one: withCpu({ client, gateway: single.pid }, total, run([single.url])),
      three: withCpu({ client, haproxy: haproxy.pid, ...trio(replicas), redis: handles[0].pid }, total, run([lb])),
      oneLimited: withCpu({ client, gateway: singleLimited.pid }, total, run([singleLimited.url])),
      threeUnlimited: withCpu({ client, haproxy: haproxyUnlimited.pid, ...trio(unlimited), redis: handles[0].pid }, total, run([lbUnlimited])),
      threeDirect: withCpu({ client, ...trio(unlimited), redis: handles[0].pid }, total, run(unlimited.map((r) => r.url))),
      onePlain: withCpu({ client, gateway: soloPlain.pid }, total, run([soloPlain.url])),
      oneRedis: withCpu({ client, gateway: soloRedis.pid, redis: handles[0].pid }, total, run([soloRedis.url])),
    };
    // Each set's first round of every side is its warm-up: not counted in CPU either (see withCpu).
    const measuredFrom = (...names) => {
      for (const n of names) sides[n].skipNext();
      return { warm: 1 };
    };
    // The pair first, right after its warm-up (the same for both), each rep in the other order.
    const [onePlain, oneRedis] = await alternatingMedians(N.throughputReps, sides.onePlain, sides.oneRedis);
    const before = await commandCounts(redisUrl);
    const [one, three, oneLimited] = await interleavedMedians(
      N.throughputReps,
      measuredFrom('one', 'three', 'oneLimited'),
      sides.one.run,
      sides.three.run,
      sides.oneLimited.run,
    );
    const after = await commandCounts(redisUrl);
    const reads = (N.throughputReps + 1) * total;
    const [oneAgain, threeUnlimited, threeDirect] = await interleavedMedians(
      N.throughputReps,
      measuredFrom('one', 'threeUnlimited', 'threeDirect'),
      sides.one.run,
      sides.threeUnlimited.run,
      sides.threeDirect.run,
    );
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
      `cluster: 1 replica without Redis, no limit → 3 replicas + Redis via haproxy, no limit ${label}`,
      oneAgain,
      threeUnlimited,
      'rps',
      RATIO('≥ 1.0', (r) => r >= 1.0),
    );
    addRow(
      `cluster: 1 replica without Redis, no limit → 3 replicas + Redis, no limit, no haproxy (the client round robin) ${label}`,
      oneAgain,
      threeDirect,
      'rps',
      RATIO('info', () => true),
    );
    addRow(
      `cluster: what Redis adds to one gateway: 2 gateways with a limit, without → with the \`redis\` block, started, warmed and measured together in alternating order (no other replica, no haproxy) ${label}`,
      onePlain,
      oneRedis,
      'rps',
      RATIO('info', () => true),
    );
    const perRead = (side, names) => (names.reduce((sum, k) => sum + (side.cpu.ms[k] ?? 0), 0) * 1000) / side.cpu.reads;
    addRow(
      'cluster: CPU per read of that gateway without → with the `redis` block (the gateway alone; redis-server in the notes)',
      perRead(sides.onePlain, ['gateway']),
      perRead(sides.oneRedis, ['gateway']),
      'us',
    );
    for (const [name, side] of Object.entries(sides))
      notes.add(
        `cluster CPU per read, ${name}: ${cpuLine(side.cpu)}; ${Object.keys(side.cpu.ms).find((k) => k !== 'client')} per measured run ${side.cpu.rounds.join(', ')} (warm-up rounds, not counted: ${side.cpu.warmRounds.join(', ')})`,
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
        'against 1 replica without a `redis` block (with and without the same limit); 2026-07-28 stateless reads over a light keep-alive node:http client (BENCH_CLUSTER_CLIENT=fetch: fetch), interleaved, after 3000 unmeasured reads into every gateway (BENCH_CLUSTER_WARM). On this 2-core machine every process shares the same two cores, so the ratio checks that Redis costs nothing per read rather than that replicas add capacity. ' +
        "Round trips are Redis's own count (INFO commandstats, top-level commands only: a script's inner TIME/HMGET/HSET/PEXPIRE are not round trips) over every read of the measured runs.",
    );
  } finally {
    await Promise.all(handles.reverse().map((h) => h.close().catch(() => undefined)));
  }
}
