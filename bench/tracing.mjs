// Micro-benchmark of what tracing costs a read in-process, piece by piece: no SDK, the context manager's promise hooks alone, the SERVER span, both spans (`npm run build` first).
import { spawnSync } from 'node:child_process';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const N = { reads: Number(process.env.BENCH_READS ?? 100_000), inFlight: 32, reps: Number(process.env.BENCH_REPS ?? 5), awaits: 16 };

/**
 * Each variant runs in its own process, since neither an SDK nor the promise hooks can be taken back:
 * - `none`: no SDK, as a gateway without one (tracing() is false, nothing is traced);
 * - `hooks`: no SDK, but `AsyncLocalStorage` entered once, as the SDK's span processors do at their
 *   first export (`context.with` around it): from then on Node 20 runs promise hooks on every promise;
 * - `server`: the OTel Node SDK as bench/metrics.mjs loads it (`BatchSpanProcessor`, an exporter
 *   that drops every span), the SERVER span only;
 * - `both`: the same SDK, the SERVER span and the upstream request's CLIENT span, as a read makes;
 * - `sampled`: as `both`, with a sampler that records one trace in ten (`parentbased_traceidratio`, 0.1).
 */
const VARIANTS = ['none', 'hooks', 'server', 'both', 'sampled'];

async function child(variant) {
  if (variant === 'hooks') new (await import('node:async_hooks')).AsyncLocalStorage().run(1, () => undefined);
  if (variant !== 'none' && variant !== 'hooks') {
    const sdk = await import(join(ROOT, 'node_modules/@opentelemetry/sdk-trace-node/build/src/index.js'));
    const drop = { export: (_spans, done) => done({ code: 0 }), shutdown: async () => undefined };
    const sampler = variant === 'sampled' ? new sdk.ParentBasedSampler({ root: new sdk.TraceIdRatioBasedSampler(0.1) }) : undefined;
    new sdk.NodeTracerProvider({ sampler, spanProcessors: [new sdk.BatchSpanProcessor(drop)] }).register();
  }
  const t = await import(join(ROOT, 'dist/observe/tracing.js'));
  /** The gateway's read, reduced to its shape: a few turns of work, the upstream request answered on a later turn, a few more. */
  const work = async (n) => {
    for (let i = 0; i < n; i++) await null;
  };
  const answer = (params) => new Promise((done) => setImmediate(() => done({ contents: [{ uri: params.uri, text: 'x'.repeat(1024) }] })));
  const read = async (i) => {
    const params = { uri: `docs+fixture://res/${i % 500}` };
    const run = async () => {
      await work(N.awaits / 2);
      const upstream = { uri: `fixture://res/${i % 500}` };
      const result = variant !== 'server' ? await t.traceUpstream(t.activeContext(), 'docs', 'resources/read', upstream, answer) : await answer(upstream);
      await work(N.awaits / 2);
      return result;
    };
    const request = { method: 'resources/read', params, id: i, session: () => 'session-1', protocolVersion: '2025-11-25' };
    return t.tracing() ? t.traceDownstream(request, run) : run();
  };
  const pool = async (total) => {
    let next = 0;
    await Promise.all(
      Array.from({ length: N.inFlight }, async () => {
        while (next < total) await read(next++);
      }),
    );
  };
  await pool(20_000); // warm-up
  const rounds = [];
  for (let rep = 0; rep < N.reps; rep++) {
    const cpu0 = process.cpuUsage();
    await pool(N.reads);
    const cpu = process.cpuUsage(cpu0);
    rounds.push((cpu.user + cpu.system) / N.reads);
  }
  process.stdout.write(JSON.stringify(rounds));
}

if (process.argv[2]) {
  await child(process.argv[2]);
} else {
  const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  const lines = [`CPU per read in-process (median of ${N.reps} rounds of ${N.reads} reads, ${N.inFlight} in flight; each variant in its own process)`];
  let base;
  for (const variant of VARIANTS) {
    const run = spawnSync(process.execPath, [fileURLToPath(import.meta.url), variant], { encoding: 'utf8' });
    if (run.status !== 0) throw new Error(`${variant}: ${run.stderr}`);
    const rounds = JSON.parse(run.stdout);
    const us = median(rounds);
    base ??= us;
    lines.push(`${variant.padEnd(7)} ${us.toFixed(2).padStart(6)} µs/read (+${(us - base).toFixed(2)})   rounds: ${rounds.map((x) => x.toFixed(2)).join(' ')}`);
  }
  process.stdout.write(`${lines.join('\n')}\n`);
}
