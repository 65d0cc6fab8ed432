// Benchmark: a direct SDK client vs the same client through the mcp-federate proxy (dist/cli.js), in one run.
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import { createInterface } from 'node:readline';
import { setTimeout as delay } from 'node:timers/promises';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport, getDefaultEnvironment } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ResourceUpdatedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { Client as ModernClient } from '@modelcontextprotocol/client';
import { StdioClientTransport as ModernStdioTransport } from '@modelcontextprotocol/client/stdio';
import { connectLight, connectLightModern } from './light-http.mjs';
import { cpuMs } from './proc-cpu.mjs';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const FIXTURE = join(ROOT, 'test/fixtures/catalog-server.mjs');
const MODERN_FIXTURE = join(ROOT, 'test/fixtures/modern-server.mjs');
const TOOLS_FIXTURE = join(ROOT, 'test/fixtures/tools-server.mjs');
const CLI = join(ROOT, 'dist/cli.js');
const RESULTS = join(ROOT, 'bench/results.md');
const CEILING = join(ROOT, 'bench/ceiling-relay.mjs');
const CEILING_LIST = join(ROOT, 'bench/ceiling-list-relay.mjs');
const GC_HOOK = join(ROOT, 'bench/gc-hook.mjs');

const RESOURCES = 1000;
const UPSTREAMS = 10;
/** The wider merged list: growth from UPSTREAMS to this many should be no faster than the parallel bound's. */
const LIST_UPSTREAMS_WIDE = 30;
const BASE_ARGS = ['--resources', String(RESOURCES), '--page-size', '100', '--size', '1024'];
const TEXT_IDS = Array.from({ length: RESOURCES }, (_, i) => i).filter((i) => i % 10 !== 9);
// warmup: sequential reads before the latency rows, on every side alike; enough for V8 to have optimised the
// gateway's read path (300 left it part-compiled: its p50 still fell by a third over the next 4000).
const N = { warmup: 4000, latency: 2000, throughput: 5000, inFlight: 32, throughputReps: 3, listReps: 7, startupReps: 3 };
const N_EXTRA = { cachedUris: 50, burst: 100, relay: 200, relayWarmup: 20, relayTimeoutMs: 2000 };
// HTTP phase: sessions for the scaling rows share the same total in flight as one session does.
const N_HTTP = { sessions: 8, idleSessions: 100, idleOpenBatch: 10, idleSettleMs: 2000, startTimeoutMs: 20_000, stopTimeoutMs: 5000 };
const HTTP_TOKEN = 'bench-token-0123456789abcdef';
const MAX_PAGES = 10_000;
const STDERR_TAIL = 4096;

// ---- small utilities ----

const now = () => performance.now();
const gc = () => globalThis.gc?.();
const percentile = (xs, p) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))];
const median = (xs) => percentile(xs, 50);
/**
 * Unmeasured rounds of each side before the measured ones: a gateway spawned for a row runs its
 * first 5000 reads on cold code (a cached hit cost 50, 21, then 15 µs in its first three rounds, 11
 * from the fifth), and the CPU per operation is the steady state's.
 */
