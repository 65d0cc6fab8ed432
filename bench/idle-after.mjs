// Bench-only: CPU per uncached read of a stdio relay in windows of reads, before and after idle gaps (see docs/idle-cost.md).
// Usage: node bench/idle-after.mjs (after npm run build). Env: MODE=bin (dist/cli.js as shipped, its shebang's V8 flags) | node (node dist/cli.js,
// Node's defaults) | ceiling (bench/ceiling-relay.mjs) | direct (the fixture alone); GAPS=10,30,45,60,90 (s); WIN=2000 reads per window;
// BEFORE=3 and AFTER=6 windows per gap; WARM=20000; NODEARGS='--flag …' (node and direct/ceiling modes); SERVER='{"pingIntervalMs":0}' (merged
// into the gateway's server entry); OUT=<file> appends one JSON line per window; CONFIG=<name> labels them. V8 trace lines the measured process
// writes on stdout (--trace-deopt) go to $IDLE_TRACE, tagged with the window or gap they came in.
import { spawn } from 'node:child_process';
import { appendFileSync, existsSync, mkdtempSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const env = process.env;
const MODE = env.MODE ?? 'bin';
const GAPS = (env.GAPS ?? '10,30,45,60,90').split(',').map(Number);
const [WIN, BEFORE, AFTER, WARM] = [Number(env.WIN ?? 2000), Number(env.BEFORE ?? 3), Number(env.AFTER ?? 6), Number(env.WARM ?? 20000)];
const IN_FLIGHT = 32;
const NODEARGS = env.NODEARGS ? env.NODEARGS.split(' ') : [];
const FIXTURE = [join(ROOT, 'test/fixtures/catalog-server.mjs'), '--resources', '500', '--size', '1024'];
const tmp = mkdtempSync(join(tmpdir(), 'idle-after-'));
const probe = ['--import', join(ROOT, 'bench/idle-gc-probe.mjs')];

let command = process.execPath;
let args;
let prefix = 'bench+fixture://res/';
if (MODE === 'bin' || MODE === 'node') {
  const server = {
    command: process.execPath,
    args: FIXTURE,
    ...JSON.parse(env.SERVER ?? '{}'),
  };
  writeFileSync(join(tmp, 'config.json'), JSON.stringify({ servers: { bench: server }, cache: { enabled: false } }));
  const cli = [join(ROOT, 'dist/cli.js'), '--config', join(tmp, 'config.json'), '--log-level', 'warn'];
  // As shipped, the shebang's flags apply; the probe then comes through NODE_OPTIONS (which the gateway keeps from its stdio children).
  if (MODE === 'bin') [command, args] = [cli[0], cli.slice(1)];
  else args = [...probe, ...NODEARGS, ...cli];
} else if (MODE === 'ceiling') args = [...probe, ...NODEARGS, join(ROOT, 'bench/ceiling-relay.mjs'), process.execPath, ...FIXTURE];
else [args, prefix] = [[...probe, ...NODEARGS, ...FIXTURE], 'fixture://res/'];
const childEnv = {
  ...env,
  IDLE_GC_DIR: tmp,
  ...(MODE === 'bin' ? { NODE_OPTIONS: probe.join(' ') } : {}),
};
const proc = spawn(command, args, {
  env: childEnv,
  stdio: ['pipe', 'pipe', 'ignore'],
});

const tasksOf = (pid) => readdirSync(`/proc/${pid}/task`).map((t) => readFileSync(`/proc/${pid}/task/${t}/schedstat`, 'utf8').split(' '));
/** CPU time of every thread of `pid` in µs (schedstat), 0 without a pid. */
const cpuUs = (pid) => (pid ? tasksOf(pid).reduce((sum, f) => sum + Number(f[0]), 0) / 1e3 : 0);
const minorFaults = (pid) => {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[7]);
};
const firstChild = (pid) => Number(readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(' ')[0]) || 0;

let phase = 'warm';
let rest = '';
const waiters = new Map();
proc.stdout.setEncoding('utf8');
proc.stdout.on('data', (chunk) => {
  const text = rest + chunk;
  const end = text.lastIndexOf('\n');
  if (end === -1) return void (rest = text);
  rest = text.slice(end + 1);
  for (const line of text.slice(0, end).split('\n')) {
    if (!line.startsWith('{')) {
      if (line && env.IDLE_TRACE) appendFileSync(env.IDLE_TRACE, `[${phase}] ${line}\n`);
      continue;
    }
    const message = JSON.parse(line);
    waiters.get(message.id)?.(message);
    waiters.delete(message.id);
  }
});
let nextId = 0;
const request = (method, params) =>
  new Promise((done) => {
    const id = ++nextId;
    waiters.set(id, done);
    proc.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', id, method, params })}\n`);
  });
