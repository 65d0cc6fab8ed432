// Bench tool: what an idle 2025-11-25 HTTP session costs the gateway. Starts the built CLI (serve --http, one stdio catalog
// upstream, as the bench's http phase), opens N sessions 10 at a time (initialize, then one list page unless LIST=0), and prints
// RSS and V8 heap figures before and after, per session, and after a full GC (the gateway runs with --expose-gc for that last one).
// Env: N (100), MODE=sdk (SDK v1 client, which opens a GET stream, as the bench) | light (bench/light-http.mjs, no GET stream),
// LIST=0, SNAP=1 (heap snapshots before/after, kept in the printed directory), GW_NODE_ARGS (more node flags for the gateway), ROOT.
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { setTimeout as delay } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { connectLight } from './light-http.mjs';

const HERE = dirname(fileURLToPath(import.meta.url));
const ROOT = process.env.ROOT ?? resolve(HERE, '..');
const N = Number(process.env.N ?? 100);
const MODE = process.env.MODE ?? 'sdk';
const LIST = process.env.LIST !== '0';
const SNAP = process.env.SNAP === '1';
const TOKEN = 'bench-token-0123456789abcdef';
const dir = mkdtempSync(join(tmpdir(), 'idle-sessions-'));
const config = join(dir, 'config.json');
const fixture = join(ROOT, 'test/fixtures/catalog-server.mjs');
writeFileSync(
  config,
  JSON.stringify({
    cache: { enabled: false },
    http: { maxSessions: 2 * N + 10, maxSessionsPerPrincipal: 2 * N + 10 },
    auth: { tokens: [{ principal: 'bench', token: TOKEN }] },
    servers: { bench: { command: process.execPath, args: [fixture, '--resources', '1000', '--page-size', '100', '--size', '1024'] } },
  }),
);
const nodeArgs = ['--expose-gc', ...(process.env.GW_NODE_ARGS ?? '').split(' ').filter(Boolean), '--import', join(HERE, 'memory-probe.mjs')];
const cli = join(ROOT, 'dist/cli.js');
const child = spawn(process.execPath, [...nodeArgs, cli, 'serve', '--http', '--port', '0', '--config', config, '--log-level', 'info'], {
  stdio: ['ignore', 'pipe', 'pipe'],
  env: { ...process.env, MCP_FEDERATE_PROBE_DIR: dir },
});
let url;
let ready = false;
await new Promise((resolve, reject) => {
  child.once('exit', (code) => reject(new Error(`gateway exited (${code})`)));
  for (const stream of [child.stdout, child.stderr]) {
    createInterface({ input: stream }).on('line', (line) => {
      try {
        const record = JSON.parse(line);
        if (record.msg === 'listening') url = record.url;
        if (record.msg === 'upstreams started') ready = true;
      } catch {
        // not a log record
      }
      if (url && ready) resolve();
    });
  }
});
const mb = (bytes) => +(bytes / 1048576).toFixed(2);
const status = (key) => +(Number(readFileSync(`/proc/${child.pid}/status`, 'utf8').match(new RegExp(`${key}:\\s+(\\d+)`))[1]) / 1024).toFixed(2);
const signalled = async (signal, file) => {
  rmSync(file, { force: true });
  child.kill(signal);
  while (!existsSync(file)) await delay(20);
  await delay(20);
  return readFileSync(file, 'utf8');
};
const memory = async () => {
  const m = JSON.parse(await signalled('SIGUSR2', join(dir, `mem-${child.pid}.json`)));
  const spaces = Object.fromEntries(Object.entries(m.spaces).map(([k, v]) => [k.replace('_space', ''), `${mb(v.used)}/${mb(v.size)}`]));
  return { rss: status('VmRSS'), hwm: status('VmHWM'), heapUsed: mb(m.heapUsed), heapTotal: mb(m.heapTotal), external: mb(m.external), spaces };
};
const snapshot = async (tag) => console.log(`heap snapshot ${tag}: ${await signalled('SIGWINCH', join(dir, `snap-${child.pid}`))}`);
const open = async () => {
  if (MODE === 'light') {
    const c = await connectLight(url, { token: TOKEN, maxSockets: 1 });
    if (LIST) await c.listResources();
    return c;
  }
  const transport = new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers: { authorization: `Bearer ${TOKEN}` } } });
  const c = new Client({ name: 'idle-sessions', version: '1.0.0' });
  await c.connect(transport);
  if (LIST) await c.listResources();
  return c;
};

// One settled session with a full list first, as the bench's row "after 1 session and one full list".
const first = await open();
for (let cursor = (await first.listResources()).nextCursor; cursor;) cursor = (await first.listResources({ cursor })).nextCursor;
await delay(2000);
const before = await memory();
if (SNAP) await snapshot('before');
const clients = [];
for (let i = 0; i < N; i += 10) clients.push(...(await Promise.all(Array.from({ length: Math.min(10, N - i) }, open))));
await delay(2000);
const after = await memory();
if (SNAP) await snapshot('after');
const collected = JSON.parse(await signalled('SIGURG', join(dir, `gc-${child.pid}.json`)));
const perSessionKb = (key) => +(((after[key] - before[key]) * 1024) / N).toFixed(1);
console.log(
  JSON.stringify({
    mode: MODE,
    n: N,
    list: LIST,
    before,
    after,
    perSessionKb: { rss: perSessionKb('rss'), heapUsed: perSessionKb('heapUsed'), heapTotal: perSessionKb('heapTotal') },
    afterFullGc: { rss: status('VmRSS'), heapUsed: mb(collected.heapUsed), heapTotal: mb(collected.heapTotal) },
  }),
);
await Promise.all([...clients, first].map((c) => c.close().catch(() => undefined)));
child.kill('SIGTERM');
await new Promise((resolve) => child.once('exit', resolve));
if (SNAP) console.log(`snapshots kept in ${dir}`);
else rmSync(dir, { recursive: true, force: true });