const WARM_ROUNDS = 3;
const timeIt = async (fn) => {
  const t0 = now();
  await fn();
  return now() - t0;
};
const attempt = async (fn) => {
  try {
    return await fn();
  } catch (e) {
    return e instanceof Error ? e : new Error(String(e));
  }
};
const withTimeout = (promise, ms, what) => {
  let timer;
  const timeout = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms waiting for ${what}`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
};
/** Runs task(0..total-1) with `concurrency` tasks in flight. */
const pool = async (total, concurrency, task) => {
  let next = 0;
  const worker = async () => {
    while (next < total) await task(next++);
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
};
/**
 * The GC pause time (ms) process `pid` has had so far, from bench/gc-hook.mjs (loaded into every gateway
 * and ceiling relay through NODE_OPTIONS): it writes its running total to a file on SIGUSR2.
 */
const gcMs = async (pid) => {
  const file = join(tmp, `gc-${pid}.json`);
  const seqOf = () => (existsSync(file) ? JSON.parse(readFileSync(file, 'utf8')) : { seq: 0 });
  const before = seqOf().seq;
  process.kill(pid, 'SIGUSR2');
  for (let waited = 0; waited < 2000; waited += 2) {
    await delay(2);
    const now = attemptSync(seqOf);
    if (now && now.seq > before) return now.ms;
  }
  throw new Error(`no GC total from pid ${pid} (is bench/gc-hook.mjs loaded?)`);
};
const attemptSync = (fn) => {
  try {
    return fn();
  } catch {
    return undefined; // a file being written
  }
};
/**
 * Runs `fn` and returns, per handle, the CPU (user + system, /proc) and the GC pauses its process spent
 * per unit of work, in µs, `units` units in all: `{ cpu, gc }`, or the handle's Error.
 */
const costsOver = async (handles, units, fn) => {
  let before;
  // `fn` may call `restart` (interleavedMedians' afterWarmup) to count from there: the rounds that warm the processes up are not the steady state measured.
  const restart = async () => {
    before = await Promise.all(handles.map((h) => (h instanceof Error ? h : attempt(async () => ({ cpu: cpuMs(h.pid), gc: await gcMs(h.pid) })))));
  };
  await restart();
  const v = await attempt(() => fn(restart));
  if (v instanceof Error) return handles.map(() => v);
  return Promise.all(
    handles.map((h, i) => {
      const b = before[i];
      if (b instanceof Error) return b;
      return attempt(async () => ({ cpu: ((cpuMs(h.pid) - b.cpu) * 1000) / units, gc: ((await gcMs(h.pid)) - b.gc) * (1000 / units) }));
    }),
  );
};
const statusMb = (pid, field) => {
  const m = new RegExp(`${field}:\\s+(\\d+) kB`).exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  if (!m) throw new Error(`no ${field} for pid ${pid}`);
  return Number(m[1]) / 1024;
};
const peakRssMb = (pid) => statusMb(pid, 'VmHWM');
const currentRssMb = (pid) => statusMb(pid, 'VmRSS');

// ---- child processes (every one is tracked and closed at the end) ----

const live = new Set();
const tmp = mkdtempSync(join(tmpdir(), 'mcp-federate-bench-'));
/** Loads bench/gc-hook.mjs into a gateway or the ceiling relay, so its GC pauses can be read (see gcMs). */
const GC_ENV = { NODE_OPTIONS: `--import=${pathToFileURL(GC_HOOK).href}`, MCP_FEDERATE_BENCH_GC_DIR: tmp };
let configSeq = 0;

/** Spawns a stdio MCP server and connects an SDK client to it. */
/**
 * Connects `client` over `transport` as a handle tracked for the end-of-run cleanup (`extra` adds
 * properties, e.g. `pid`); a failed connection is closed and reported with `label` and `detail()`.
 */
const connectTracked = async (label, client, transport, detail, extra) => {
  const handle = Object.defineProperties(
    {
      client,
      close: async () => {
        live.delete(handle);
        await client.close().catch(() => {});
      },
    },
    Object.getOwnPropertyDescriptors(extra),
  );
  live.add(handle);
  try {
    await client.connect(transport);
  } catch (e) {
    await handle.close();
    throw new Error(`${label} failed to connect: ${e.message}${detail()}`);
  }
  return handle;
};
/** SDK v1 (2025-11-25) over stdio: the client most of the bench uses. */
const v1Sdk = { Transport: StdioClientTransport, client: () => new Client({ name: 'mcp-federate-bench', version: '1.0.0' }) };
/** SDK v2 negotiating `auto`: the 2026-07-28 row. */
const v2Sdk = {
  Transport: ModernStdioTransport,
  client: () => new ModernClient({ name: 'mcp-federate-bench', version: '1.0.0' }, { versionNegotiation: { mode: 'auto' } }),
};
/** `env`: variables added to the SDK's default (safe) environment of the child. */
const spawnClient = async (label, command, args, sdk = v1Sdk, env = undefined) => {
  const transport = new sdk.Transport({ command, args, stderr: 'pipe', ...(env ? { env: { ...getDefaultEnvironment(), ...env } } : {}) });
  let tail = '';
  transport.stderr?.on('data', (chunk) => {
    tail = (tail + chunk).slice(-STDERR_TAIL);
  });
  return connectTracked(label, sdk.client(), transport, () => (tail ? ` — stderr: ${tail.trim()}` : ''), {
    get pid() {
      return transport.pid;
    },
  });
};
/** An SDK v2 client that negotiates `auto` and must end up in MCP 2026-07-28. */
const spawnModernClient = async (label, command, args) => {
  const handle = await spawnClient(label, command, args, v2Sdk);
  if (handle.client.getNegotiatedProtocolVersion() !== '2026-07-28') {
    await handle.close();
    throw new Error(`${label} negotiated ${handle.client.getNegotiatedProtocolVersion()}, not 2026-07-28`);
  }
  return handle;
};
const closeHandles = (...items) =>
  Promise.all(
    items
      .flat()
      .filter((h) => h?.close)
      .map((h) => h.close()),
  );
const closeAll = () => closeHandles([...live]);
const killLeftovers = () => {
  for (const h of live) if (h.pid) process.kill(h.pid, 'SIGKILL');
};

const spawnFixture = (extraArgs = []) => spawnClient('fixture', process.execPath, [FIXTURE, ...BASE_ARGS, ...extraArgs]);
const spawnFixtures = (count) => Promise.all(Array.from({ length: count }, () => spawnFixture()));

/** servers: { id: extraFixtureArgs }; extra: more top-level config (e.g. cache settings); env: added to the proxy's environment. */
const spawnProxy = (servers, extra = {}, env = undefined) => {
  if (!existsSync(CLI)) return Promise.reject(new Error(`${CLI} not found (run npm run build)`));
  const config = { ...extra, servers: { ...extra.servers } }; // extra.servers: any other upstreams, as given
  for (const [id, extra] of Object.entries(servers)) {
    config.servers[id] = { command: process.execPath, args: [FIXTURE, ...BASE_ARGS, ...extra] };
  }
  const file = join(tmp, `config-${configSeq++}.json`);
  writeFileSync(file, JSON.stringify(config, null, 2));
  // Executed as its bin (shebang and all), the way `npx mcp-federate` or an installed bin runs it;
  // BENCH_PROXY_NODE_ARGS (e.g. `--cpu-prof --cpu-prof-dir=/tmp/prof`, to profile it under this load) runs it with node and those flags instead.
  const nodeArgs = process.env.BENCH_PROXY_NODE_ARGS?.split(' ').filter(Boolean);
  const [command, args] = nodeArgs?.length ? [process.execPath, [...nodeArgs, CLI]] : [CLI, []];
  return spawnClient('proxy', command, [...args, '--config', file, '--log-level', 'warn'], v1Sdk, { ...GC_ENV, ...env });
};
/** The ceiling relay (bench/ceiling-relay.mjs) in front of the catalog fixture: the least a stdio relay can cost. */
const spawnCeiling = (extraArgs = []) =>
  spawnClient('ceiling relay', process.execPath, [CEILING, process.execPath, FIXTURE, ...BASE_ARGS, ...extraArgs], v1Sdk, GC_ENV);
/** The ceiling list relay (bench/ceiling-list-relay.mjs) in front of `count` catalog fixtures: the least a merged list can cost. */
const spawnListCeiling = (count) =>
  spawnClient('ceiling list relay', process.execPath, [CEILING_LIST, String(count), process.execPath, FIXTURE, ...BASE_ARGS], v1Sdk, GC_ENV);
/** A proxy that has already served one full list, so no upstream start-up work overlaps a measurement. */
const spawnSettledProxy = async (servers, extra, env) => {
  const handle = await spawnProxy(servers, extra, env);
  await listAll(handle.client);
  return handle;
};
const upstreamsOf = (count) => Object.fromEntries(Array.from({ length: count }, (_, i) => [`u${i}`, []]));
const tenUpstreams = () => upstreamsOf(UPSTREAMS);

// ---- HTTP servers and clients ----

const parseJsonLine = (line) => {
  try {
    return JSON.parse(line);
  } catch {
    return undefined;
  }
};
/**
 * Spawns a server process; resolves once `urlFrom` has found its URL in a stdout/stderr line (and
 * `readyWhen`, if given, has matched a line). Both pipes are drained for the process's whole life.
 */
const spawnServer = async (label, command, args, { urlFrom, readyWhen, env }) => {
  const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'], ...(env ? { env: { ...process.env, ...env } } : {}) });
  let tail = '';
  let url;
  let ready = !readyWhen;
  let settle;
  const started = new Promise((resolve, reject) => (settle = { resolve, reject }));
  const readers = [];
  for (const stream of [child.stdout, child.stderr]) {
    stream.setEncoding('utf8');
    stream.on('data', (chunk) => (tail = (tail + chunk).slice(-STDERR_TAIL)));
    const lines = createInterface({ input: stream });
    readers.push(lines);
    lines.on('line', (line) => {
      url ??= urlFrom(line);
      ready ||= readyWhen(line);
      if (!url || !ready) return;
      settle.resolve();
      // Ready: stop splitting its output into lines (the pipes are still drained, into the tail). A
      // gateway at info writes an access-log line per request, which this process (the HTTP rows'
      // client too) would otherwise split and parse for the whole run, on the gateway side only.
      for (const reader of readers) reader.close();
      child.stdout.resume(); // closing a readline pauses its input
      child.stderr.resume();
    });
  }
  child.once('exit', (code, signal) => settle.reject(new Error(`${label} exited (${code ?? signal}) before it was ready — output: ${tail.trim()}`)));
  const handle = {
    get pid() {
      return child.pid;
    },
    get url() {
      return url;
    },
    close: async () => {
      live.delete(handle);
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      await withTimeout(exited, N_HTTP.stopTimeoutMs, `${label} to exit`).catch(() => child.kill('SIGKILL'));
    },
  };
  live.add(handle);
  try {
    await withTimeout(started, N_HTTP.startTimeoutMs, `${label} to listen`);
  } catch (e) {
    await handle.close();
    throw e;
  }
  return handle;
};
/** The catalog fixture on the SDK v1's own Streamable HTTP server transport (stateful sessions). */
const spawnHttpFixture = () =>
  spawnServer('HTTP fixture', process.execPath, [FIXTURE, ...BASE_ARGS, '--http', '0'], {
    urlFrom: (line) => {
      const port = parseJsonLine(line)?.port;
      return port ? `http://127.0.0.1:${port}/mcp` : undefined;
    },
  });
/** The gateway serving Streamable HTTP with one bearer token, `upstream` as its only server `bench`; ready once its upstreams started. */
const spawnHttpProxy = (upstream, extra = {}) => {
  if (!existsSync(CLI)) return Promise.reject(new Error(`${CLI} not found (run npm run build)`));
  const { servers: more = {}, ...rest } = extra;
  const config = { ...rest, auth: { tokens: [{ principal: 'bench', token: HTTP_TOKEN }] }, servers: { bench: upstream, ...more } };
  const file = join(tmp, `config-${configSeq++}.json`);
  writeFileSync(file, JSON.stringify(config, null, 2));
  // info: the `listening` line is logged at info (so are sessions opening and closing, and the access log's line per request, which spawnServer stops reading once ready).
  return spawnServer('HTTP proxy', CLI, ['serve', '--http', '--port', '0', '--config', file, '--log-level', 'info'], {
    urlFrom: (line) => {
      const record = parseJsonLine(line);
      return record?.msg === 'listening' ? record.url : undefined;
    },
    readyWhen: (line) => line.includes('"msg":"upstreams started"'),
    env: GC_ENV,
  });
};
/** An SDK v1 client over Streamable HTTP (2025-11-25, a stateful session), sending the bench's bearer token. */
const connectHttp = async (label, url) => {
  const transport = new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers: { authorization: `Bearer ${HTTP_TOKEN}` } } });
  return connectTracked(label, new Client({ name: 'mcp-federate-bench', version: '1.0.0' }), transport, () => '', { transport });
};
/** A session that has already served one full list (so no upstream start-up work overlaps a measurement). */
const connectSettledHttp = async (label, server) => {
  const handle = await connectHttp(label, server.url);
  await listAll(handle.client);
  return handle;
};
/**
 * The light keep-alive client (bench/light-http.mjs) with one session on `server`, settled by one full
 * list: the client of the HTTP throughput and latency rows, so they measure the servers and not the SDK client.
 */