const opened = await request('initialize', {
  protocolVersion: '2025-11-25',
  capabilities: {},
  clientInfo: { name: 'idle-after', version: '1' },
});
if (!opened.result) throw new Error(JSON.stringify(opened));
proc.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' })}\n`);
const child = MODE === 'direct' ? 0 : firstChild(proc.pid);

let failed = 0;
const reads = async (n) => {
  let next = 0;
  const lane = async () => {
    while (next < n) if (!(await request('resources/read', { uri: prefix + (next++ % 500) })).result) failed++;
  };
  await Promise.all(Array.from({ length: IN_FLIGHT }, lane));
};
/** The measured process's GC totals, asked for by SIGUSR2 (outside the measured span). */
const gcTotals = async () => {
  const file = join(tmp, `gc-${proc.pid}.json`);
  const seq = existsSync(file) ? JSON.parse(readFileSync(file, 'utf8')).seq : 0;
  process.kill(proc.pid, 'SIGUSR2');
  for (let i = 0; i < 1000; i++) {
    await new Promise((r) => setTimeout(r, 1));
    try {
      const totals = JSON.parse(readFileSync(file, 'utf8'));
      if (totals.seq > seq) return totals;
    } catch {
      // not written yet
    }
  }
  throw new Error('the GC probe did not answer');
};

const rows = [];
let gapEnd = 0;
const window = async (label, k) => {
  phase = `${label} w${k}`;
  const g0 = await gcTotals();
  const [c0, u0, f0, t0] = [cpuUs(proc.pid), cpuUs(child), minorFaults(proc.pid), performance.now()];
  await reads(WIN);
  const [c1, u1, f1, t1] = [cpuUs(proc.pid), cpuUs(child), minorFaults(proc.pid), performance.now()];
  const g1 = await gcTotals();
  const row = {
    config: env.CONFIG ?? MODE,
    label,
    k,
    sinceGapMs: Math.round(t0 - gapEnd),
    cpu: +((c1 - c0) / WIN).toFixed(1),
    child: +((u1 - u0) / WIN).toFixed(1),
    gcUs: +(((g1.ms - g0.ms) * 1000) / WIN).toFixed(1),
    minor: g1.minor - g0.minor,
    major: g1.major - g0.major,
    newMB: +(g1.newSpace / 1048576).toFixed(1),
    minflt: f1 - f0,
    wallMs: Math.round(t1 - t0),
    load: readFileSync('/proc/loadavg', 'utf8').split(' ')[0],
  };
  rows.push(row);
  if (env.OUT) appendFileSync(env.OUT, `${JSON.stringify(row)}\n`);
  const fields = `cpu ${row.cpu} µs/read, upstream ${row.child}, GC ${row.gcUs} µs/read, ${row.minor} scavenges, ${row.major} mark-compacts, new space ${row.newMB} MB, ${row.minflt} minor faults, ${row.wallMs} ms, load ${row.load}`;
  console.log(`${label.padEnd(9)} w${k} +${String(row.sinceGapMs).padStart(6)} ms: ${fields}`);
};

await reads(WARM);
for (const gap of GAPS) {
  for (let k = 0; k < BEFORE; k++) await window(`before${gap}`, k);
  phase = `gap${gap}`;
  await new Promise((r) => setTimeout(r, gap * 1000));
  gapEnd = performance.now();
  for (let k = 0; k < AFTER; k++) await window(`after${gap}`, k);
}
const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};
// Per gap: the windows before it (their median is the baseline), the first windows after it, and the CPU spent above the baseline after it.
for (const gap of GAPS) {
  const base = median(rows.filter((r) => r.label === `before${gap}`).map((r) => r.cpu));
  const after = rows.filter((r) => r.label === `after${gap}`).map((r) => r.cpu);
  const excessMs = (after.reduce((sum, cpu) => sum + cpu - base, 0) * WIN) / 1000;
  console.log(
    `gap ${gap} s: baseline ${base} µs/read; after: ${after.join(', ')} (first ${(after[0] / base).toFixed(2)}×); ${excessMs.toFixed(0)} ms of CPU above the baseline`,
  );
}
if (failed) console.log(`${failed} reads failed`);
proc.kill();
