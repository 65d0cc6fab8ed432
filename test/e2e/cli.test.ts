// End to end: the CLI surface of the built binary — exit codes, messages, `ls`, `--version`,
// stdout purity of `serve`, client config files and YAML, and shutdown (SIGTERM, SIGINT, stdin end)
// taking the upstreams down.
import { describe, expect, it } from 'vitest';
import { JSONRPCMessageSchema } from '@modelcontextprotocol/sdk/types.js';
import { isAlive, PACKAGE_VERSION, runCli, upstreams, waitForExit } from '../helpers/built-cli.js';
import { type LogRecord, parseLogLines } from '../helpers/logs.js';
import { TempDir } from '../helpers/temp-dir.js';
import { rawCli } from '../helpers/cli-stdio.js';
import { CLIENT_INFO } from '../helpers/rpc-messages.js';

const NO_STACK = /^\s+at /m;

/** The CLI's stderr split into JSON log records, `ls` progress lines and the other plain lines it printed itself. */
function splitStderr(stderr: unknown): { logs: LogRecord[]; progress: string[]; lines: string[] } {
  const all = String(stderr)
    .split('\n')
    .filter((line) => line !== '');
  const plain = all.filter((l) => !l.startsWith('{'));
  return {
    logs: parseLogLines(all.filter((l) => l.startsWith('{')).join('\n')),
    progress: plain.filter((l) => l.startsWith('ls: ')),
    lines: plain.filter((l) => !l.startsWith('ls: ')),
  };
}

/** True when `line` is one JSON-RPC 2.0 message. */
function isJsonRpc(line: string): boolean {
  try {
    return JSONRPCMessageSchema.safeParse(JSON.parse(line)).success;
  } catch {
    return false;
  }
}