const connectLightHttp = async (label, server) => {
  const client = await connectLight(server.url, { token: HTTP_TOKEN, maxSockets: N.inFlight }).catch((e) => {
    throw new Error(`${label} failed to connect: ${e.message}`);
  });
  const handle = {
    client,
    close: async () => {
      live.delete(handle);
      await client.close();
    },
  };
  live.add(handle);
  await listAll(client);
  return handle;
};

// ---- workloads (prefix is '' for direct, '<id>+' through the proxy) ----

const textUris = (prefix, count = TEXT_IDS.length) => TEXT_IDS.slice(0, count).map((i) => `${prefix}fixture://res/${i}`);
const read = (client, uri) => client.readResource({ uri });
// A unique query per read: the fixture ignores it, and a caching proxy cannot answer from its cache.
let unique = 0;
const stats = async (client, prefix) => JSON.parse((await read(client, `${prefix}fixture://stats?n=${unique++}`)).contents[0].text);

const sequentialLatencies = async (client, uris, n) => {
  const out = [];
  for (let i = 0; i < n; i++) {
    const t0 = now();
    await read(client, uris[i % uris.length]);
    out.push(now() - t0);
  }
  return out;
};
/** A 2026 read as sent (a pass-through schema: no typed helper, no client-side response cache). */
const PASS = { '~standard': { version: 1, vendor: 'bench', validate: (value) => ({ value }) } };
const modernThroughput = async (client, prefix) => {
  const ms = await timeIt(() =>
    pool(N.throughput, N.inFlight, (i) => client.request({ method: 'resources/read', params: { uri: `${prefix}modern://doc/${i % 1000}` } }, PASS)),
  );
  return N.throughput / (ms / 1000);
};
const throughput = async (client, uris) => {
  const ms = await timeIt(() => pool(N.throughput, N.inFlight, (i) => read(client, uris[i % uris.length])));
  return N.throughput / (ms / 1000);
};
const listAll = async (client) => {
  let count = 0;
  let cursor;
  for (let pages = 0; pages < MAX_PAGES; pages++) {
    const page = await client.listResources(cursor === undefined ? {} : { cursor });
    count += page.resources.length;
    cursor = page.nextCursor;
    if (cursor === undefined) return count;
  }
  throw new Error(`resources/list still paginating after ${MAX_PAGES} pages`);
};
const expectAtLeast = (count, min, what) => {
  if (count < min) throw new Error(`${what}: got ${count} resources, expected >= ${min}`);
};
const listAllTimed = (clients, what, min = UPSTREAMS * RESOURCES) =>
  timeIt(async () => {
    const counts = await Promise.all(clients.map(listAll));
    expectAtLeast(
      counts.reduce((a, b) => a + b, 0),
      min,
      what,
    );
  });
const startupToFirstList = async (spawnAll) => {
  const t0 = now();
  const handles = await spawnAll();
  await Promise.all(handles.map((h) => h.client.listResources()));
  const ms = now() - t0;
  await closeHandles(handles);
  return ms;
};
const upstreamReadsForBurst = async (client, prefix) => {
  const uri = `${prefix}fixture://res/5`;
  await Promise.all(Array.from({ length: N_EXTRA.burst }, () => read(client, uri)));
  return (await stats(client, prefix)).readsByUri['fixture://res/5'] ?? 0;
};
const relayLatencyP50 = async (client, prefix) => {
  const ticker = `${prefix}fixture://ticker`;
  let notify = () => {};
  client.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => {
    if (n.params.uri === ticker) notify();
  });
  await client.subscribeResource({ uri: ticker });
  const lat = [];
  for (let i = 0; i < N_EXTRA.relayWarmup + N_EXTRA.relay; i++) {
    const arrived = new Promise((res) => (notify = res));
    const t0 = now();
    const ticked = read(client, `${prefix}fixture://control/tick?n=${unique++}`);
    await withTimeout(arrived, N_EXTRA.relayTimeoutMs, `notifications/resources/updated for ${ticker}`);
    if (i >= N_EXTRA.relayWarmup) lat.push(now() - t0);
    await ticked;
  }
  await client.unsubscribeResource({ uri: ticker });
  return percentile(lat, 50);
};

// ---- comparison drivers: each side is a function, or the Error that prevented it ----

/** Runs fn(handle) unless the handle failed to start; errors become values. */
const on = (handle, fn) => (handle instanceof Error ? handle : attempt(() => fn(handle)));
/** A side's repeatable run, or the start error. */
const sideOf = (handle, run) => (handle instanceof Error ? handle : () => run(handle));

/** One discarded warm-up, then `reps` alternating direct/proxy runs; returns each side's median. */
const interleavedMedians = async (reps, ...sides) => {
  // An options object first: `warm` unmeasured rounds of each side (default 1), then `afterWarmup()`.
  const opts = sides[0] && !(sides[0] instanceof Error) && typeof sides[0] === 'object' ? sides.shift() : {};
  const warm = opts.warm ?? 1;
  const state = sides.map((run) => ({ run, samples: [], error: run instanceof Error ? run : undefined }));
  for (let rep = -warm; rep < reps; rep++) {
    if (rep === 0) await opts.afterWarmup?.();
    for (const s of state) {
      if (s.error) continue;
      gc();
      const v = await attempt(s.run);
      if (v instanceof Error) s.error = v;
      else if (rep >= 0) s.samples.push(v);
    }
  }
  return state.map((s) => s.error ?? median(s.samples));
};
const latencyPercentiles = async (handle, prefix) =>
  on(handle, async (h) => {
    const uris = textUris(prefix);
    await sequentialLatencies(h.client, uris, N.warmup);
    gc();
    const lat = await sequentialLatencies(h.client, uris, N.latency);
    return { p50: percentile(lat, 50), p99: percentile(lat, 99) };
  });

// ---- report ----

const rows = [];
const notes = new Set();
const fmt = {
  ms: (v) => `${v.toFixed(2)} ms`,
  rps: (v) => `${Math.round(v)} /s`,
  mb: (v) => `${v.toFixed(1)} MB`,
  n: (v) => String(v),
  us: (v) => `${v.toFixed(1)} µs`,
  cores: (v) => `${v.toFixed(2)} cores`,
  x: (v) => v.toFixed(2),
};
const RATIO = (text, ok) => ({ text: `ratio ${text}`, on: 'ratio', ok });
const PROXY = (text, ok) => ({ text, on: 'proxy', ok });
const RSS_TARGET = PROXY('≤ 80 MB', (mb) => mb <= 80);
const cell = (v, f) => (v === undefined ? '—' : v instanceof Error ? 'n/a' : f(v));
/**
 * target: { text, on: 'ratio' | 'proxy', ok(x) }; cost: the proxy column's process, `{ cpu, gc }` µs per
 * operation over the same runs (see costsOver), or its Error.
 */
const addRow = (metric, direct, proxy, format, target, cost) => {
  for (const v of [direct, proxy, cost]) if (v instanceof Error) notes.add(v.message.replace(/\s+/g, ' '));
  const numeric = (v) => typeof v === 'number';
  const ratio = numeric(direct) && numeric(proxy) && direct > 0 ? proxy / direct : undefined;
  const subject = target?.on === 'ratio' ? ratio : proxy;
  const pass = !target ? '—' : numeric(subject) ? (target.ok(subject) ? 'yes' : 'no') : 'n/a';
  const ratioText = ratio === undefined ? '—' : ratio.toFixed(2);
  const costs = [cell(cost && pick(cost, 'cpu'), fmt.us), cell(cost && pick(cost, 'gc'), fmt.us)];
  rows.push([metric, cell(direct, fmt[format]), cell(proxy, fmt[format]), ratioText, ...costs, target?.text ?? '—', pass]);
};
const renderReport = () =>
  [
    '# mcp-federate benchmark',
    '',
    `${new Date().toISOString()} · node ${process.version} · ${cpus().length} CPU(s) · ${cpus()[0]?.model ?? ''}`,
    '',
    `Upstream: catalog fixture, ${RESOURCES} × 1 KiB resources, page size 100. Ratio = proxy / direct. ` +
      "CPU/op and GC/op: the proxy column's process (user + system CPU from /proc; GC pauses from a PerformanceObserver), per operation, over the same interleaved runs (warm-up included).",
    '',
    '| metric | direct | proxy | ratio | CPU/op | GC/op | target | pass |',
    '|---|---:|---:|---:|---:|---:|---|---|',
    ...rows.map((r) => `| ${r.join(' | ')} |`),
    ...(notes.size ? ['', '## Notes', '', ...[...notes].map((n) => `- ${n}`)] : []),
    '',
  ].join('\n');

