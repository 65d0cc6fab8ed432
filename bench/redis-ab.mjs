// A/B of one gateway with and without the `redis` block: gateway CPU per cached 2026 read (schedstat), alternating pairs, order swapped every pair.
// Usage: node bench/redis-ab.mjs [pairs=6] [reads=5000] [warm=6000] (after npm run build). Env: AB_LIMIT=0 drops the read limit; AB_PROF=dir adds
// --cpu-prof to both gateways; AB_WARM_WITHOUT=n warms the side without Redis with n reads instead; AB_IDLE_MS=n idles both after the warm-up;
// AB_ORDER=fixed always runs the side without Redis first; AB_NODE_FLAGS='--flag …' passes V8/Node flags to both gateways. See docs/scale-out.md (What the block costs one gateway).
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { connectLightModern } from './light-http.mjs';
import { freePort } from './free-port.mjs';
import { cpuMs } from './proc-cpu.mjs';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const CLI = join(ROOT, 'dist/cli.js');
const FIXTURE = join(ROOT, 'test/fixtures/catalog-server.mjs');
const TOKEN = 'bench-token-0123456789abcdef';
const [pairs = 6, reads = 5000, warm = 6000] = process.argv.slice(2).map(Number);
const IN_FLIGHT = 32;
const tmp = mkdtempSync(join(tmpdir(), 'redis-ab-'));

const pool = async (total, concurrency, task) => {
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < total) await task(next++);
    }),
  );
};
const children = [];
const start = (command, args, ready) =>
  new Promise((res, rej) => {
    const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    children.push(child);
    let tail = '';
    for (const s of [child.stdout, child.stderr])
      createInterface({ input: s }).on('line', (line) => {
        tail = (tail + line + '\n').slice(-2000);
        const got = ready(line);
        if (got) res({ pid: child.pid, child, ...got });
      });
    child.once('exit', (code) => rej(new Error(`exited ${code}: ${tail}`)));
  });

const redisBin = spawnSync('sh', ['-c', 'command -v redis-server || ls /usr/bin/redis-server'], { encoding: 'utf8' }).stdout.trim();
const redisPort = await freePort();
const redis = await start(redisBin, ['--port', String(redisPort), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', tmp], (l) =>
  /Ready to accept connections/.test(l) ? {} : undefined,
);
let seq = 0;
const gateway = (extra) => {
  const file = join(tmp, `config-${seq++}.json`);
  const config = {
    cache: { ttlMs: 600_000 },
    ...(process.env.AB_LIMIT === '0' ? {} : { limits: { reads: [{ readsPerMinute: 60_000_000, burst: 1_000_000 }] } }),
    ...extra,
    auth: { tokens: [{ principal: 'bench', token: TOKEN }] },
    servers: { bench: { command: process.execPath, args: [FIXTURE, '--resources', '1000', '--page-size', '100', '--size', '1024'] } },
  };
  writeFileSync(file, JSON.stringify(config));
  const prof = process.env.AB_PROF
    ? ['--cpu-prof', `--cpu-prof-dir=${process.env.AB_PROF}`, `--cpu-prof-name=${extra.redis ? 'with' : 'without'}.cpuprofile`]
    : [];
  let url;
  return start(
    process.execPath,
    [...prof, ...(process.env.AB_NODE_FLAGS?.split(' ').filter(Boolean) ?? []), CLI, 'serve', '--http', '--port', '0', '--config', file, '--log-level', 'info'],
    (line) => {
      try {
        const r = JSON.parse(line);
        if (r.msg === 'listening') url = r.url;
        if (r.msg === 'upstreams started' && url) return { url };
      } catch {
        // not a JSON log line
      }
      return undefined;
    },
  );
};
const sides = {
  without: await gateway({}),
  with: await gateway({ redis: { url: `redis://127.0.0.1:${redisPort}`, keyPrefix: 'ab:', replicas: 3, chain: 's1' } }),
};
const uris = Array.from({ length: 50 }, (_, i) => `bench+fixture://res/${i}`);
for (const s of Object.values(sides)) s.client = connectLightModern(s.url, { token: TOKEN, maxSockets: IN_FLIGHT });
const runOn = (s, n) => pool(n, IN_FLIGHT, (i) => s.client.readResource({ uri: uris[i % uris.length] }));
await runOn(sides.without, Number(process.env.AB_WARM_WITHOUT ?? warm));
await runOn(sides.with, warm);
if (process.env.AB_IDLE_MS) await new Promise((r) => setTimeout(r, Number(process.env.AB_IDLE_MS)));
const results = { without: [], with: [] };
const measure = async (name) => {
  const s = sides[name];
  const g0 = cpuMs(s.pid);
  const r0 = cpuMs(redis.pid);
  const t0 = performance.now();
  await runOn(s, reads);
  const wall = performance.now() - t0;
  results[name].push({ us: ((cpuMs(s.pid) - g0) * 1000) / reads, redisUs: ((cpuMs(redis.pid) - r0) * 1000) / reads, rps: reads / (wall / 1000) });
};
for (let p = 0; p < pairs; p++) {
  const order = p % 2 === 0 || process.env.AB_ORDER === 'fixed' ? ['without', 'with'] : ['with', 'without'];
  for (const name of order) await measure(name);
  const last = (n) => results[n].at(-1);
  console.log(
    `pair ${p + 1} (${order.join(' then ')}): without ${last('without').us.toFixed(1)} µs ${Math.round(last('without').rps)}/s | with ${last('with').us.toFixed(1)} µs ${Math.round(last('with').rps)}/s, redis ${last('with').redisUs.toFixed(1)} µs`,
  );
}
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const summary = (name, k) =>
  `${median(results[name].map((r) => r[k])).toFixed(1)} (${Math.min(...results[name].map((r) => r[k])).toFixed(1)}–${Math.max(...results[name].map((r) => r[k])).toFixed(1)})`;
console.log(`gateway µs/read: without ${summary('without', 'us')}, with ${summary('with', 'us')}`);
console.log(
  `reads/s: without ${summary('without', 'rps')}, with ${summary('with', 'rps')}; redis µs/read during with: ${summary('with', 'redisUs')}, during without: ${summary('without', 'redisUs')}`,
);
const ratios = results.with.map((r, i) => r.us / results.without[i].us);
console.log(`pairwise with/without CPU: ${ratios.map((r) => r.toFixed(2)).join(' ')}; median ${median(ratios).toFixed(2)}`);
for (const s of Object.values(sides)) await s.client.close();
for (const c of children.reverse()) {
  const exited = new Promise((r) => c.once('exit', r));
  c.kill('SIGTERM');
  await exited;
}