// Independent short-lived processes: run them side by side.
describe.concurrent('invalid invocations exit 2 with a one-line reason and no stack trace', () => {
  it.each([
    ['a file that is not JSON', '{"servers": {', /^not valid JSON \(.+\)$/],
    ['an invalid url', { servers: { docs: { url: 'not a url' } } }, 'servers.docs.url: Invalid URL'],
    ['a non-http url', { servers: { docs: { url: 'ftp://example.com/x' } } }, 'servers.docs.url: Invalid URL'],
    ['a near miss of a top-level field', { servers: { docs: { command: 'x' } }, cahce: {} }, 'unknown field "cahce" (did you mean "cache"?)'],
    ['an unknown server field', { servers: { docs: { command: 'x', timeoutMS: 5 } } }, 'servers.docs: unknown field "timeoutMS" (did you mean "timeoutMs"?)'],
    ['a misspelt audit block', { servers: { docs: { command: 'x' } }, audit_log: { file: 'a.jsonl' } }, 'unknown field "audit_log" (did you mean "audit"?)'],
    ['a misspelt limits block', { servers: { docs: { command: 'x' } }, rateLimits: [] }, 'unknown field "rateLimits" (did you mean "limits"?)'],
    [
      'a VS Code ${input:…} with no variable to supply it',
      { servers: { docs: { url: 'https://example.com/mcp', headers: { Authorization: 'Bearer ${input:mcp-federate-e2e-unset}' } } } },
      'servers.docs.headers.Authorization: ${input:mcp-federate-e2e-unset} is a VS Code input, which mcp-federate cannot prompt for: set the environment variable mcp-federate-e2e-unset or MCP_FEDERATE_E2E_UNSET, or write ${env:NAME} instead',
    ],
    [
      'a name that makes no valid namespace',
      { servers: { 'My Server': { command: 'x' } } },
      'servers.My Server: the namespace derived from this name, "my server", does not match ^[a-z0-9][a-z0-9.-]{0,62}$; set "namespace" to one that does',
    ],
    [
      'two names for one namespace',
      { mcpServers: { Memory: { command: 'x' }, memory: { command: 'y' } } },
      'mcpServers.Memory and mcpServers.memory both use namespace "memory"; set "namespace" on one',
    ],
    [
      'a missing envFile',
      { servers: { docs: { command: 'x', envFile: 'missing.env' } } },
      /^servers\.docs\.envFile: cannot read \/.+\/missing\.env \(ENOENT\)$/,
    ],
    [
      'an unset ${VAR}',
      { servers: { docs: { url: 'https://example.com/mcp', headers: { Authorization: 'Bearer ${MCP_FEDERATE_E2E_UNSET}' } } } },
      'servers.docs.headers.Authorization: environment variable MCP_FEDERATE_E2E_UNSET is not set',
    ],
    [
      'two unprefixed servers',
      { servers: { a: { command: 'x', prefix: false }, b: { command: 'y', prefix: false } } },
      'servers.b.prefix: servers.a already sets "prefix": false; at most one server may serve its URIs unprefixed',
    ],
    ['no servers', { servers: {} }, 'servers: at least one server is required'],
    ['a server with neither command nor url', { servers: { docs: {} } }, 'servers.docs: expected "command" (stdio upstream) or "url" (remote upstream)'],
  ])('config with %s', async (_what, config, problem) => {
    using dir = new TempDir();
    const file = dir.writeConfig(config);
    const result = await runCli(['--config', file]);
    expect(result.exitCode).toBe(2);
    expect(result.stdout).toBe('');
    const stderr = String(result.stderr);
    expect(stderr).not.toMatch(NO_STACK);
    const prefix = `mcp-federate: ${file}: `;
    expect(stderr.startsWith(prefix)).toBe(true);
    const message = stderr.slice(prefix.length);
    if (typeof problem === 'string') expect(message).toBe(problem);
    else expect(message).toMatch(problem);
  });

  it('a YAML syntax error names the file and the line', async () => {
    using dir = new TempDir();
    const file = dir.writeConfig('servers:\n  docs:\n    command: x\n   args: []\n', 'mcp-federate.yaml');
    const result = await runCli(['ls', '--config', file]);
    expect(result).toMatchObject({
      exitCode: 2,
      stdout: '',
      stderr: `mcp-federate: ${file}: not valid YAML (line 4, column 1: All mapping items must start at the same column)`,
    });
  });

  it('`ls` with an invalid config exits 2 the same way', async () => {
    using dir = new TempDir();
    const file = dir.writeConfig({ servers: { docs: { url: 'nope' } } });
    const result = await runCli(['ls', '--config', file]);
    expect(result).toMatchObject({ exitCode: 2, stdout: '', stderr: `mcp-federate: ${file}: servers.docs.url: Invalid URL` });
  });

  it('a missing --config file', async () => {
    using dir = new TempDir();
    const file = dir.file('nope.json');
    const result = await runCli(['--config', file]);
    expect(result.exitCode).toBe(2);
    expect(result.stdout).toBe('');
    expect(result.stderr).toBe(`mcp-federate: ${file}: cannot read config (ENOENT: no such file or directory, open '${file}')`);
  });

  it.each([
    [['--bogus'], "Unknown option '--bogus'"],
    [['--config'], "Option '-c, --config <value>' argument missing"],
    [['frob'], 'unknown command: frob'],
    [['serve', 'extra'], 'unknown command: serve extra'],
    [['--log-level', 'loud'], '--log-level: expected one of fatal, error, warn, info, debug, trace, silent, got "loud"'],
    [['serve', '--json'], '--json: only with ls'],
  ])('arguments %j', async (args, reason) => {
    const result = await runCli(args);
    expect(result.exitCode).toBe(2);
    expect(result.stdout).toBe('');
    expect(String(result.stderr).startsWith(`mcp-federate: ${reason}`)).toBe(true);
    expect(result.stderr).not.toMatch(NO_STACK);
  });
});