// ---- phases ----

const progress = (msg) => process.stderr.write(`[bench] ${msg}\n`);
const pick = (v, key) => (v instanceof Error ? v : v[key]);

const readPhase = async (direct, proxy, ceiling) => {
  progress('read latency (direct, proxy, ceiling relay)');
  const dLat = await latencyPercentiles(direct, '');
  let pLat;
  let cLat;
  // CPU and GC per sequential read (warm-up included), each side over its own run.
  const [pLatCost] = await costsOver([proxy], N.warmup + N.latency, async () => (pLat = await latencyPercentiles(proxy, 'bench+')));
  const [cLatCost] = await costsOver([ceiling], N.warmup + N.latency, async () => (cLat = await latencyPercentiles(ceiling, 'bench+')));
  addRow(`read latency p50 (${N.latency} sequential, warm)`, pick(dLat, 'p50'), pick(pLat, 'p50'), 'ms', undefined, pLatCost);
  addRow(`read latency p99 (${N.latency} sequential, warm)`, pick(dLat, 'p99'), pick(pLat, 'p99'), 'ms');
  addRow(`ceiling relay: read latency p50 (${N.latency} sequential, warm)`, pick(dLat, 'p50'), pick(cLat, 'p50'), 'ms', undefined, cLatCost);
  addRow(
    `read latency p50, proxy vs the ceiling relay (direct column: ceiling relay)`,
    pick(cLat, 'p50'),
    pick(pLat, 'p50'),
    'ms',
    RATIO('≤ 1.3', (r) => r <= 1.3),
  );

  progress('read throughput (direct, proxy, ceiling relay)');
  let dTp;
  let pTp;
  let cTp;
  // The proxy's own CPU and GC per relayed read: steadier than throughput on a shared 2-core machine.
  const [pCost, cCost] = await costsOver([proxy, ceiling], N.throughputReps * N.throughput, async (restart) => {
    [dTp, pTp, cTp] = await interleavedMedians(
      N.throughputReps,
      { warm: WARM_ROUNDS, afterWarmup: restart },
      sideOf(direct, (d) => throughput(d.client, textUris(''))),
      sideOf(proxy, (h) => throughput(h.client, textUris('bench+'))),
      sideOf(ceiling, (h) => throughput(h.client, textUris('bench+'))),
    );
  });
  const label = `(${N.throughput} reads, ${N.inFlight} in flight, median of ${N.throughputReps})`;
  addRow(
    `read throughput, relayed with cache off ${label}`,
    dTp,
    pTp,
    'rps',
    RATIO('≥ 0.55', (r) => r >= 0.55),
    pCost,
  );
  addRow(`ceiling relay: read throughput ${label}`, dTp, cTp, 'rps', undefined, cCost);
  addRow(
    "proxy CPU per relayed read (cache off; direct column: the ceiling relay's)",
    pick(cCost, 'cpu'),
    pick(pCost, 'cpu'),
    'us',
    PROXY('≤ 17 µs', (us) => us <= 17),
  );
  addRow('proxy peak RSS (VmHWM, 1 upstream, after the read load)', undefined, await on(proxy, (h) => peakRssMb(h.pid)), 'mb', RSS_TARGET);
  notes.add(
    'Ceiling relay: bench/ceiling-relay.mjs, a minimal stdio relay between the same client and the same fixture that parses each line, ' +
      'rewrites the URI (strips `bench+` going up, adds it to results coming down) and writes it on, one write per chunk read. ' +
      'It has no policy, cache, queue, timeouts or bounds: it is the limit of a parse-rewrite-write relay on this machine, not a competitor.',
  );
};

/**
 * 2026-07-28 clients over HTTP (stateless requests, bench/light-http.mjs `connectLightModern`): the
 * gateway's CPU per `resources/read` (1 KiB text) and per `tools/call` (a tool answering 1 KiB of
 * text), each upstream over stdio, in alternating rounds of one gateway.
 */
const modernHttpRows = async () => {
  progress('HTTP, 2026-07-28: reads and tool calls');
  const proxy = await attempt(() =>
    spawnHttpProxy(
      { command: process.execPath, args: [FIXTURE, ...BASE_ARGS] },
      { cache: { enabled: false }, servers: { tools: { command: process.execPath, args: [TOOLS_FIXTURE, '--text-bytes', '1024'] } } },
    ),
  );
  const client = proxy instanceof Error ? proxy : connectLightModern(proxy.url, { token: HTTP_TOKEN, maxSockets: N.inFlight });
  const uris = textUris('bench+');
  const reads = (c) => pool(N.throughput, N.inFlight, (i) => c.readResource({ uri: uris[i % uris.length] }));
  const calls = (c) => pool(N.throughput, N.inFlight, (i) => c.callTool({ name: 'tools__text', arguments: { n: i % 1000 } }));
  const readCosts = [];
  const callCosts = [];
  if (!(client instanceof Error)) {
    await attempt(async () => (await reads(client), await calls(client))); // warm-up, unmeasured
    for (let r = 0; r < N.throughputReps; r++) {
      readCosts.push((await costsOver([proxy], N.throughput, () => reads(client)))[0]);
      callCosts.push((await costsOver([proxy], N.throughput, () => calls(client)))[0]);
    }
  }
  const cpuOf = (costs) => {
    if (client instanceof Error) return client;
    const failed = costs.find((c) => c instanceof Error);
    return failed ?? median(costs.map((c) => c.cpu));
  };
  const readCpu = cpuOf(readCosts);
  const callCpu = cpuOf(callCosts);
  addRow(`HTTP 2026-07-28 proxy CPU per read (stateless, ${N.inFlight} in flight, median of ${N.throughputReps}, stdio upstream)`, undefined, readCpu, 'us');
  addRow(`HTTP 2026-07-28 proxy CPU per tools/call, 1 KiB text (same gateway, alternating rounds)`, undefined, callCpu, 'us');
  addRow(
    'HTTP 2026-07-28 CPU per tools/call ÷ per read',
    undefined,
    typeof readCpu === 'number' && typeof callCpu === 'number' ? callCpu / readCpu : new Error('a 2026 HTTP round failed'),
    'x',
  );
  await closeHandles(client instanceof Error ? undefined : { close: () => client.close() }, proxy);
};

/** `tools/call` of a tool answering 1 KiB of text: direct vs relayed, and the proxy's CPU per call (beside the read rows of the same run). */
const callPhase = async () => {
  progress('tools/call throughput');
  const toolArgs = [TOOLS_FIXTURE, '--text-bytes', '1024'];
  const direct = await attempt(() => spawnClient('tools fixture', process.execPath, toolArgs));
  const proxy = await attempt(async () => {
    if (!existsSync(CLI)) throw new Error(`${CLI} not found (run npm run build)`);
    const file = join(tmp, `config-${configSeq++}.json`);
    writeFileSync(file, JSON.stringify({ servers: { bench: { command: process.execPath, args: toolArgs } } }, null, 2));
    const handle = await spawnClient('proxy', CLI, ['--config', file, '--log-level', 'warn'], v1Sdk, GC_ENV);
    await handle.client.listTools();
    // The warm-up the read rows' proxy has had by their throughput row (2000 sequential reads for the
    // latency rows), so that the CPU per call is not compared cold against a warm read.
    for (let i = 0; i < 2000; i++) await handle.client.callTool({ name: 'bench__text', arguments: { n: i % 1000 } });
    return handle;
  });
  // Arguments vary as the read rows' URIs do (the fair queue shares slots per tool and arguments, as per URI).
  const calls = (client, name) =>
    timeIt(() => pool(N.throughput, N.inFlight, (i) => client.callTool({ name, arguments: { n: i % 1000 } }))).then((ms) => (N.throughput * 1000) / ms);
  let dTp;
  let pTp;
  const [cost] = await costsOver([proxy], N.throughputReps * N.throughput, async (restart) => {
    [dTp, pTp] = await interleavedMedians(
      N.throughputReps,
      { warm: WARM_ROUNDS, afterWarmup: restart },
      sideOf(direct, (d) => calls(d.client, 'text')),
      sideOf(proxy, (h) => calls(h.client, 'bench__text')),
    );
  });
  addRow(
    `tools/call throughput, 1 KiB text result (${N.throughput} calls, ${N.inFlight} in flight, median of ${N.throughputReps})`,
    dTp,
    pTp,
    'rps',
    undefined,
    cost,
  );
  addRow(
    "proxy CPU per relayed tools/call (1 KiB text; another gateway than the read rows', in another phase)",
    undefined,
    cost instanceof Error ? cost : cost.cpu,
    'us',
  );
  await closeHandles(direct, proxy);
  await pairedCallRow(toolArgs);
};

