// Benchmark phase for issue 19: reads/s and proxy CPU per read with metrics off, metrics on, metrics on with promise hooks alone, and metrics on with the OTel SDK (no-op exporter) loaded.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { cpuMs } from './proc-cpu.mjs';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const FIXTURE = join(ROOT, 'test/fixtures/catalog-server.mjs');
const CLI = join(ROOT, 'dist/cli.js');
const N = { reads: Number(process.env.BENCH_READS ?? 5000), inFlight: 32, reps: Number(process.env.BENCH_REPS ?? 5), uris: 500 };

const tmp = mkdtempSync(join(tmpdir(), 'mcp-federate-bench-metrics-'));
/** A register file that loads the OTel Node SDK as an operator would (batching), with an exporter that drops every span. */
const OTEL = join(tmp, 'otel.mjs');
writeFileSync(
  OTEL,
  `import { NodeTracerProvider, BatchSpanProcessor } from '${join(ROOT, 'node_modules/@opentelemetry/sdk-trace-node/build/src/index.js')}';
const drop = { export: (_spans, done) => done({ code: 0 }), shutdown: async () => {} };
new NodeTracerProvider({ spanProcessors: [new BatchSpanProcessor(drop)] }).register();
`,
);

/** A register file that only enters AsyncLocalStorage once, as the SDK's span processors do at their first export: Node 20 then runs promise hooks on every promise. */
const HOOKS = join(tmp, 'hooks.mjs');
writeFileSync(HOOKS, `import { AsyncLocalStorage } from 'node:async_hooks';\nnew AsyncLocalStorage().run(1, () => undefined);\n`);

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const pool = async (total, concurrency, task) => {
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < total) await task(next++);
    }),
  );
};

// BENCH_PROF=<dir> profiles every gateway (--cpu-prof, one file per pid, printed below); BENCH_NODE_ARGS adds node flags to each (e.g. `--import ./count.mjs`).
const EXTRA_NODE_ARGS = [
  ...(process.env.BENCH_PROF ? ['--cpu-prof', '--cpu-prof-dir', process.env.BENCH_PROF] : []),
  ...(process.env.BENCH_NODE_ARGS?.split(' ').filter(Boolean) ?? []),
];

/** Starts the proxy over stdio with `metrics` (and `nodeArgs`), reads until settled, and returns the client and the proxy's pid. */
async function start(variant) {
  const config = {
    servers: { bench: { command: process.execPath, args: [FIXTURE, '--resources', String(N.uris), '--size', '1024'] } },
    metrics: variant.metrics,
  };
  const file = join(tmp, `${variant.name}.json`);
  writeFileSync(file, JSON.stringify(config));
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [...variant.nodeArgs, ...EXTRA_NODE_ARGS, CLI, '--config', file, '--log-level', 'warn'],
    stderr: 'ignore',
  });
  const client = new Client({ name: 'bench-metrics', version: '1.0.0' });
  await client.connect(transport);
  await client.readResource({ uri: 'bench+fixture://res/0' });
  return { client, pid: transport.pid };
}

const ALL = [
  { name: 'off', metrics: false, nodeArgs: [] },
  { name: 'off-again', metrics: false, nodeArgs: [] }, // a second 'off': the noise floor between two identical gateways
  { name: 'on', metrics: { listen: '127.0.0.1:0' }, nodeArgs: [] },
  { name: 'on-noproc', metrics: { listen: '127.0.0.1:0', processMetrics: false }, nodeArgs: [] },
  { name: 'on+hooks', metrics: { listen: '127.0.0.1:0' }, nodeArgs: ['--import', HOOKS] }, // the promise hooks' share of on+otel, without the SDK
  { name: 'on+otel', metrics: { listen: '127.0.0.1:0' }, nodeArgs: ['--import', OTEL] },
];
// BENCH_VARIANTS=off,on picks some.
const variants = process.env.BENCH_VARIANTS ? ALL.filter((v) => process.env.BENCH_VARIANTS.split(',').includes(v.name)) : ALL;
const handles = {};
for (const v of variants) handles[v.name] = await start(v);
// One unmeasured round each, so the JIT has settled before the first measured one.
for (const v of variants) await pool(N.reads, N.inFlight, (i) => handles[v.name].client.readResource({ uri: `bench+fixture://res/${i % N.uris}` }));
const results = Object.fromEntries(variants.map((v) => [v.name, { rps: [], cpu: [] }]));
// Alternating rounds, so the shared machine's noise falls on every variant alike.
for (let rep = 0; rep < N.reps; rep++) {
  for (const v of rep % 2 === 0 ? variants : [...variants].reverse()) {
    const { client, pid } = handles[v.name];
    const cpu0 = cpuMs(pid);
    const t0 = performance.now();
    await pool(N.reads, N.inFlight, (i) => client.readResource({ uri: `bench+fixture://res/${i % N.uris}` }));
    const ms = performance.now() - t0;
    results[v.name].rps.push(N.reads / (ms / 1000));
    results[v.name].cpu.push(((cpuMs(pid) - cpu0) * 1000) / N.reads);
  }
}
if (EXTRA_NODE_ARGS.length > 0) process.stdout.write(`gateway pids: ${variants.map((v) => `${v.name} ${handles[v.name].pid}`).join(', ')}\n`);
for (const v of variants) await handles[v.name].client.close();
rmSync(tmp, { recursive: true, force: true });

const base = results[variants[0].name]; // ratios against the first variant run (normally off)
const off = { rps: median(base.rps), cpu: median(base.cpu) };
// Paired: each round's figure over the base's in the same round (run back to back), so load that drifts between rounds cancels.
const paired = (name, key) => median(results[name][key].map((x, i) => x / base[key][i]));
const lines = [
  `reads/s and proxy CPU per read (median of ${N.reps} alternating rounds of ${N.reads} uncached reads, ${N.inFlight} in flight, stdio; "paired": median of the per-round ratios to base)`,
];
for (const v of variants) {
  const rps = median(results[v.name].rps);
  const cpu = median(results[v.name].cpu);
  lines.push(
    `${v.name.padEnd(10)} ${rps.toFixed(0).padStart(6)} reads/s (${(rps / off.rps).toFixed(3)}x base, paired ${paired(v.name, 'rps').toFixed(3)})   ${cpu.toFixed(1).padStart(6)} µs CPU/read (${(cpu / off.cpu).toFixed(3)}x base, paired ${paired(v.name, 'cpu').toFixed(3)})   CPU rounds: ${results[v.name].cpu.map((x) => x.toFixed(1)).join(' ')}`,
  );
}
process.stdout.write(`${lines.join('\n')}\n`);