describe.concurrent('informational commands', () => {
  it.each([['--version'], ['-v']])('%s prints the package.json version', async (flag) => {
    const result = await runCli([flag]);
    expect(result).toMatchObject({ exitCode: 0, stdout: PACKAGE_VERSION, stderr: '' });
  });

  it('--help prints the usage on stdout', async () => {
    const result = await runCli(['--help']);
    expect(result.exitCode).toBe(0);
    expect(result.stdout).toMatch(/^Usage:\n {2}mcp-federate \[serve\]/);
    expect(result.stderr).toBe('');
  });

  it('`ls` prints each server’s status and counts (disabled ones too), then every namespaced URI; an unavailable one makes it exit 1 with its reason on stderr', async () => {
    using dir = new TempDir();
    const ghost = upstreams.missing();
    const file = dir.writeConfig({
      servers: {
        fx: upstreams.fixture('--resources', '2', '--page-size', '1'),
        ghost,
        off: { ...upstreams.fixture(), enabled: false },
        mem: upstreams.memory(dir.file('memory.jsonl')),
      },
    });
    const result = await runCli(['ls', '--config', file]);
    expect(result.exitCode).toBe(1);
    expect(result.stdout).toBe(
      [
        'SERVER  STATUS       RESOURCES  TEMPLATES  PROTOCOL',
        'fx      ready        4          2          2025-11-25',
        'ghost   unavailable  -          -          -',
        'off     disabled     -          -          -',
        'mem     ready        1          0          2025-11-25',
        '',
        'Resources:',
        '  fx+fixture://res/0',
        '  fx+fixture://res/1',
        '  fx+fixture://ticker',
        '  fx+fixture://stats',
        '  mem+memory://knowledge-graph',
        '',
        'Templates:',
        '  fx+fixture://res/{id}',
        '  fx+fixture://item/{category}/{id}',
      ].join('\n'),
    );
    const { logs, lines, progress } = splitStderr(result.stderr);
    expect(lines).toEqual([`mcp-federate: ghost is unavailable: spawn ${ghost.command} ENOENT`]);
    // Each enabled upstream's state as it settled, in whatever order they did.
    expect(progress.sort()).toEqual(['ls: fx ready (2025-11-25)', 'ls: ghost unavailable', 'ls: mem ready (2025-11-25)']);
    // The default `ls` log level is warn: the failures are logged to stderr as JSON too.
    const failed = logs.filter((r) => r.msg === 'upstream failed to start; serving the others');
    expect(failed.map((r) => r.server)).toEqual(['ghost']);
  });

  it('`ls` shows the last stderr lines of a child that failed at startup, and logs them', async () => {
    using dir = new TempDir();
    // A fast retry loop would keep `dead` (which exits at once, every time) in "connecting"; ls does not retry.
    const file = dir.writeConfig({
      servers: { fx: upstreams.fixture('--resources', '1'), dead: upstreams.fixture('--exit-on-start') },
      reconnect: { initialDelayMs: 1, maxDelayMs: 2 },
    });
    const result = await runCli(['ls', '--config', file]);
    expect(result.exitCode).toBe(1);
    expect(String(result.stdout).split('\n').slice(0, 3)).toEqual([
      'SERVER  STATUS       RESOURCES  TEMPLATES  PROTOCOL',
      'fx      ready        3          2          2025-11-25',
      'dead    unavailable  -          -          -',
    ]);
    const { logs, lines } = splitStderr(result.stderr);
    expect(lines).toHaveLength(3);
    expect(lines[0]).toMatch(/^mcp-federate: dead is unavailable: .+/);
    expect(lines.slice(1)).toEqual(['  its last stderr lines:', '    catalog-server: --exit-on-start']);
    const failed = logs.find((r) => r.msg === 'upstream failed to start; serving the others');
    expect(failed).toMatchObject({ server: 'dead', stderr: ['catalog-server: --exit-on-start'] });
  });

  it('`ls` exits 0 with only its progress on stderr when every enabled upstream is ready, and names servers whose key is not their id', async () => {
    using dir = new TempDir();
    const file = dir.writeConfig({
      mcpServers: { My_Fixture: upstreams.fixture('--resources', '1'), off: { ...upstreams.missing(), disabled: true } },
    });
    const result = await runCli(['ls', '--config', file]);
    expect(result).toMatchObject({ exitCode: 0, stderr: 'ls: my-fixture ready (2025-11-25)' });
    expect(String(result.stdout).split('\n').slice(0, 5)).toEqual([
      'SERVER      STATUS    RESOURCES  TEMPLATES  PROTOCOL    NAME',
      'my-fixture  ready     3          2          2025-11-25  My_Fixture',
      'off         disabled  -          -          -           off',
      '',
      'Resources:',
    ]);
  });

  it('`ls --json` prints the catalog as one JSON object, and exits 1 when an upstream is unavailable', async () => {
    using dir = new TempDir();
    const ghost = upstreams.missing();
    const file = dir.writeConfig({
      servers: { Fixture_1: upstreams.fixture('--resources', '1'), ghost, off: { ...upstreams.fixture(), enabled: false } },
    });
    const result = await runCli(['ls', '--json', '--config', file]);
    expect(result.exitCode).toBe(1);
    expect(String(result.stdout).endsWith('}')).toBe(true);
    const catalog = JSON.parse(String(result.stdout)) as Record<string, Record<string, unknown>[]>;
    expect(catalog.servers).toEqual([
      { id: 'fixture-1', name: 'Fixture_1', status: 'ready', protocol: '2025-11-25', resources: 3, templates: 2 },
      { id: 'ghost', name: 'ghost', status: 'unavailable', reason: `spawn ${ghost.command} ENOENT`, resources: null, templates: null },
      { id: 'off', name: 'off', status: 'disabled', resources: null, templates: null },
    ]);
    expect(catalog.resources!.map((r) => r.uri)).toEqual(['fixture-1+fixture://res/0', 'fixture-1+fixture://ticker', 'fixture-1+fixture://stats']);
    expect(catalog.resources![0]).toMatchObject({ name: expect.any(String), mimeType: expect.any(String) });
    expect(catalog.templates!.map((t) => t.uriTemplate)).toEqual(['fixture-1+fixture://res/{id}', 'fixture-1+fixture://item/{category}/{id}']);
    expect(splitStderr(result.stderr).lines).toEqual([`mcp-federate: ghost is unavailable: spawn ${ghost.command} ENOENT`]);
  });
});