/**
 * The CPU of a `tools/call` against a read's, on one gateway with both upstreams, in alternating
 * rounds of the same client: the two figures share the process, its warm-up and the machine's load
 * of the moment, which separate gateways in separate phases do not (their CPU per operation swings
 * ±15% between runs). The ratio is the median of the per-round ratios.
 */
const pairedCallRow = async (toolArgs) => {
  progress('tools/call against resources/read, one gateway, alternating rounds');
  const reps = Math.max(N.throughputReps, 7);
  const gateway = await attempt(() =>
    spawnSettledProxy({ bench: [] }, { cache: { enabled: false }, servers: { tools: { command: process.execPath, args: toolArgs } } }),
  );
  const uris = textUris('bench+');
  const units = 2 * N.throughput; // rounds long enough that one major GC more or less moves a round by little
  const reads = (h) => pool(units, N.inFlight, (i) => h.client.readResource({ uri: uris[i % uris.length] }));
  const calls = (h) => pool(units, N.inFlight, (i) => h.client.callTool({ name: 'tools__text', arguments: { n: i % 1000 } }));
  const rounds = await attempt(async () => {
    if (gateway instanceof Error) throw gateway;
    await reads(gateway); // warm-up, unmeasured
    await calls(gateway);
    const out = [];
    for (let r = 0; r < reps; r++) {
      const [read] = await costsOver([gateway], units, () => reads(gateway));
      const [call] = await costsOver([gateway], units, () => calls(gateway));
      if (read instanceof Error) throw read;
      if (call instanceof Error) throw call;
      out.push({ read: read.cpu, call: call.cpu });
      progress(`  round ${r + 1}: read ${read.cpu.toFixed(1)} µs (GC ${read.gc.toFixed(1)}), call ${call.cpu.toFixed(1)} µs (GC ${call.gc.toFixed(1)})`);
    }
    return out;
  });
  const ok = !(rounds instanceof Error);
  const readCpu = ok ? median(rounds.map((r) => r.read)) : rounds;
  const callCpu = ok ? median(rounds.map((r) => r.call)) : rounds;
  addRow(`proxy CPU per read (direct column) and per tools/call (proxy column), 1 KiB text, one gateway, ${reps} alternating rounds`, readCpu, callCpu, 'us');
  addRow(
    `proxy CPU per tools/call ÷ per read, median of the ${reps} rounds' ratios (target: the read's ± 10%)`,
    undefined,
    ok ? median(rounds.map((r) => r.call / r.read)) : rounds,
    'x',
    PROXY('0.9–1.1', (x) => x >= 0.9 && x <= 1.1),
  );
  await closeHandles(gateway);
};

const modernPhase = async () => {
  progress('2026-07-28 client: read throughput');
  const direct = await attempt(() => spawnModernClient('modern fixture', process.execPath, [MODERN_FIXTURE]));
  const proxy = await attempt(async () => {
    const config = { cache: { enabled: false }, servers: { bench: { command: process.execPath, args: [MODERN_FIXTURE], protocol: '2026-07-28' } } };
    const file = join(tmp, `config-${configSeq++}.json`);
    writeFileSync(file, JSON.stringify(config, null, 2));
    const h = await spawnClient('proxy', CLI, ['--config', file, '--log-level', 'warn'], v2Sdk, GC_ENV);
    if (h.client.getNegotiatedProtocolVersion() !== '2026-07-28') {
      await h.close();
      throw new Error(`proxy negotiated ${h.client.getNegotiatedProtocolVersion()}, not 2026-07-28`);
    }
    await h.client.request({ method: 'resources/list', params: {} }, PASS); // upstream settled
    return h;
  });
  let dTp;
  let pTp;
  const [cost] = await costsOver([proxy], N.throughputReps * N.throughput, async (restart) => {
    [dTp, pTp] = await interleavedMedians(
      N.throughputReps,
      { warm: WARM_ROUNDS, afterWarmup: restart },
      sideOf(direct, (d) => modernThroughput(d.client, '')),
      sideOf(proxy, (h) => modernThroughput(h.client, 'bench+')),
    );
  });
  const label = `2026-07-28 client (SDK v2): read throughput, 2026 upstream, cache off (${N.throughput} reads, ${N.inFlight} in flight, median of ${N.throughputReps})`;
  addRow(
    label,
    dTp,
    pTp,
    'rps',
    RATIO('≥ 0.55', (r) => r >= 0.55),
    cost,
  );
  await closeHandles(direct, proxy);
};

/** A 20-rule policy: 18 decoys that never match, one allow for the bench principal, one deny that filters 10% of the catalog. */
const benchPolicy = () => ({
  default: 'deny',
  rules: [
    ...Array.from({ length: 18 }, (_, i) => ({
      id: `team-${i}`,
      effect: 'allow',
      principals: [`user${i}`],
      resources: [`file:///team${i}/**`, `memo:${i}/**`],
    })),
    { id: 'bench', effect: 'allow', roles: ['bench'] },
    { id: 'no-nines', effect: 'deny', resources: ['fixture://res/*9'] },
  ],
});

/** The audit key of the governed rows: the keyed chain (one HMAC per record) is on, as in production. */
const BENCH_AUDIT_KEY = { MCP_FEDERATE_BENCH_AUDIT_KEY: 'bench-audit-key-0123456789abcdef0123456789abcdef' };

const accessPhase = async () => {
  progress('policy + audit + keyed chain + anchor file vs none (and vs a plain-chain audit)');
  const audit = { file: join(tmp, 'audit.jsonl'), keyEnv: Object.keys(BENCH_AUDIT_KEY)[0], anchorFile: join(tmp, 'audit-anchors.jsonl') };
  const governed = { stdio: { principal: 'bench', roles: ['bench'] }, policy: benchPolicy(), audit };
  const plainChain = { ...governed, audit: { file: join(tmp, 'audit-plain.jsonl') } };
  const plain = await attempt(() => spawnSettledProxy({ bench: [] }, { cache: { enabled: false } }));
  const guarded = await attempt(() => spawnSettledProxy({ bench: [] }, { cache: { enabled: false }, ...governed }, BENCH_AUDIT_KEY));
  const unkeyed = await attempt(() => spawnSettledProxy({ bench: [] }, { cache: { enabled: false }, ...plainChain }));
  const units = N.throughputReps * N.throughput;
  let pTp;
  let gTp;
  let uTp;
  // All three gateways' CPU and GC over the same interleaved runs: each one's cost per read, side by side.
  const [plainCost, guardedCost, unkeyedCost] = await costsOver([plain, guarded, unkeyed], units, async (restart) => {
    [pTp, gTp, uTp] = await interleavedMedians(
      N.throughputReps,
      { warm: WARM_ROUNDS, afterWarmup: restart },
      sideOf(plain, (p) => throughput(p.client, textUris('bench+'))),
      sideOf(guarded, (g) => throughput(g.client, textUris('bench+'))),
      sideOf(unkeyed, (u) => throughput(u.client, textUris('bench+'))),
    );
  });
  const [plainCpu, cpu, unkeyedCpu] = [plainCost, guardedCost, unkeyedCost].map((c) => pick(c, 'cpu'));
  addRow(
    `read throughput, 20-rule policy + keyed audit chain + anchor file vs none (direct column: none; cache off)`,
    pTp,
    gTp,
    'rps',
    RATIO('≥ 0.93', (r) => r >= 0.93),
    guardedCost,
  );
  addRow('proxy CPU per read with policy + keyed audit chain + anchor file (direct column: none)', plainCpu, cpu, 'us');
  addRow('read throughput, keyed chain + anchor file vs plain chain (direct column: policy + plain-chain audit)', uTp, gTp, 'rps');
  addRow('proxy CPU per read, keyed chain + anchor file vs plain chain (direct column: policy + plain-chain audit)', unkeyedCpu, cpu, 'us');
  await closeHandles(plain, guarded, unkeyed);

  const plainList = await attempt(() => spawnSettledProxy(tenUpstreams()));
  const guardedList = await attempt(() => spawnSettledProxy(tenUpstreams(), governed, BENCH_AUDIT_KEY));
  const [pList, gList] = await interleavedMedians(
    N.listReps,
    sideOf(plainList, (p) => listAllTimed([p.client], 'plain list')),
    sideOf(guardedList, (g) => listAllTimed([g.client], 'filtered list', UPSTREAMS * RESOURCES * 0.9)),
  );
  addRow(
    `full list ${UPSTREAMS}×${RESOURCES}, policy filtering 10% vs none (direct column: none)`,
    pList,
    gList,
    'ms',
    RATIO('≤ 1.1', (r) => r <= 1.1),
  );
  await closeHandles(plainList, guardedList);
};

