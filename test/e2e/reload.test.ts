// Reloads through the built CLI: weakenings unsaid are refused, --watch follows every kind of save, servers edits apply, reload --check.
import { readFileSync, renameSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { ResourceListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { postRpc } from '../helpers/raw-http.js';
import { initializeRequest } from '../helpers/rpc-messages.js';
import { runCli, type StdioUpstream, upstreams } from '../helpers/built-cli.js';
import { listAll, notFound } from '../helpers/catalog.js';
import { within } from '../helpers/gate.js';
import { HttpGatewayProcess } from '../helpers/http-gateway.js';
import { type LogRecord, parseLogLines, readJsonLines } from '../helpers/logs.js';
import { rpcError } from '../helpers/rpc-error.js';
import { ProxyProcess } from '../helpers/sdk-clients.js';
import { TempDir, withPatientLists } from '../helpers/temp-dir.js';

const ALICE = 'alice-token-0123456789abcdef';
const SERVERS = { fx: upstreams.fixture('--resources', '5') };
const STDIO = { principal: 'erin', roles: ['eng'] };
/** Only res/0 is readable. */
const POLICY = { default: 'deny', rules: [{ id: 'res-0', effect: 'allow', resources: ['fx+fixture://res/0'] }] };

const REFUSED = 'configuration reload refused: it would weaken security without saying so; keeping the running one';
const RELOADED = 'configuration reloaded';
const INVALID = 'configuration not reloaded: keeping the running one';

/** Resolves once `count` records match `predicate` (log events, never a sleep). */
function waitForCount(proxy: ProxyProcess, predicate: (r: LogRecord) => boolean, count: number, what: string): Promise<unknown> {
  return within(
    proxy.waitForLog(() => proxy.logs().filter(predicate).length >= count),
    what,
  );
}

/** Writes `config` the way most editors save: a temporary file in the same folder, renamed over the original. */
function saveByRename(file: string, config: unknown): void {
  const tmp = path.join(path.dirname(file), `.${path.basename(file)}.tmp-${process.pid}`);
  writeFileSync(tmp, JSON.stringify(withPatientLists(config), null, 2));
  renameSync(tmp, file);
}

function without(config: Record<string, unknown>, key: string): Record<string, unknown> {
  const { [key]: _dropped, ...rest } = config;
  return rest;
}

describe('reload refuses what would weaken security unsaid (SIGHUP)', () => {
  it('dropping policy, auth, audit or limits is refused one by one and all at once; policy, limits and audit still hold; the explicit form applies', async () => {
    using dir = new TempDir();
    const auditFile = dir.file('audit.jsonl');
    const full = {
      servers: SERVERS,
      stdio: STDIO,
      policy: POLICY,
      auth: { tokens: [{ principal: 'alice', token: ALICE }] },
      audit: { file: auditFile },
      limits: [{ readsPerMinute: 1, burst: 3 }],
    };
    const proxy = await ProxyProcess.start(full, { logLevel: 'info' });
    try {
      await proxy.client.readResource({ uri: 'fx+fixture://res/0' }); // 1 of the burst of 3
      let refusals = 0;
      for (const block of ['policy', 'auth', 'audit', 'limits']) {
        writeFileSync(proxy.configFile, JSON.stringify(withPatientLists(without(full, block))));
        process.kill(proxy.pid, 'SIGHUP');
        const record = await within(
          proxy.waitForLog((r) => r.msg === REFUSED && String(r.refused) === block),
          `the refusal naming ${block}`,
        );
        expect(record.level).toBe(50); // error
        refusals++;
      }
      writeFileSync(proxy.configFile, JSON.stringify(withPatientLists({ servers: SERVERS, stdio: STDIO })));
      process.kill(proxy.pid, 'SIGHUP');
      const all = await within(
        proxy.waitForLog((r) => r.msg === REFUSED && (r.refused as string[]).length === 4),
        'the refusal naming all four',
      );
      expect([...(all.refused as string[])].sort()).toEqual(['audit', 'auth', 'limits', 'policy']);
      expect(proxy.logs().filter((r) => r.msg === REFUSED)).toHaveLength(refusals + 1);
      expect(proxy.logs().some((r) => r.msg === RELOADED)).toBe(false);

      // The running configuration still holds: res/1 denied, the rate limit in force, every read audited.
      expect(await rpcError(proxy.client.readResource({ uri: 'fx+fixture://res/1' }))).toEqual(notFound('fx+fixture://res/1')); // 2 of 3
      await proxy.client.readResource({ uri: 'fx+fixture://res/0' }); // 3 of 3
      expect((await rpcError(proxy.client.readResource({ uri: 'fx+fixture://res/0' }))).message).toMatch(/Rate limit exceeded/);
      const reads = () => readJsonLines(auditFile).filter((r) => r.method === 'resources/read');
      expect(reads().map((r) => r.outcome)).toEqual(['ok', 'denied', 'ok', 'rate_limited']);

      // Spelled out, the same weakening applies.
      writeFileSync(proxy.configFile, JSON.stringify(withPatientLists({ ...full, policy: { default: 'allow' }, limits: false })));
      process.kill(proxy.pid, 'SIGHUP');
      const applied = await within(
        proxy.waitForLog((r) => r.msg === RELOADED),
        'the explicit reload',
      );
      expect(applied.changed).toEqual(['limits', 'policy']);
      for (let i = 0; i < 5; i++) await proxy.client.readResource({ uri: 'fx+fixture://res/1' }); // allowed, unlimited
    } finally {
      await proxy[Symbol.asyncDispose]();
    }
  });
});

/** The built CLI serving HTTP; stderr parsed as it comes. */
class Gateway extends HttpGatewayProcess {
  file!: string;

  static async start(config: unknown, args: string[]): Promise<Gateway> {
    const g = new Gateway();
    g.file = g.dir.writeConfig(config);
    await g.spawn(g.file, { logLevel: 'info', args });
    return g;
  }

  get port(): number {
    return Number(this.url.port);
  }

  waitForCount(predicate: (r: LogRecord) => boolean, count: number): Promise<LogRecord> {
    return this.waitForLog(() => parseLogLines(this.log).filter(predicate).length >= count);
  }

  reload(config: unknown): void {
    writeFileSync(this.file, JSON.stringify(withPatientLists(config)));
    this.process.kill('SIGHUP');
  }

  /** The status of an `initialize` POST with these headers. */
  async initialize(headers: Record<string, string> = {}): Promise<number> {
    const res = await postRpc(`http://127.0.0.1:${this.port}/mcp`, initializeRequest(), { headers: { host: `127.0.0.1:${this.port}`, ...headers } });
    await res.body?.cancel();
    return res.status;
  }
}

describe('reload refuses to serve anonymous callers unsaid (HTTP)', () => {
  const withAuth = { servers: SERVERS, auth: { tokens: [{ principal: 'alice', token: ALICE }] } };

  it('on a 0.0.0.0 bind a file without auth is refused, even with auth: false; anonymous callers still get 401', async () => {
    await using g = await Gateway.start(withAuth, ['--host', '0.0.0.0']);
    expect(await g.initialize()).toBe(401);
    g.reload({ servers: SERVERS });
    await g.waitForLog((r) => r.msg === REFUSED && String(r.refused) === 'auth');
    g.reload({ servers: SERVERS, auth: false });
    await g.waitForCount((r) => r.msg === REFUSED && String(r.refused) === 'auth' && String(r.reasons).includes('non-loopback'), 2);
    expect(await g.initialize()).toBe(401);
    expect(await g.initialize({ authorization: `Bearer ${ALICE}` })).toBe(200);
  });

  it('on loopback, dropping auth unsaid is refused; auth: false applies and serves "anonymous"', async () => {
    await using g = await Gateway.start(withAuth, []);
    g.reload({ servers: SERVERS });
    await g.waitForLog((r) => r.msg === REFUSED && String(r.refused) === 'auth');
    expect(await g.initialize()).toBe(401);
    g.reload({ servers: SERVERS, auth: false });
    const applied = await g.waitForLog((r) => r.msg === RELOADED);
    expect(applied.changed).toEqual(['auth']);
    expect(await g.initialize()).toBe(200);
  });
});

describe('--watch', () => {
  it('a two-step write never serves under the half-written file: the weaker first step is refused, the torn one is invalid, the whole one applies', async () => {
    const base = { servers: SERVERS, stdio: STDIO };
    const proxy = await ProxyProcess.start({ ...base, policy: POLICY }, { logLevel: 'info', args: ['--watch'] });
    try {
      const next = { ...base, policy: { default: 'deny', rules: [{ id: 'res-1', effect: 'allow', resources: ['fx+fixture://res/1'] }] } };
      // Step one of a writer that puts the servers first and the policy after: valid, but it drops the policy.
      writeFileSync(proxy.configFile, JSON.stringify(withPatientLists(base)));
      await within(
        proxy.waitForLog((r) => r.msg === REFUSED && String(r.refused) === 'policy' && r.why === 'file changed'),
        'the refusal',
      );
      expect(await rpcError(proxy.client.readResource({ uri: 'fx+fixture://res/1' }))).toEqual(notFound('fx+fixture://res/1'));
      // A torn write: half of the new file.
      const whole = JSON.stringify(withPatientLists(next), null, 2);
      writeFileSync(proxy.configFile, whole.slice(0, whole.length / 2));
      await within(
        proxy.waitForLog((r) => r.msg === INVALID && r.why === 'file changed'),
        'the invalid-file log',
      );
      expect(await rpcError(proxy.client.readResource({ uri: 'fx+fixture://res/1' }))).toEqual(notFound('fx+fixture://res/1'));
      await proxy.client.readResource({ uri: 'fx+fixture://res/0' });
      // Step two: the whole file.
      writeFileSync(proxy.configFile, whole);
      const applied = await within(
        proxy.waitForLog((r) => r.msg === RELOADED),
        'the reload',
      );
      expect(applied.changed).toEqual(['policy']);
      await proxy.client.readResource({ uri: 'fx+fixture://res/1' });
      expect(await rpcError(proxy.client.readResource({ uri: 'fx+fixture://res/0' }))).toEqual(notFound('fx+fixture://res/0'));
    } finally {
      await proxy[Symbol.asyncDispose]();
    }
  });

  it('a config file moved away is logged and the running config kept; written back, it is followed again', async () => {
    const base = { servers: SERVERS, stdio: STDIO };
    const proxy = await ProxyProcess.start({ ...base, policy: POLICY }, { logLevel: 'info', args: ['--watch'] });
    try {
      renameSync(proxy.configFile, `${proxy.configFile}.moved`);
      const gone = await within(
        proxy.waitForLog((r) => r.msg === INVALID && r.why === 'file changed'),
        'the missing-file log',
      );
      expect(String(gone.err)).toMatch(/ENOENT/);
      expect(await rpcError(proxy.client.readResource({ uri: 'fx+fixture://res/1' }))).toEqual(notFound('fx+fixture://res/1'));
      saveByRename(proxy.configFile, { ...base, policy: { default: 'allow' } });
      const applied = await within(
        proxy.waitForLog((r) => r.msg === RELOADED),
        'the reload',
      );
      expect(applied.changed).toEqual(['policy']);
      await proxy.client.readResource({ uri: 'fx+fixture://res/1' });
      expect(proxy.logs().filter((r) => r.msg === INVALID)).toHaveLength(1);
    } finally {
      await proxy[Symbol.asyncDispose]();
    }
  });

  it('50 rename-replace saves under a read load are each applied, in order', { timeout: 120_000 }, async () => {
    const base = { servers: SERVERS, stdio: STDIO };
    const policyFor = (i: number) => ({ default: 'deny', rules: [{ id: `gen-${i}`, effect: 'allow', resources: [`fx+fixture://res/${i % 5}`] }] });
    const proxy = await ProxyProcess.start({ ...base, policy: policyFor(0) }, { logLevel: 'info', args: ['--watch'] });
    let loading = true;
    let served = 0;
    const load = (async () => {
      // Reads of every resource, back to back, the whole time: allowed or not found, never anything else.
      for (let k = 0; loading; k++) {
        const uri = `fx+fixture://res/${k % 5}`;
        await proxy.client.readResource({ uri }).then(
          () => served++,
          (err: unknown) => expect((err as { code?: number }).code).toBe(-32002),
        );
      }
    })();
    try {
      const reloaded = (r: LogRecord) => r.msg === RELOADED && r.why === 'file changed';
      for (let i = 1; i <= 50; i++) {
        saveByRename(proxy.configFile, { ...base, policy: policyFor(i) });
        await waitForCount(proxy, reloaded, i, `save ${i} to be applied`);
        // This generation, not the one before, decides.
        await proxy.client.readResource({ uri: `fx+fixture://res/${i % 5}` });
        const previous = `fx+fixture://res/${(i - 1) % 5}`;
        expect(await rpcError(proxy.client.readResource({ uri: previous }))).toEqual(notFound(previous));
      }
      expect(proxy.logs().filter((r) => r.msg === RELOADED)).toHaveLength(50);
      expect(proxy.logs().some((r) => r.msg === INVALID || r.msg === REFUSED)).toBe(false);
    } finally {
      loading = false;
      await load;
      await proxy[Symbol.asyncDispose]();
    }
    expect(served).toBeGreaterThan(0);
  });
});

describe('servers edits', () => {
  it('add, remove and restart exactly the named upstreams; the others are untouched; subscribers hear list_changed', async () => {
    using dir = new TempDir();
    const record = dir.file('starts.log');
    writeFileSync(record, '');
    const rec = (name: string, ...args: string[]): StdioUpstream => upstreams.fixture('--resources', '2', '--name', name, '--record', record, ...args);
    const before = { keep: rec('keep'), change: rec('change'), drop: rec('drop', '--subscribe') };
    const proxy = await ProxyProcess.start({ servers: before, stdio: STDIO }, { logLevel: 'info' });
    try {
      await proxy.client.readResource({ uri: 'drop+fixture://res/0' });
      await proxy.client.subscribeResource({ uri: 'drop+fixture://res/0' });
      await proxy.client.readResource({ uri: 'keep+fixture://res/0' });
      // A read of each upstream waits for it to be up, so each has written its start line (the proxy
      // answers initialize before every upstream's process has started).
      await proxy.client.readResource({ uri: 'change+fixture://res/0' });
      let listChanged = 0;
      const heard = new Promise<void>((resolve) =>
        proxy.client.setNotificationHandler(ResourceListChangedNotificationSchema, () => {
          listChanged++;
          resolve();
        }),
      );
      const lines = () => readFileSync(record, 'utf8').split('\n').filter(Boolean);
      const startsBefore = lines().filter((l) => l.startsWith('start')).length;
      expect(startsBefore).toBe(3);

      writeFileSync(
        proxy.configFile,
        JSON.stringify(withPatientLists({ servers: { keep: before.keep, change: rec('change', '--page-size', '1'), add: rec('add') }, stdio: STDIO })),
      );
      process.kill(proxy.pid, 'SIGHUP');
      const reloaded = await within(
        proxy.waitForLog((r) => r.msg === RELOADED),
        'the reload',
      );
      expect(reloaded.changed).toEqual(['servers.add(added)', 'servers.drop(removed)', 'servers.change(restarted)']);
      const done = await within(
        proxy.waitForLog((r) => r.msg === 'upstreams reloaded'),
        'the upstreams to be reloaded',
      );
      expect(done).toMatchObject({ added: ['add'], removed: ['drop'], restarted: ['change'] });
      await within(heard, 'list_changed');
      expect(listChanged).toBeGreaterThan(0);

      // Exactly: one new start each for change and add, one exit each for the old change and drop; keep untouched.
      await within(
        (async () => {
          while (lines().filter((l) => l.startsWith('exit')).length < 2) await delay(20);
        })(),
        'the replaced children to exit',
      );
      const after = lines().slice(startsBefore);
      const names = (kind: string) =>
        after
          .filter((l) => l.startsWith(kind))
          .map((l) => l.split(' ')[1])
          .sort();
      expect(names('start')).toEqual(['add', 'change']);
      expect(names('exit')).toEqual(['change', 'drop']);

      // The catalog follows: add is listed and readable, drop is gone, keep still serves.
      const listed = (await listAll(proxy.client)).items.map((r) => String(r.uri));
      expect(listed.some((u) => u.startsWith('add+'))).toBe(true);
      expect(listed.some((u) => u.startsWith('drop+'))).toBe(false);
      await proxy.client.readResource({ uri: 'add+fixture://res/1' });
      await proxy.client.readResource({ uri: 'change+fixture://res/1' });
      await proxy.client.readResource({ uri: 'keep+fixture://res/0' });
      expect(await rpcError(proxy.client.readResource({ uri: 'drop+fixture://res/0' }))).toEqual(notFound('drop+fixture://res/0'));
      expect(lines().filter((l) => l.startsWith('start keep'))).toHaveLength(1);
    } finally {
      await proxy[Symbol.asyncDispose]();
    }
  });
});

describe('mcp-federate reload --check', () => {
  const running = { servers: SERVERS, policy: POLICY, audit: { file: 'audit.jsonl' } };
  let candidates = 0;
  const check = (dir: TempDir, runningFile: string, candidate: unknown, ...extra: string[]) =>
    runCli(['reload', '--check', '--config', runningFile, ...extra, dir.writeConfig(candidate, `candidate-${++candidates}.json`)]);

  it('prints what a reload would change (exit 0) or why it would be refused (exit 1)', { timeout: 90_000 }, async () => {
    using dir = new TempDir();
    const runningFile = dir.writeConfig(running, 'running.json');
    const loose = { servers: SERVERS, policy: POLICY, audit: false };
    // Independent processes: run side by side.
    const [same, dropped, edited, exposed, allowed] = await Promise.all([
      check(dir, runningFile, running),
      check(dir, runningFile, without(running, 'policy')),
      check(dir, runningFile, { ...running, policy: { default: 'allow' }, audit: false, servers: { ...SERVERS, more: upstreams.fixture() } }),
      // Served on a non-loopback address, a file without auth is refused unless serve had --allow-unauthenticated.
      check(dir, runningFile, loose, '--host', '0.0.0.0'),
      check(dir, runningFile, loose, '--host', '0.0.0.0', '--allow-unauthenticated'),
    ]);
    expect([same.exitCode, String(same.stdout)]).toEqual([0, expect.stringContaining('no change')]);
    expect(dropped.exitCode).toBe(1);
    expect(String(dropped.stdout)).toMatch(/refused[^\n]*\n {2}policy: the file leaves out the "policy" block in force/);
    expect(edited.exitCode).toBe(0);
    expect(String(edited.stdout)).toContain('would apply: audit, policy, servers.more(added)');
    expect(String(edited.stdout)).toContain('at the next start only: audit');
    expect(exposed.exitCode).toBe(1);
    expect(String(exposed.stdout)).toMatch(/ {2}auth: the HTTP endpoint is bound to a non-loopback address/);
    expect(allowed.exitCode).toBe(0);
  });

  it('a file that does not load, or a bad invocation, exits 2 naming the file and the problem', { timeout: 90_000 }, async () => {
    using dir = new TempDir();
    const runningFile = dir.writeConfig(running, 'running.json');
    const torn = dir.writeConfig('{ "servers": ', 'torn.json');
    const badField = dir.writeConfig({ servers: SERVERS, policy: { default: 'maybe' } }, 'bad.json');
    const usages = [['reload'], ['reload', '--check'], ['reload', runningFile], ['reload', '--check', 'a.json', 'b.json'], ['reload', '--bogus']];
    const [invalid, schema, ...bad] = await Promise.all([
      runCli(['reload', '--check', '--config', runningFile, torn]),
      runCli(['reload', '--check', '--config', runningFile, badField]),
      ...usages.map((args) => runCli(args)),
    ]);
    expect(invalid.exitCode).toBe(2);
    expect(String(invalid.stderr)).toContain(`${torn}: not valid JSON`);
    expect(schema.exitCode).toBe(2);
    expect(String(schema.stderr)).toMatch(new RegExp(`${badField}: policy\\.default: `));
    bad.forEach((r, i) => {
      expect([usages[i], r.exitCode]).toEqual([usages[i], 2]);
      expect(String(r.stderr)).toContain('Usage:');
    });
  });
});