describe.concurrent('configuration files from elsewhere', () => {
  it('serves a YAML config, under namespaces derived from its keys', async () => {
    const yaml = [
      '# mcp-federate.yaml',
      'servers:',
      '  Fixture_A:',
      `    command: ${JSON.stringify(upstreams.fixture().command)}`,
      '    args:',
      ...upstreams.fixture('--resources', '1').args.map((a) => `      - ${JSON.stringify(a)}`),
      '  b:',
      `    command: ${JSON.stringify(upstreams.fixture().command)}`,
      `    args: [${upstreams
        .fixture('--resources', '2')
        .args.map((a) => JSON.stringify(a))
        .join(', ')}]`,
      'list:',
      '  firstWaitMs: 60000 # a loaded test machine may start upstreams slowly; the list expects them all',
      '',
    ].join('\n');
    await using session = rawCli(yaml, { logLevel: 'warn', configName: 'mcp-federate.yaml' });
    await session.initialize();
    const list = await session.request('resources/list');
    const uris = (list.result?.resources as { uri: string }[]).map((r) => r.uri);
    expect(uris.filter((u) => u.includes('/res/'))).toEqual(['fixture-a+fixture://res/0', 'b+fixture://res/0', 'b+fixture://res/1']);
    expect((await session.readJson('fixture-a+fixture://stats')).pid).toEqual(expect.any(Number));
  });

  it('serves a Claude Desktop config file, saying once at info which keys it sets aside', async () => {
    const config = {
      globalShortcut: 'Ctrl+Space',
      mcpServers: { Catalog_Fixture: upstreams.fixture('--resources', '1') },
      preferences: { token: '${NOT_SET_AND_NOT_OURS}' },
    };
    await using session = rawCli(config, { logLevel: 'info' });
    await session.initialize();
    const list = await session.request('resources/list');
    expect((list.result?.resources as { uri: string }[]).map((r) => r.uri)).toContain('catalog-fixture+fixture://res/0');
    session.carrier.child.stdin.end();
    const result = await session.carrier.exit();
    expect(result.exitCode).toBe(0);
    const lines = parseLogLines(String(result.stderr));
    expect(lines.filter((r) => r.msg === 'ignoring keys of the client file that mcp-federate does not use')).toEqual([
      expect.objectContaining({ level: 30, keys: ['globalShortcut', 'preferences'] }),
    ]);
    expect(lines.filter((r) => r.level === 40)).toEqual([
      expect.objectContaining({ msg: expect.stringMatching(/^no "policy" block/) }), // issue 9: everything allowed, said once
    ]);
  });
});

describe('session log', () => {
  it('logs each client session once at info, with its negotiated revision and the client name', async () => {
    await using session = rawCli({ servers: { fx: upstreams.fixture('--resources', '1') } }, { logLevel: 'info' });
    await session.initialize();
    const record = await session.carrier.waitForLog((r) => r.msg === 'client session opened');
    expect(record).toMatchObject({ level: 30, protocol: '2025-11-25', client: CLIENT_INFO });
  });
});