/** Upstreams of the fan-out row: CPU per read with this many upstreams, reads spread evenly across them, against one upstream. */
const FANOUT = 16;

/**
 * CPU per relayed read with FANOUT upstreams (reads spread round-robin across them, the same 900 URIs
 * each) against one upstream, cache off, both gateways over the same interleaved runs: what grows with
 * the number of upstreams on the read path (routing by namespace, per-upstream queues and timers).
 */
const fanoutPhase = async () => {
  progress(`read throughput with ${FANOUT} upstreams vs 1`);
  const one = await attempt(() => spawnSettledProxy({ u0: [] }, { cache: { enabled: false } }));
  const ids = Array.from({ length: FANOUT }, (_, i) => `u${i}`);
  const many = await attempt(() => spawnSettledProxy(Object.fromEntries(ids.map((id) => [id, []])), { cache: { enabled: false } }));
  const oneUris = textUris('u0+');
  // Round-robin over the upstreams, so every batch of 32 in flight touches all of them.
  const manyUris = textUris('').map((uri, i) => `${ids[i % FANOUT]}+${uri}`);
  let oneTp;
  let manyTp;
  const [oneCost, manyCost] = await costsOver([one, many], N.throughputReps * N.throughput, async (restart) => {
    [oneTp, manyTp] = await interleavedMedians(
      N.throughputReps,
      { warm: WARM_ROUNDS, afterWarmup: restart },
      sideOf(one, (h) => throughput(h.client, oneUris)),
      sideOf(many, (h) => throughput(h.client, manyUris)),
    );
  });
  const label = `(${N.throughput} reads, ${N.inFlight} in flight, median of ${N.throughputReps}; cache off)`;
  addRow(`read throughput, ${FANOUT} upstreams vs 1, reads spread across them (direct column: 1 upstream) ${label}`, oneTp, manyTp, 'rps', undefined, manyCost);
  addRow(
    `proxy CPU per read, ${FANOUT} upstreams vs 1 (direct column: 1 upstream)`,
    pick(oneCost, 'cpu'),
    pick(manyCost, 'cpu'),
    'us',
    RATIO('≤ 1.15', (r) => r <= 1.15),
  );
  await closeHandles(one, many);
};

/** One merged list of `upstreams` × RESOURCES through the proxy against the parallel bound (each fixture listed by its own client at once). */
const listPhaseOf = async (upstreams) => {
  progress(`full list (${upstreams} upstreams × ${RESOURCES}; direct, proxy, ceiling list relay)`);
  const directs = await attempt(() => spawnFixtures(upstreams));
  const proxy = await attempt(() => spawnSettledProxy(upstreamsOf(upstreams)));
  const ceiling = await attempt(() => spawnListCeiling(upstreams));
  const min = upstreams * RESOURCES;
  let dList;
  let pList;
  let cList;
  const [cost, cCost] = await costsOver([proxy, ceiling], N.listReps * upstreams * RESOURCES, async (restart) => {
    [dList, pList, cList] = await interleavedMedians(
      N.listReps,
      { warm: WARM_ROUNDS, afterWarmup: restart },
      sideOf(directs, (hs) =>
        listAllTimed(
          hs.map((d) => d.client),
          'direct list',
          min,
        ),
      ),
      sideOf(proxy, (h) => listAllTimed([h.client], 'proxy list', min)),
      sideOf(ceiling, (h) => listAllTimed([h.client], 'ceiling list', min)),
    );
  });
  addRow(
    `full list ${upstreams}×${RESOURCES} (median of ${N.listReps}; CPU and GC per listed item)`,
    dList,
    pList,
    'ms',
    RATIO('≤ 1.4', (r) => r <= 1.4),
    cost,
  );
  addRow(`ceiling list relay: full list ${upstreams}×${RESOURCES} (CPU and GC per listed item)`, dList, cList, 'ms', undefined, cCost);
  addRow(`full list ${upstreams}×${RESOURCES}, proxy vs the ceiling list relay (direct column: ceiling list relay)`, cList, pList, 'ms');
  notes.add(
    'Ceiling list relay: bench/ceiling-list-relay.mjs, a minimal merged-list relay in front of the same fixtures that parses each upstream page, ' +
      'prefixes each uri and serialises 1000-item downstream pages, reading the next two upstreams ahead. It has no policy, cursor sealing, ' +
      'queue, timeouts or bounds: the limit of a parse-rewrite-serialise list relay on this machine.',
  );
  const rss = await on(proxy, (h) => peakRssMb(h.pid));
  addRow(
    `proxy peak RSS (${upstreams} upstreams, after lists)`,
    undefined,
    rss,
    'mb',
    upstreams === UPSTREAMS ? PROXY('≤ 100 MB', (mb) => mb <= 100) : undefined,
  );
  await closeHandles(directs, proxy, ceiling);
};
const listPhase = async () => {
  await listPhaseOf(UPSTREAMS);
  await listPhaseOf(LIST_UPSTREAMS_WIDE);
};

const startupPhase = async () => {
  progress(`startup to first list (${UPSTREAMS} upstreams)`);
  const [dStart, pStart] = await interleavedMedians(
    N.startupReps,
    () => startupToFirstList(() => spawnFixtures(UPSTREAMS)),
    () => startupToFirstList(async () => [await spawnProxy(tenUpstreams())]),
  );
  const label = `startup to first list, ${UPSTREAMS} upstreams (median of ${N.startupReps})`;
  addRow(
    label,
    dStart,
    pStart,
    'ms',
    RATIO('≤ 1.2', (r) => r <= 1.2),
  );
};

const extrasPhase = async (direct, proxy) => {
  progress('cached reads / coalescing / notification relay');
  let dCached;
  let pCached;
  const [cost] = await costsOver([proxy], N.throughputReps * N.throughput, async (restart) => {
    [dCached, pCached] = await interleavedMedians(
      N.throughputReps,
      { warm: WARM_ROUNDS, afterWarmup: restart },
      sideOf(direct, (h) => throughput(h.client, textUris('', N_EXTRA.cachedUris))),
      sideOf(proxy, (h) => throughput(h.client, textUris('bench+', N_EXTRA.cachedUris))),
    );
  });
  addRow(
    `cached read throughput (${N_EXTRA.cachedUris} URIs, ${N.inFlight} in flight; CPU and GC per hit)`,
    dCached,
    pCached,
    'rps',
    RATIO('≥ 1.5', (r) => r >= 1.5),
    cost,
  );

  const slowArgs = ['--read-delay-ms', '50'];
  const slowDirect = await attempt(() => spawnFixture(slowArgs));
  const slowProxy = await attempt(() => spawnSettledProxy({ bench: slowArgs }));
  addRow(
    `upstream reads for ${N_EXTRA.burst} concurrent cold reads of one URI (50 ms upstream)`,
    await on(slowDirect, (h) => upstreamReadsForBurst(h.client, '')),
    await on(slowProxy, (h) => upstreamReadsForBurst(h.client, 'bench+')),
    'n',
    PROXY('proxy = 1', (n) => n === 1),
  );
  await closeHandles(slowDirect, slowProxy);

  addRow(
    `notification relay latency p50 (${N_EXTRA.relay} ticks, coalescing and coherence off)`,
    await on(direct, (h) => relayLatencyP50(h.client, '')),
    await on(proxy, (h) => relayLatencyP50(h.client, 'bench+')),
    'ms',
  );
};

/**
 * `clients` (sessions of one proxy) read N.throughput reads in all with N.inFlight in flight in all,
 * split evenly; returns the aggregate reads/s and pushes the proxy's cores used (CPU s / wall s).
 */
const sessionsThroughput = async (pid, clients, uris, coresOut) => {
  const cpu0 = cpuMs(pid);
  const ms = await timeIt(() =>
    Promise.all(clients.map((c) => pool(N.throughput / clients.length, N.inFlight / clients.length, (i) => read(c, uris[i % uris.length])))),
  );
  coresOut.push((cpuMs(pid) - cpu0) / ms);
  return N.throughput / (ms / 1000);
};
/** Opens N_HTTP.idleSessions sessions (initialize + one list page each), leaves them idle, and reads the proxy's RSS. */
const idleSessionsRss = async (server) => {
  const before = currentRssMb(server.pid);
  const clients = [];
  try {
    for (let i = 0; i < N_HTTP.idleSessions; i += N_HTTP.idleOpenBatch) {
      const batch = Array.from({ length: Math.min(N_HTTP.idleOpenBatch, N_HTTP.idleSessions - i) }, async () => {
        const h = await connectHttp('idle session', server.url);
        clients.push(h);
        await h.client.listResources();
      });
      await Promise.all(batch);
    }
    await delay(N_HTTP.idleSettleMs);
    return { before, rss: currentRssMb(server.pid), peak: peakRssMb(server.pid) };
  } finally {
    await closeHandles(clients);
  }
};

const httpPhase = async () => {
  progress('HTTP: starting the fixture over HTTP and the gateway over HTTP (stdio and HTTP upstreams)');
  const noCache = { cache: { enabled: false } };
  const fixture = await attempt(() => spawnHttpFixture());
  const direct = await on(fixture, (f) => connectLightHttp('direct HTTP client', f));
  const stdioProxy = await attempt(() => spawnHttpProxy({ command: process.execPath, args: [FIXTURE, ...BASE_ARGS] }, noCache));
  const viaStdio = await on(stdioProxy, (p) => connectLightHttp('HTTP proxy client (stdio upstream)', p));
  const upstreamFixture = await attempt(() => spawnHttpFixture());
  const httpProxy = await on(upstreamFixture, (f) => spawnHttpProxy({ url: f.url }, noCache));
  const viaHttp = await on(httpProxy, (p) => connectLightHttp('HTTP proxy client (HTTP upstream)', p));
  // The gateway over stdio (an SDK client) in front of the same HTTP upstream: its CPU per read
  // without an HTTP downstream, so the HTTP upstream client's own share of the row above shows.
  const stdioFront = await on(upstreamFixture, async (f) => {
    const file = join(tmp, `config-${configSeq++}.json`);
    writeFileSync(file, JSON.stringify({ ...noCache, servers: { bench: { url: f.url } } }, null, 2));
    const handle = await spawnClient('proxy (stdio downstream, HTTP upstream)', CLI, ['--config', file, '--log-level', 'warn'], v1Sdk, GC_ENV);
    await listAll(handle.client);
    return handle;
  });
  // BENCH_HTTP_SDK=1 adds the gateway with the SDK's HTTP client towards the upstream (httpClient: "sdk"), for comparison.
  const sdkProxy =
    process.env.BENCH_HTTP_SDK === '1' ? await on(upstreamFixture, (f) => spawnHttpProxy({ url: f.url, httpClient: 'sdk' }, noCache)) : undefined;
  const viaSdk = sdkProxy && (await on(sdkProxy, (p) => connectLightHttp('HTTP proxy client (HTTP upstream, SDK client)', p)));
  notes.add(
    'HTTP rows: every throughput and latency client is bench/light-http.mjs, a light MCP client on node:http with a keep-alive agent (32 sockets), one POST per request, ' +
      "2025-11-25 stateful sessions, `Authorization: Bearer` on every request (the fixture ignores it); the SDK client would saturate a core and hide the servers' cost. " +
      '"direct" is the catalog fixture on the SDK v1 Streamable HTTP server transport. "stdio upstream" is the gateway (serve --http, static token, cache off) in front of the same fixture over stdio: ' +
      "the client-facing HTTP server is the gateway's instead of the SDK's, at the price of one more hop. " +
      '"HTTP upstream" puts the gateway in front of the fixture\'s own HTTP server, so its path contains the whole direct path plus the gateway\'s HTTP client towards it.',
  );

  progress('HTTP: read latency');
  const dLat = await latencyPercentiles(direct, '');
  const sLat = await latencyPercentiles(viaStdio, 'bench+');
  const hLat = await latencyPercentiles(viaHttp, 'bench+');
  addRow(`HTTP read latency p50 (${N.latency} sequential), proxy: stdio upstream`, pick(dLat, 'p50'), pick(sLat, 'p50'), 'ms');
  addRow(`HTTP read latency p50 (${N.latency} sequential), proxy: HTTP upstream`, pick(dLat, 'p50'), pick(hLat, 'p50'), 'ms');

  progress('HTTP: read throughput');
  let dTp;
  let sTp;
  let hTp;
  let kTp;
  const proxies = [stdioProxy, httpProxy, stdioFront, ...(sdkProxy ? [sdkProxy] : [])];
  const [sCost, hCost, fCost, kCost] = await costsOver(proxies, N.throughputReps * N.throughput, async (restart) => {
    [dTp, sTp, hTp, , kTp] = await interleavedMedians(
      N.throughputReps,
      { warm: WARM_ROUNDS, afterWarmup: restart },
      sideOf(direct, (d) => throughput(d.client, textUris(''))),
      sideOf(viaStdio, (h) => throughput(h.client, textUris('bench+'))),
      sideOf(viaHttp, (h) => throughput(h.client, textUris('bench+'))),
      sideOf(stdioFront, (h) => throughput(h.client, textUris('bench+'))),
      ...(viaSdk ? [sideOf(viaSdk, (h) => throughput(h.client, textUris('bench+')))] : []),
    );
  });
  const tpLabel = `(${N.throughput} reads, ${N.inFlight} in flight, median of ${N.throughputReps}, cache off)`;
  addRow(
    `HTTP read throughput ${tpLabel}, proxy: stdio upstream`,
    dTp,
    sTp,
    'rps',
    RATIO('≥ 1.3', (r) => r >= 1.3),
    sCost,
  );
  addRow(
    `HTTP read throughput ${tpLabel}, proxy: HTTP upstream`,
    dTp,
    hTp,
    'rps',
    RATIO('≥ 0.6', (r) => r >= 0.6),
    hCost,
  );
  if (viaSdk) addRow(`HTTP read throughput ${tpLabel}, proxy: HTTP upstream through the SDK's HTTP client`, dTp, kTp, 'rps', undefined, kCost);
  addRow(
    'HTTP proxy CPU per relayed read, HTTP upstream',
    undefined,
    pick(hCost, 'cpu'),
    'us',
    PROXY('≤ 150 µs', (us) => us <= 150),
  );
  // Its throughput is the SDK stdio client's, not the gateway's: only the CPU is reported.
  addRow('HTTP upstream (lean client) CPU per relayed read, stdio downstream (SDK client)', undefined, pick(fCost, 'cpu'), 'us', undefined, fCost);
  notes.add(
    '"stdio downstream (SDK client)": the gateway on stdio, an SDK v1 client in front, the same HTTP upstream behind (lean client, cache off), read in the same interleaved rounds: ' +
      "its CPU per read is the relay plus the gateway's HTTP upstream client without an HTTP downstream; the HTTP-upstream row minus it is about what the HTTP downstream adds.",
  );
  await closeHandles(viaSdk, sdkProxy, stdioFront, viaHttp, httpProxy, upstreamFixture, direct, fixture);
  await modernHttpRows();

  progress(`HTTP: ${N_HTTP.sessions} sessions vs 1 (stdio upstream)`);
  const many = await on(stdioProxy, (p) => Promise.all(Array.from({ length: N_HTTP.sessions }, () => connectLightHttp('HTTP proxy session', p))));
  const cores1 = [];
  const coresN = [];
  const uris = textUris('bench+');
  const [tp1, tpN] = await interleavedMedians(
    N.throughputReps,
    sideOf(viaStdio, (h) => sessionsThroughput(stdioProxy.pid, [h.client], uris, cores1)),
    sideOf(many, (hs) =>
      sessionsThroughput(
        stdioProxy.pid,
        hs.map((h) => h.client),
        uris,
        coresN,
      ),
    ),
  );
  // interleavedMedians discards its first (warm-up) run; so do the cores samples.
  const c1 = cores1.length > 1 ? median(cores1.slice(1)) : new Error('no 1-session cores sample');
  const cN = coresN.length > 1 ? median(coresN.slice(1)) : new Error('no multi-session cores sample');
  const perIn = N.inFlight / N_HTTP.sessions;
  addRow(`HTTP proxy, 1 session (${N.inFlight} in flight): reads/s, stdio upstream`, undefined, tp1, 'rps');
  addRow(`HTTP proxy, ${N_HTTP.sessions} sessions (${perIn} in flight each): aggregate reads/s`, undefined, tpN, 'rps');
  addRow('HTTP proxy cores used (CPU s / wall s from /proc), 1 session', undefined, c1, 'cores');
  addRow(`HTTP proxy cores used (CPU s / wall s from /proc), ${N_HTTP.sessions} sessions`, undefined, cN, 'cores');
  const numbers = [tp1, tpN, c1, cN].every((v) => typeof v === 'number' && v > 0);
  const scaling = numbers ? tpN / ((tp1 * cN) / c1) : new Error('HTTP session scaling: a run failed');
  addRow(
    `HTTP ${N_HTTP.sessions}-session scaling = tp(${N_HTTP.sessions}) / (tp(1) × cores(${N_HTTP.sessions}) / cores(1))`,
    undefined,
    scaling,
    'x',
    PROXY('≥ 0.9', (r) => r >= 0.9),
  );
  notes.add(
    `HTTP session scaling: ${N_HTTP.sessions} authenticated sessions on one gateway (stdio upstream, cache off) read ${N.throughput} reads in all, ${perIn} in flight each, against 1 session with ${N.inFlight} in flight (the same total), interleaved, median of ${N.throughputReps}. ` +
      '"Cores used" is the proxy process\'s CPU seconds (user + system, /proc/<pid>/stat) over the run\'s wall seconds: the gateway is one Node process, so its event loop gives it at most about one core (plus GC and libuv threads). ' +
      'The scaling ratio divides the 8-session throughput by the 1-session throughput scaled by the cores each run used; it is ≥ 1 when 8 sessions cost no more CPU per read than one.',
  );
  await closeHandles(many, viaStdio, stdioProxy);

  progress(`HTTP: ${N_HTTP.idleSessions} idle sessions`);
  // One principal holds them all: its session bound (100 by default) is raised above the count.
  const idleProxy = await attempt(() =>
    spawnHttpProxy({ command: process.execPath, args: [FIXTURE, ...BASE_ARGS] }, { ...noCache, http: { maxSessionsPerPrincipal: 2 * N_HTTP.idleSessions } }),
  );
  const settle = await on(idleProxy, (p) => connectSettledHttp('HTTP proxy client', p));
  const idle = await on(idleProxy, (p) => idleSessionsRss(p));
  const rssTarget = PROXY('≤ 120 MB', (mb) => mb <= 120);
  addRow('HTTP proxy RSS (VmRSS) after 1 session and one full list, before the idle sessions', undefined, pick(idle, 'before'), 'mb');
  addRow(
    `HTTP proxy RSS (VmRSS) with ${N_HTTP.idleSessions} more idle sessions (each: initialize + one list page)`,
    undefined,
    pick(idle, 'rss'),
    'mb',
    rssTarget,
  );
  addRow(`HTTP proxy peak RSS (VmHWM) by then`, undefined, pick(idle, 'peak'), 'mb');
  await closeHandles(settle, idleProxy);
};