describe('serve', () => {
  const config = (dir: TempDir) => ({
    servers: {
      a: upstreams.fixture('--resources', '2'),
      b: upstreams.fixture('--resources', '1'),
      everything: upstreams.everything(),
      memory: upstreams.memory(dir.file('memory.jsonl')),
    },
  });

  it('writes nothing but JSON-RPC to stdout, even with debug logs and chatty upstreams', async () => {
    using dir = new TempDir();
    await using session = rawCli(config(dir), { logLevel: 'debug' });
    const init = await session.initialize();
    expect(init.result).toMatchObject({ serverInfo: { name: 'mcp-federate', version: PACKAGE_VERSION }, capabilities: { resources: {} } });
    const list = await session.request('resources/list');
    expect((list.result?.resources as unknown[]).length).toBe(2 + 2 + 1 + 2 + 7 + 1);
    const missing = await session.request('resources/read', { uri: 'a+fixture://nope' });
    expect(missing.error).toEqual({ code: -32002, message: 'Resource not found', data: { uri: 'a+fixture://nope' } });
    const unknown = await session.request('no/such/method');
    expect(unknown.error?.code).toBe(-32601);
    session.carrier.child.stdin.end();
    const result = await session.carrier.exit();
    expect(result.exitCode).toBe(0);
    expect(session.rawLines.length).toBeGreaterThanOrEqual(4);
    expect(session.rawLines.filter((line) => !isJsonRpc(line))).toEqual([]);
    // Everything went to stderr instead, as JSON lines.
    const logs = parseLogLines(String(result.stderr));
    expect(logs.some((r) => r.msg === 'serving on stdio')).toBe(true);
  });

  it('answers a line that is not JSON with -32700 and keeps serving', async () => {
    using dir = new TempDir();
    await using session = rawCli(config(dir));
    await session.initialize();
    session.carrier.child.stdin.write('this is not json\n');
    const list = await session.request('resources/list');
    expect(list.result?.resources).toBeDefined();
    const parsed = session.rawLines.map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(parsed).toContainEqual({ jsonrpc: '2.0', id: null, error: { code: -32700, message: 'Parse error' } });
  });

  it.each(['SIGTERM', 'SIGINT', 'stdin end'] as const)('%s: exits 0 and its upstream processes end', async (how) => {
    await using session = rawCli({ servers: { a: upstreams.fixture('--resources', '2'), b: upstreams.fixture('--resources', '1') } });
    await session.initialize();
    const pids = [(await session.readJson('a+fixture://stats')).pid as number, (await session.readJson('b+fixture://stats')).pid as number];
    expect(pids.every((pid) => Number.isInteger(pid) && isAlive(pid))).toBe(true);
    if (how === 'stdin end') session.carrier.child.stdin.end();
    else session.carrier.child.kill(how);
    const result = await session.carrier.exit();
    expect({ exitCode: result.exitCode, signal: result.signal }).toEqual({ exitCode: 0, signal: undefined });
    const why = how === 'stdin end' ? 'stdin closed' : how;
    expect(parseLogLines(String(result.stderr)).find((r) => r.msg === 'shutting down')).toMatchObject({ why });
    for (const pid of pids) expect(await waitForExit(pid), `upstream pid ${pid} outlived the proxy`).toBe(true);
  });

  it.each(['SIGTERM', 'stdin end'] as const)('%s while an upstream is still initializing: exits 0 and that upstream’s process ends too', async (how) => {
    // An upstream that never answers initialize and ignores stdin EOF (only a signal stops it).
    const hang = {
      command: process.execPath,
      args: ['-e', 'process.stderr.write(`hung pid ${process.pid}\\n`); setInterval(() => {}, 1000);'],
      timeoutMs: 120_000,
    };
    await using session = rawCli({ servers: { ok: upstreams.fixture(), hang } });
    const record = await session.carrier.waitForLog((r) => r.server === 'hang' && /^hung pid \d+$/.test(String(r.stderr)));
    const pid = Number(String(record.stderr).split(' ')[2]);
    try {
      if (how === 'stdin end') session.carrier.child.stdin.end();
      else session.carrier.child.kill(how);
      const result = await session.carrier.exit(5_000);
      expect({ exitCode: result.exitCode, signal: result.signal }).toEqual({ exitCode: 0, signal: undefined });
      expect(await waitForExit(pid, 50), `upstream pid ${pid} outlived the proxy`).toBe(true);
    } finally {
      if (isAlive(pid)) process.kill(pid, 'SIGKILL'); // do not leak it when the assertion fails
    }
  });
});