/** `BENCH_PHASES=read,list` runs only those phases (read, modern, access, fanout, list, startup, extras, http, cluster); default: all. */
const PHASES = new Set((process.env.BENCH_PHASES ?? 'read,modern,access,fanout,list,startup,extras,http,cluster').split(',').map((p) => p.trim()));

const main = async () => {
  progress(existsSync(CLI) ? `proxy: ${CLI}` : `proxy: ${CLI} missing, proxy columns will be n/a`);
  const subscribeArgs = ['--subscribe'];
  const direct = await spawnFixture(subscribeArgs);
  if (PHASES.has('read')) {
    // The relay rows measure the read path itself, so that proxy runs with its cache off.
    const relayProxy = await attempt(() => spawnSettledProxy({ bench: subscribeArgs }, { cache: { enabled: false } }));
    const ceiling = await attempt(() => spawnCeiling(subscribeArgs));
    await readPhase(direct, relayProxy, ceiling);
    await closeHandles(relayProxy, ceiling);
    await callPhase();
  }
  if (PHASES.has('modern')) await modernPhase();
  if (PHASES.has('access')) await accessPhase();
  if (PHASES.has('fanout')) await fanoutPhase();
  if (PHASES.has('list')) await listPhase();
  if (PHASES.has('startup')) await startupPhase();
  if (PHASES.has('extras')) {
    // Ticks come back to back, which is a burst by definition: coalescing is off so the relay row
    // measures the relay itself, not the coalescing window.
    // Coherence is off too: each control read has a unique URI, and a coherence subscription before
    // each of those cold reads would be measured as relay latency. Reads are reused for 5 minutes
    // (the cache is transparent by default), so the cached-read row measures hits.
    const proxy = await attempt(() =>
      spawnSettledProxy({ bench: subscribeArgs }, { subscriptions: { coalesceMs: 0 }, cache: { coherentUris: 0, ttlMs: 300_000 } }),
    );
    await extrasPhase(direct, proxy);
  }
  if (PHASES.has('http')) await httpPhase();
  if (PHASES.has('cluster')) {
    const { clusterPhase } = await import('./cluster.mjs');
    const toolbox = {
      N,
      tmp,
      ROOT,
      FIXTURE,
      BASE_ARGS,
      HTTP_TOKEN,
      textUris,
      pool,
      now,
      addRow,
      notes,
      progress,
      RATIO,
      PROXY,
      interleavedMedians,
      spawnHttpProxy,
    };
    await attempt(() => clusterPhase(toolbox)).then((e) => e instanceof Error && addRow('cluster phase', undefined, e, 'rps'));
  }
  await closeAll();
  const report = renderReport();
  writeFileSync(RESULTS, report);
  process.stdout.write(`${report}\n`);
};

// The SDK v1 HTTP client passes one AbortSignal to every fetch, and undici removes its abort listener
// only when the request is garbage-collected: past 1500 listeners Node prints one
// MaxListenersExceededWarning per read, thousands per HTTP run. Those are dropped; other warnings print.
process.removeAllListeners('warning');
process.on('warning', (w) => {
  if (w.name !== 'MaxListenersExceededWarning') process.stderr.write(`${w.stack ?? w}\n`);
});

const onSignal = (signal) => {
  closeAll().finally(() => process.exit(signal === 'SIGINT' ? 130 : 143));
};
process.on('SIGINT', onSignal);
process.on('SIGTERM', onSignal);
process.on('exit', () => {
  killLeftovers();
  rmSync(tmp, { recursive: true, force: true });
});

const started = now();
try {
  await main();
  progress(`done in ${((now() - started) / 1000).toFixed(1)} s, wrote ${RESULTS}`);
} catch (e) {
  process.stderr.write(`[bench] failed: ${e?.stack ?? e}\n`);
  process.exitCode = 1;
} finally {
  await closeAll();
}
