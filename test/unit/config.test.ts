// Config schema, interpolation, server namespaces, client config files, YAML and error messages.
import { createHash, generateKeyPairSync } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { tempDirEach } from '../helpers/temp-dir.js';
import { editDistance } from '../../src/config/keys.js';
import { workspaceFolderOf } from '../../src/config/variables.js';
import { ASYMMETRIC_ALGORITHMS, defaultStdioPrincipal, hashToken, loadConfig, parseConfig, validateConfig } from '../../src/config/load.js';
import { ErrorCodes, ProxyError } from '../../src/errors.js';

const env = { TOKEN: 'sekret', HOME: '/home/x' };
const parse = (raw: unknown) => parseConfig(raw, { env });
const failure = (raw: unknown): string => {
  try {
    parse(raw);
  } catch (err) {
    expect(err).toBeInstanceOf(ProxyError);
    expect((err as ProxyError).code).toBe(ErrorCodes.CONFIG_INVALID);
    return (err as Error).message;
  }
  throw new Error('expected a config error');
};

describe('config schema', () => {
  it('fills defaults for stdio and remote servers', () => {
    const c = parse({ servers: { a: { command: 'node' }, b: { url: 'http://127.0.0.1:9/mcp' } } });
    expect(c.servers.a).toMatchObject({ command: 'node', args: [], env: {}, enabled: true, timeoutMs: 30000, concurrency: 16 });
    expect(c.servers.b).toMatchObject({ url: 'http://127.0.0.1:9/mcp', headers: {}, enabled: true });
    expect(c.list).toEqual({ maxItemsPerPage: 1000, maxPagesPerUpstream: 1000, firstWaitMs: 2000 });
  });

  it('"prefix" defaults to true; one server may set it to false', () => {
    const c = parse({ servers: { a: { command: 'x' }, b: { url: 'http://127.0.0.1:9/mcp', prefix: false } } });
    expect(c.servers.a).toMatchObject({ prefix: true });
    expect(c.servers.b).toMatchObject({ prefix: false });
  });

  it.each([
    [
      { servers: { a: { command: 'x', prefix: false }, b: { command: 'y', prefix: false } } },
      'servers.b.prefix: servers.a already sets "prefix": false; at most one server may serve its URIs unprefixed',
    ],
    [
      { mcpServers: { a: { command: 'x', prefix: false }, b: { command: 'y' }, c: { command: 'z', prefix: false, disabled: true } } },
      'mcpServers.c.prefix: mcpServers.a already sets "prefix": false; at most one server may serve its URIs unprefixed',
    ],
    [{ servers: { a: { command: 'x', prefix: 'no' } } }, 'servers.a.prefix: Invalid input: expected boolean, received string'],
  ])('a second unprefixed server (disabled ones count) or a non-boolean "prefix" is an error naming the path: %j', (raw, message) => {
    expect(failure(raw)).toBe(message);
  });

  it('keeps config order of servers', () => {
    const c = parse({ servers: { zed: { command: 'x' }, alpha: { command: 'y' }, mid: { command: 'z' } } });
    expect(Object.keys(c.servers)).toEqual(['zed', 'alpha', 'mid']);
  });

  it('accepts a pasted mcpServers block with type and disabled', () => {
    const c = parse({ mcpServers: { fs: { type: 'stdio', command: 'npx', args: ['-y', 'x'] }, old: { type: 'sse', url: 'https://h/sse', disabled: true } } });
    expect(c.servers.fs).toMatchObject({ command: 'npx', enabled: true });
    expect(c.servers.old).toMatchObject({ transport: 'sse', enabled: false });
  });

  it('interpolates ${VAR} and ${VAR:-default} everywhere', () => {
    const c = parse({ servers: { r: { url: 'https://h/mcp', headers: { Authorization: 'Bearer ${TOKEN}', X: '${NOPE:-dflt}' } } } });
    expect(c.servers.r).toMatchObject({ headers: { Authorization: 'Bearer sekret', X: 'dflt' } });
  });

  it.each([
    [
      '${input:api-key}',
      'servers.r.headers.A: ${input:api-key} is a VS Code input, which mcp-federate cannot prompt for: set the environment variable api-key or API_KEY, or write ${env:NAME} instead',
    ],
    [
      'Bearer ${input:TOKEN2}',
      'servers.r.headers.A: ${input:TOKEN2} is a VS Code input, which mcp-federate cannot prompt for: set the environment variable TOKEN2, or write ${env:NAME} instead',
    ],
  ])('never passes a VS Code ${input:…} on as written: %j fails naming the input and how to supply it', (value, message) => {
    expect(failure({ servers: { r: { url: 'https://h/mcp', headers: { A: value } } } })).toBe(message);
  });

  it('takes ${input:id} from the environment variable of that id, or its upper-case form', () => {
    const c = parseConfig(
      { servers: { r: { url: 'https://h/mcp', headers: { A: 'Bearer ${input:api-key}', B: '${input:plain}' } } } },
      { env: { API_KEY: 'k1', plain: 'p' } },
    );
    expect(c.servers.r).toMatchObject({ headers: { A: 'Bearer k1', B: 'p' } });
  });

  it("reads VS Code's ${env:NAME}, ${userHome} and ${pathSeparator}", () => {
    const c = parseConfig(
      { servers: { s: { command: 'node', args: ['${userHome}${pathSeparator}notes', '${env:HOME}', '${env:TOKEN}x'] } } },
      { env, userHome: '/home/u' },
    );
    expect(c.servers.s).toMatchObject({ args: ['/home/u/notes', '/home/x', 'sekretx'] });
  });

  it.each([
    ['${env:NOPE}', 'servers.s.args[0]: environment variable NOPE is not set (${env:NOPE})'],
    [
      '${command:pick}',
      'servers.s.args[0]: ${command:pick} is not supported (supported: ${VAR}, ${VAR:-default}, ${env:VAR}, ${input:id}, ${userHome}, ${workspaceFolder}, ${pathSeparator})',
    ],
    [
      '${cwd}',
      'servers.s.args[0]: ${cwd} is not supported (supported: ${VAR}, ${VAR:-default}, ${env:VAR}, ${input:id}, ${userHome}, ${workspaceFolder}, ${pathSeparator})',
    ],
    ['${workspaceFolder}', 'servers.s.args[0]: ${workspaceFolder}: there is no config file to take the folder from'],
  ])('an unsupported or unset placeholder %j is an error naming it', (arg, message) => {
    expect(failure({ servers: { s: { command: 'node', args: [arg] } } })).toBe(message);
  });

  it.each([
    ['/p/proj/.vscode/mcp.json', '/p/proj'],
    ['/p/proj/mcp.json', '/p/proj'],
    ['/p/.cursor/mcp.json', '/p/.cursor'],
    ['/.vscode/mcp.json', '/'],
  ])('${workspaceFolder} of %j is %j', (file, folder) => {
    expect(workspaceFolderOf(file)).toBe(folder);
    const c = parseConfig({ servers: { s: { command: 'node', args: ['${workspaceFolder}/x'] } } }, { env, file });
    expect(c.servers.s).toMatchObject({ args: [`${folder}/x`] });
  });

  it('names an unset variable and where it is used', () => {
    expect(failure({ servers: { r: { url: 'https://h', headers: { A: '${MISSING}' } } } })).toBe(
      'servers.r.headers.A: environment variable MISSING is not set',
    );
  });

  it.each([
    [{ servers: { docs: { url: 'not a url' } } }, 'servers.docs.url: Invalid URL'],
    [{ servers: { docs: { url: 'ftp://h/x' } } }, 'servers.docs.url: Invalid URL'],
    [{ servers: { a: {} } }, 'servers.a: expected "command" (stdio upstream) or "url" (remote upstream)'],
    [{ servers: { a: { command: '' } } }, 'servers.a.command:'],
    [{ servers: { a: { command: 'x', args: 'nope' } } }, 'servers.a.args:'],
    [{ servers: { a: { command: 'x', timeoutMs: -1 } } }, 'servers.a.timeoutMs:'],
    [{ servers: { a: { command: 'x', timeoutMS: 5 } } }, 'servers.a: unknown field "timeoutMS" (did you mean "timeoutMs"?)'],
    [{ servers: {} }, 'servers: at least one server is required'],
    [{}, 'servers: at least one server is required'],
    [{ servers: { a: { command: 'x' } }, mcpServers: { b: { command: 'y' } } }, 'mcpServers: give either'],
    [{ servers: { a: { command: 'x' } }, reconnect: { initialDelay: 5 } }, 'reconnect: unknown field "initialDelay" (did you mean "initialDelayMs"?)'],
    [[1, 2], 'expected object'],
  ])('rejects %j with a readable message', (raw, expected) => {
    expect(failure(raw)).toContain(expected);
  });
});

describe('server names and namespaces', () => {
  it.each([
    ['memory', 'memory'],
    ['Memory', 'memory'],
    ['brave_search', 'brave-search'],
    ['Brave_Search.v2', 'brave-search.v2'],
    ['GitHub-MCP', 'github-mcp'],
    ['0x', '0x'],
  ])('name %j serves under namespace %j and keeps its name', (name, id) => {
    const c = parse({ mcpServers: { [name]: { command: 'x' } } });
    expect(Object.keys(c.servers)).toEqual([id]);
    expect(c.servers[id]).toMatchObject({ name, command: 'x' });
  });

  it('a valid lowercase id is its own namespace and name, and no "namespace" field is kept', () => {
    const c = parse({ servers: { docs: { command: 'x' } } });
    expect(c.servers).toEqual({ docs: expect.objectContaining({ name: 'docs', command: 'x' }) });
    expect(c.servers.docs).not.toHaveProperty('namespace');
  });

  it('keys the servers by namespace in config order', () => {
    const c = parse({ servers: { Zed: { command: 'x' }, alpha_1: { command: 'y' }, 'My Thing': { command: 'z', namespace: 'mid' } } });
    expect(Object.entries(c.servers).map(([id, s]) => [id, s.name])).toEqual([
      ['zed', 'Zed'],
      ['alpha-1', 'alpha_1'],
      ['mid', 'My Thing'],
    ]);
  });

  it.each([
    [{ 'My Server': { command: 'x', namespace: 'mine' } }, 'mine', 'My Server'],
    [{ docs: { url: 'https://h/mcp', namespace: 'wiki.v2' } }, 'wiki.v2', 'docs'],
    [{ Memory: { command: 'x' }, memory: { command: 'y', namespace: 'memory2' } }, 'memory2', 'memory'],
  ])('"namespace" overrides the derived one: %j', (servers, id, name) => {
    const c = parse({ servers });
    expect(c.servers[id]).toMatchObject({ name });
  });

  it.each([
    [
      { servers: { Memory: { command: 'x' }, memory: { command: 'y' } } },
      'servers.Memory and servers.memory both use namespace "memory"; set "namespace" on one',
    ],
    [
      { mcpServers: { brave_search: { command: 'x' }, 'brave-search': { command: 'y' } } },
      'mcpServers.brave_search and mcpServers.brave-search both use namespace "brave-search"; set "namespace" on one',
    ],
    [{ servers: { a: { command: 'x' }, b: { command: 'y', namespace: 'a' } } }, 'servers.a and servers.b both use namespace "a"; set "namespace" on one'],
  ])('namespaces that collide are an error naming both: %j', (raw, message) => {
    expect(failure(raw)).toBe(message);
  });

  it.each([
    ['My Server', 'my server'],
    ['a+b', 'a+b'],
    ['-lead', '-lead'],
    ['café', 'café'],
    ['x'.repeat(64), 'x'.repeat(64)],
  ])('a name whose derived namespace is invalid is an error naming it and suggesting "namespace": %j', (name, id) => {
    expect(failure({ servers: { [name]: { command: 'x' } } })).toBe(
      `servers.${name}: the namespace derived from this name, "${id}", does not match ^[a-z0-9][a-z0-9.-]{0,62}$; set "namespace" to one that does`,
    );
  });

  it.each(['Mine', 'a_b', 'a+b', ''])('an invalid "namespace" is an error: %j', (namespace) => {
    expect(failure({ servers: { a: { command: 'x', namespace } } })).toBe(
      'servers.a.namespace: must match ^[a-z0-9][a-z0-9.-]{0,62}$ ("+" and "_" are reserved)',
    );
  });
});

describe('whole client config files', () => {
  const validate = (raw: unknown) => validateConfig(raw, { env });

  it('a Claude Desktop file loads its mcpServers and sets the other keys aside', () => {
    const { config, ignoredKeys } = validate({
      globalShortcut: 'Ctrl+Space',
      mcpServers: { Memory: { command: 'npx', args: ['-y', '@modelcontextprotocol/server-memory'] } },
      preferences: { theme: '${NOT_OURS}' },
    });
    expect(Object.keys(config.servers)).toEqual(['memory']);
    expect(ignoredKeys).toEqual(['globalShortcut', 'preferences']);
  });

  it('a VS Code mcp.json loads: inputs set aside, type/envFile/dev accepted, ${input:x} from the environment', () => {
    const { config, ignoredKeys } = validateConfig(
      {
        inputs: [{ type: 'promptString', id: 'api-key', description: 'API key', password: true }],
        servers: {
          github: { type: 'http', url: 'https://api.example.com/mcp', headers: { Authorization: 'Bearer ${input:api-key}' } },
          local_dev: {
            type: 'stdio',
            command: 'node',
            args: ['server.js', '--token=${input:api-key}', '${TOKEN}'],
            envFile: '.env',
            dev: { watch: 'src/**/*.ts', debug: { type: 'node' } },
          },
        },
      },
      { env: { ...env, API_KEY: 'from-env' } },
    );
    expect(ignoredKeys).toEqual(['inputs']);
    expect(config.servers.github).toMatchObject({ headers: { Authorization: 'Bearer from-env' } });
    expect(config.servers['local-dev']).toMatchObject({ name: 'local_dev', args: ['server.js', '--token=from-env', 'sekret'], envFile: '.env' });
  });

  it('with only our own keys nothing is set aside', () => {
    expect(validate({ $schema: '../schema/mcp-federate.schema.json', servers: { a: { command: 'x' } }, list: {}, reconnect: {} }).ignoredKeys).toEqual([]);
  });

  it.each([
    ['cahce', 'cache'],
    ['servres', 'servers'],
    ['lsit', 'list'],
    ['Servers', 'servers'],
    ['mcpservers', 'mcpServers'],
    ['subscription', 'subscriptions'],
    ['listchange', 'listChanged'],
    ['reconect', 'reconnect'],
    ['audit_log', 'audit'],
    ['rateLimits', 'limits'],
    ['auditLog', 'audit'],
    ['http_server', 'http'],
  ])('a top-level near miss %j is an error suggesting %j', (typo, meant) => {
    expect(failure({ servers: { a: { command: 'x' } }, [typo]: {} })).toBe(`unknown field "${typo}" (did you mean "${meant}"?)`);
  });

  it('any other unknown top-level key is an error too (it would silently lose a setting)', () => {
    expect(failure({ servers: { a: { command: 'x' } }, somethingElse: 1 })).toBe('unknown field "somethingElse"');
  });

  it.each([
    ['servers.a', { servers: { a: { command: 'x', arsg: [] } } }, 'servers.a: unknown field "arsg" (did you mean "args"?)'],
    [
      'a block of ours',
      { servers: { a: { command: 'x' } }, list: { maxItemsPerPge: 5 } },
      'list: unknown field "maxItemsPerPge" (did you mean "maxItemsPerPage"?)',
    ],
    ['cache', { servers: { a: { command: 'x' } }, cache: { maxByte: 5 } }, 'cache: unknown field "maxByte" (did you mean "maxBytes"?)'],
    ['http', { servers: { a: { command: 'x' } }, http: { prot: 1 } }, 'http: unknown field "prot" (did you mean "port"?)'],
    [
      'audit',
      { servers: { a: { command: 'x' } }, audit: { file: 'a.jsonl', rotate: 1, fsync_each: 1 } },
      'audit: unknown field "rotate"; unknown field "fsync_each"',
    ],
    ['policy', { servers: { a: { command: 'x' } }, policy: { defualt: 'deny', rules: [] } }, 'policy: unknown field "defualt" (did you mean "default"?)'],
  ])('an unknown key inside %s is an error with a suggestion where one is close', (_where, raw, message) => {
    expect(failure(raw)).toBe(message);
  });

  it.each([
    ['cahce', 'cache', 1],
    ['lsit', 'list', 1],
    ['servres', 'servers', 1],
    ['inputs', 'list', 5],
    ['globalShortcut', 'list', 12],
    ['', 'wire', 4],
  ])('editDistance(%j, %j) = %i', (a, b, d) => {
    expect(editDistance(a, b)).toBe(d);
    expect(editDistance(b, a)).toBe(d);
  });
});

describe('loading files', () => {
  const tmp = tempDirEach('config');
  const write = (name: string, content: string) => {
    const file = path.join(tmp.path, name);
    writeFileSync(file, content);
    return file;
  };

  it('envFile is read relative to the config file, under env, and explicit env wins', async () => {
    mkdirSync(path.join(tmp.path, 'conf'));
    write('conf/.env', '# a comment\nA=from-file\nB="quoted value"\nexport C=c\n');
    const file = write('conf/mcp.json', JSON.stringify({ servers: { s: { command: 'x', envFile: '.env', env: { A: 'explicit' } } } }));
    const { config, ignoredKeys } = await loadConfig({ file, env: {} });
    expect(config.servers.s).toMatchObject({ env: { A: 'explicit', B: 'quoted value', C: 'c' }, envFile: path.join(tmp.path, 'conf', '.env') });
    expect(ignoredKeys).toEqual([]);
  });

  it('a missing envFile is an error naming the server and the path', async () => {
    const file = write('mcp.json', JSON.stringify({ mcpServers: { My_Server: { command: 'x', envFile: 'nope.env' } } }));
    await expect(loadConfig({ file, env: {} })).rejects.toMatchObject({
      code: ErrorCodes.CONFIG_INVALID,
      message: `${file}: mcpServers.My_Server.envFile: cannot read ${path.join(tmp.path, 'nope.env')} (ENOENT)`,
    });
  });

  it('loadConfig returns the keys it ignored', async () => {
    const file = write('claude_desktop_config.json', JSON.stringify({ mcpServers: { a: { command: 'x' } }, globalShortcut: '' }));
    expect((await loadConfig({ file, env: {} })).ignoredKeys).toEqual(['globalShortcut']);
  });

  it.each(['mcp-federate.yaml', 'config.yml'])('loads YAML from %s given with --config', async (name) => {
    const file = write(
      name,
      'servers:\n  Memory:\n    command: node\n    args: [server.js]\n    env:\n      TOKEN: ${TOKEN}\n# a comment\ncache:\n  enabled: false\n',
    );
    const { config } = await loadConfig({ file, env });
    expect(config.servers.memory).toMatchObject({ name: 'Memory', command: 'node', args: ['server.js'], env: { TOKEN: 'sekret' } });
    expect(config.cache.enabled).toBe(false);
  });

  it.each([
    '.mcp-federaterc.yaml',
    '.mcp-federaterc.yml',
    '.mcp-federaterc',
    'mcp-federate.yaml',
    'mcp-federate.yml',
    'mcp-federate.config.yaml',
    'mcp-federate.config.yml',
  ])('finds %s (YAML) when searching', async (name) => {
    const file = write(name, 'mcpServers:\n  a:\n    command: x\n');
    const loaded = await loadConfig({ cwd: tmp.path, env: {} });
    expect(loaded.filepath).toBe(file);
    expect(Object.keys(loaded.config.servers)).toEqual(['a']);
  });

  it.each(['mcp-federate.json', '.mcp-federaterc'])('finds %s (JSON) when searching', async (name) => {
    const file = write(name, JSON.stringify({ mcpServers: { b: { command: 'y' } } }));
    const loaded = await loadConfig({ cwd: tmp.path, env: {} });
    expect(loaded.filepath).toBe(file);
    expect(Object.keys(loaded.config.servers)).toEqual(['b']);
  });

  it('a broken JSON .mcp-federaterc is reported as JSON', async () => {
    const file = write('.mcp-federaterc', '{ "servers": ');
    await expect(loadConfig({ cwd: tmp.path, env: {} })).rejects.toMatchObject({ message: expect.stringMatching(new RegExp(`^${file}: not valid JSON`)) });
  });

  it.each([
    ['servers:\n  a:\n    command: x\n   args: [1]\n', 'not valid YAML (line 4, column 1: All mapping items must start at the same column)'],
    ['servers:\n  a: {command: x\n', 'not valid YAML (line 3, column 1: Flow map in block collection must be sufficiently indented and end with a })'],
    ['servers:\n  a: 1\n  a: 2\n', 'not valid YAML (line 3, column 3: Map keys must be unique)'],
  ])('a YAML syntax error names the file and the line: %j', async (content, message) => {
    const file = write('bad.yaml', content);
    await expect(loadConfig({ file, env: {} })).rejects.toMatchObject({ code: ErrorCodes.CONFIG_INVALID, message: `${file}: ${message}` });
  });
});

describe('auth and stdio', () => {
  const servers = { a: { command: 'x' } };
  const sha = (s: string) => createHash('sha256').update(s, 'utf8').digest('hex');
  const { publicKey: rsaPem, privateKey: rsaPrivatePem } = generateKeyPairSync('rsa', {
    modulusLength: 2048,
    publicKeyEncoding: { type: 'spki', format: 'pem' },
    privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
  });
  const secret32 = 's'.repeat(32);

  it('has no auth block by default, and a stdio caller with the OS user name and no roles', () => {
    const c = parse({ servers });
    expect(c.auth).toBeUndefined();
    expect(c.stdio).toEqual({ principal: defaultStdioPrincipal(), roles: [] });
    expect(defaultStdioPrincipal()).toBe(os.userInfo().username || 'stdio');
  });

  it('takes the stdio principal and roles as configured', () => {
    expect(parse({ servers, stdio: { principal: 'ops-bot', roles: ['ops'] } }).stdio).toEqual({ principal: 'ops-bot', roles: ['ops'] });
  });

  it('keeps only the hash of a token given through ${VAR}, with roles defaulting to []', () => {
    const token = 'tok_'.padEnd(40, 'x');
    const c = parseConfig(
      {
        servers,
        auth: {
          tokens: [
            { principal: 'alice', roles: ['eng'], sha256: sha('other-token-value') },
            { principal: 'bob', token: '${BOB_TOKEN}' },
          ],
        },
      },
      { env: { BOB_TOKEN: token } },
    );
    expect(c.auth?.tokens).toEqual([
      { principal: 'alice', roles: ['eng'], sha256: sha('other-token-value') },
      { principal: 'bob', roles: [], sha256: sha(token) },
    ]);
    expect(hashToken(token)).toBe(sha(token));
    expect(JSON.stringify(c)).not.toContain(token);
  });

  it.each([
    [{ jwksUrl: 'https://idp.example.com/jwks.json' }, [...ASYMMETRIC_ALGORITHMS]],
    [{ jwksUrl: 'http://127.0.0.1:8080/jwks' }, [...ASYMMETRIC_ALGORITHMS]],
    [{ publicKey: '${PEM}' }, [...ASYMMETRIC_ALGORITHMS]],
    [{ secret: secret32 }, ['HS256']],
    [{ secret: 's'.repeat(64), algorithms: ['HS512', 'HS256'] }, ['HS512', 'HS256']],
    [{ jwksUrl: 'https://idp.example.com/jwks.json', algorithms: ['ES256', 'ES256'] }, ['ES256']],
  ])('fills the JWT defaults for %j', (source, algorithms) => {
    const c = parseConfig({ servers, auth: { jwt: { ...source, audience: 'mcp' } } }, { env: { PEM: rsaPem } });
    expect(c.auth?.jwt).toMatchObject({ audience: 'mcp', principalClaim: 'sub', rolesClaim: 'roles', algorithms });
    expect(c.auth?.tokens).toEqual([]);
  });

  it.each([
    [{ auth: {} }, 'auth: give "tokens", "jwt" or both'],
    [{ auth: { tokens: [] } }, 'auth: give "tokens", "jwt" or both'],
    [{ auth: { tokens: [{ principal: 'a' }] } }, 'auth.tokens[0]: give exactly one of "sha256" or "token"'],
    [{ auth: { tokens: [{ principal: 'a', sha256: sha('x'), token: 'y'.repeat(20) }] } }, 'auth.tokens[0]: give exactly one of "sha256" or "token"'],
    [
      { auth: { tokens: [{ principal: 'a', sha256: sha('x').toUpperCase() }] } },
      'auth.tokens[0].sha256: must be 64 lowercase hex digits (the SHA-256 of the token)',
    ],
    [{ auth: { tokens: [{ principal: 'a', sha256: sha('x').slice(1) }] } }, 'auth.tokens[0].sha256: must be 64 lowercase hex digits'],
    [{ auth: { tokens: [{ principal: 'a', token: 'short' }] } }, 'auth.tokens[0].token: too short: at least 16 characters'],
    [{ auth: { tokens: [{ principal: 'a', token: 'Bearer abcdefghijklmnop' }] } }, 'auth.tokens[0].token: not a bearer token'],
    [{ auth: { tokens: [{ principal: '', sha256: sha('x') }] } }, 'auth.tokens[0].principal: must not be empty'],
    [{ auth: { tokens: [{ principal: 'a', roles: [''], sha256: sha('x') }] } }, 'auth.tokens[0].roles[0]: must not be empty'],
    [{ auth: { tokens: [{ principal: 'a', sha256: sha('x'), role: 'r' }] } }, 'auth.tokens[0]: unknown field "role" (did you mean "roles"?)'],
    [
      {
        auth: {
          tokens: [
            { principal: 'a', sha256: sha('abcdefghijklmnopq') },
            { principal: 'b', token: 'abcdefghijklmnopq' },
          ],
        },
      },
      'auth.tokens[1]: the same token as auth.tokens[0]',
    ],
    [{ auth: { jwt: { audience: 'mcp' } } }, 'auth.jwt: give one key source: "jwksUrl", "publicKey" or "secret"'],
    [{ auth: { jwt: { audience: 'mcp', secret: secret32, jwksUrl: 'https://h/jwks' } } }, 'auth.jwt: give one key source, not "jwksUrl" and "secret"'],
    [{ auth: { jwt: { secret: secret32 } } }, 'auth.jwt.audience:'],
    [{ auth: { jwt: { audience: [], secret: secret32 } } }, 'auth.jwt.audience:'],
    [
      { auth: { jwt: { audience: 'mcp', secret: secret32, algorithms: ['none'] } } },
      'auth.jwt.algorithms[0]: "none" is refused: unsigned tokens are never accepted',
    ],
    [{ auth: { jwt: { audience: 'mcp', jwksUrl: 'https://h/jwks', algorithms: ['RS256', 'None'] } } }, 'auth.jwt.algorithms[1]: "none" is refused'],
    [
      { auth: { jwt: { audience: 'mcp', jwksUrl: 'https://h/jwks', algorithms: ['HS256'] } } },
      'auth.jwt.algorithms[0]: HS256 needs a shared "secret"; with a public key anyone holding that key could sign tokens',
    ],
    [{ auth: { jwt: { audience: 'mcp', publicKey: '${PEM}', algorithms: ['RS256', 'HS384'] } } }, 'auth.jwt.algorithms[1]: HS384 needs a shared "secret"'],
    [
      { auth: { jwt: { audience: 'mcp', secret: secret32, algorithms: ['RS256'] } } },
      'auth.jwt.algorithms[0]: RS256 needs "jwksUrl" or "publicKey", not a "secret"',
    ],
    [{ auth: { jwt: { audience: 'mcp', secret: secret32, algorithms: ['HS512'] } } }, 'auth.jwt.algorithms[0]: HS512 needs a secret of at least 64 bytes'],
    [{ auth: { jwt: { audience: 'mcp', secret: 'short-secret' } } }, 'auth.jwt.algorithms[0]: HS256 needs a secret of at least 32 bytes'],
    [{ auth: { jwt: { audience: 'mcp', secret: secret32, algorithms: ['HS257'] } } }, 'auth.jwt.algorithms[0]: unknown algorithm "HS257"'],
    [{ auth: { jwt: { audience: 'mcp', secret: secret32, algorithms: [] } } }, 'auth.jwt.algorithms:'],
    [
      { auth: { jwt: { audience: 'mcp', jwksUrl: 'http://idp.example.com/jwks' } } },
      'auth.jwt.jwksUrl: must be https (plain http only for localhost, 127.0.0.1 or [::1])',
    ],
    [{ auth: { jwt: { audience: 'mcp', jwksUrl: 'not a url' } } }, 'auth.jwt.jwksUrl: Invalid URL'],
    [{ auth: { jwt: { audience: 'mcp', publicKey: 'not a key' } } }, 'auth.jwt.publicKey: not a PEM public key (-----BEGIN PUBLIC KEY-----)'],
    [
      { auth: { jwt: { audience: 'mcp', publicKey: '${PRIVATE_PEM}' } } },
      'auth.jwt.publicKey: is a private key: give the public key (-----BEGIN PUBLIC KEY-----)',
    ],
    [{ auth: { jwt: { audience: 'mcp', secret: secret32, jwks: 'https://h' } } }, 'auth.jwt: unknown field "jwks" (did you mean "jwksUrl"?)'],
    [{ auth: { tokens: [{ principal: 'a', token: '${UNSET_TOKEN}' }] } }, 'auth.tokens[0].token: environment variable UNSET_TOKEN is not set'],
    [{ stdio: { principal: '' } }, 'stdio.principal: must not be empty'],
    [{ stdio: { user: 'x' } }, 'stdio: unknown field "user"'],
  ])('rejects %j naming the path and the problem', (block, expected) => {
    let message = '';
    try {
      parseConfig({ servers, ...block }, { env: { PEM: rsaPem, PRIVATE_PEM: rsaPrivatePem } });
    } catch (err) {
      expect((err as ProxyError).code).toBe(ErrorCodes.CONFIG_INVALID);
      message = (err as Error).message;
    }
    expect(message).toContain(expected);
  });

  it('a bad auth block in a file is an error naming the file, the path and the problem', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'mcp-federate-auth-'));
    try {
      const file = path.join(dir, 'mcp.yaml');
      writeFileSync(
        file,
        'servers:\n  a:\n    command: x\nauth:\n  jwt:\n    audience: mcp\n    jwksUrl: https://idp.example.com/jwks\n    algorithms: [HS256]\n',
      );
      await expect(loadConfig({ file, env: {} })).rejects.toMatchObject({
        code: ErrorCodes.CONFIG_INVALID,
        message: `${file}: auth.jwt.algorithms[0]: HS256 needs a shared "secret"; with a public key anyone holding that key could sign tokens`,
      });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('policy and limits', () => {
  const servers = { docs: { command: 'x' }, Wiki_Main: { command: 'y' } };
  const withPolicy = (policy: unknown) => ({ servers, policy });
  const rule = (fields: Record<string, unknown>) => withPolicy({ rules: [{ id: 'r', effect: 'allow', ...fields }] });

  it('no policy block stays absent; limits default to none', () => {
    const c = parse({ servers });
    expect(c.policy).toBeUndefined();
    expect(c.limits).toEqual({ reads: [], completions: [], calls: [] });
  });

  it('fills the policy default and keeps rules as written', () => {
    const eng = {
      id: 'eng-docs',
      effect: 'allow',
      principals: ['alice'],
      roles: ['eng'],
      servers: ['docs', 'wiki-main'],
      resources: ['file:///handbook/**', 'docs+memo:**'],
      actions: ['list', 'read', 'subscribe', 'complete'],
    };
    expect(parse(withPolicy({ rules: [eng] })).policy).toEqual({ default: 'deny', rules: [eng] });
    expect(parse(withPolicy({})).policy).toEqual({ default: 'deny', rules: [] });
    expect(parse(withPolicy({ default: 'allow' })).policy).toEqual({ default: 'allow', rules: [] });
  });

  it.each([
    [rule({ resources: ['file:///***'] }), 'policy.rules[0].resources[0]: "file:///***": "***" is not a glob'],
    [rule({ resources: ['file:///ok/**', 'file:///[ab]'] }), 'policy.rules[0].resources[1]: "file:///[ab]": "[" is reserved'],
    [rule({ resources: ['FILE:///x/**'] }), 'policy.rules[0].resources[0]: "FILE:///x/**": write the scheme in lower case'],
    [rule({ resources: ['file:///a/../**'] }), 'policy.rules[0].resources[0]: "file:///a/../**": a "." or ".." segment never matches'],
    [rule({ resources: ['file:///%2e%2e/**'] }), 'policy.rules[0].resources[0]: "file:///%2e%2e/**": an escaped'],
    [rule({ resources: [] }), 'policy.rules[0].resources: must not be empty (leave "resources" out to match any)'],
    [rule({ actions: ['write'] }), 'policy.rules[0].actions[0]: Invalid option: expected one of "list"|"read"|"subscribe"|"complete"'],
    [rule({ actions: [] }), 'policy.rules[0].actions: must not be empty'],
    [rule({ principals: [] }), 'policy.rules[0].principals: must not be empty (leave "principals" out to match any)'],
    [rule({ roles: [''] }), 'policy.rules[0].roles[0]:'],
    [rule({ servers: ['nope'] }), 'policy.rules[0].servers[0]: "nope" is not a configured server id (configured: docs, wiki-main)'],
    [rule({ servers: ['Wiki_Main'] }), 'policy.rules[0].servers[0]: "Wiki_Main" is not a configured server id'],
    [
      rule({ servers: ['docs'], resources: ['wiki-main+file:///**'] }),
      `policy.rules[0].resources[0]: "wiki-main+file:///**" is limited to server "wiki-main", which this rule's "servers" leaves out, so it never matches`,
    ],
    [rule({ effect: 'permit' }), 'policy.rules[0].effect: must be "allow" or "deny"'],
    [withPolicy({ rules: [{ id: 'r' }] }), 'policy.rules[0].effect: must be "allow" or "deny"'],
    [withPolicy({ rules: [{ effect: 'allow' }] }), 'policy.rules[0].id:'],
    [rule({ id: 'has space' }), 'policy.rules[0].id: must match'],
    [rule({ id: 'default' }), 'policy.rules[0].id: "default" is reserved'],
    [rule({ id: 'invalid-uri' }), 'policy.rules[0].id: "invalid-uri" is reserved'],
    [rule({ principal: ['alice'] }), 'policy.rules[0]: unknown field "principal" (did you mean "principals"?)'],
    [
      withPolicy({
        rules: [
          { id: 'a', effect: 'allow' },
          { id: 'b', effect: 'deny' },
          { id: 'a', effect: 'deny' },
        ],
      }),
      'policy.rules[2].id: "a" is the id of an earlier rule; ids must be unique',
    ],
    [withPolicy({ default: 'maybe' }), 'policy.default:'],
    [withPolicy({ defualt: 'deny' }), 'policy: unknown field "defualt" (did you mean "default"?)'],
    [{ servers, limits: [{ roles: ['eng'] }] }, 'limits[0].readsPerMinute:'],
    [{ servers, limits: [{ readsPerMinute: 0 }] }, 'limits[0].readsPerMinute:'],
    [{ servers, limits: [{ readsPerMinute: 60, burst: 0 }] }, 'limits[0].burst:'],
    [{ servers, limits: [{ readsPerMinute: 60, principals: [] }] }, 'limits[0].principals: must not be empty'],
    [{ servers, limits: [{ readsPerMinute: 60, perSession: true }] }, 'limits[0]: unknown field "perSession"'],
    [{ servers, limit: [] }, 'unknown field "limit" (did you mean "limits"?)'],
    [{ servers, polcy: {} }, 'unknown field "polcy" (did you mean "policy"?)'],
  ])('rejects %j: %s', (raw, message) => {
    expect(failure(raw)).toContain(message);
  });

  it.each([
    [{ readsPerMinute: 600 }, 100],
    [{ readsPerMinute: 60 }, 10],
    [{ readsPerMinute: 7 }, 2],
    [{ readsPerMinute: 1 }, 1],
    [{ readsPerMinute: 600, burst: 50 }, 50],
  ])('limits %j get burst %i', (limit, burst) => {
    expect(parse({ servers, limits: [{ roles: ['eng'], ...limit }] }).limits.reads).toEqual([{ roles: ['eng'], ...limit, burst }]);
  });

  it('limits as { reads, completions }: completions get a burst too; the per-principal bounds have defaults', () => {
    const c = parse({ servers, limits: { reads: [{ readsPerMinute: 60 }], completions: [{ principals: ['bot'], completionsPerMinute: 12 }] } });
    expect(c.limits).toEqual({
      reads: [{ readsPerMinute: 60, burst: 10 }],
      completions: [{ principals: ['bot'], completionsPerMinute: 12, burst: 2 }],
      calls: [],
    });
    expect(parse({ servers, http: {} }).http).toMatchObject({ maxSessionsPerPrincipal: 100, maxListensPerPrincipal: 100 });
    expect(c.wire).toMatchObject({ maxInFlightPerPrincipal: 64, maxQueuedBytesPerPrincipal: 64 * 1024 * 1024 });
    expect(c.subscriptions.maxPerPrincipal).toBe(1000);
  });

  it.each([
    [{ servers, limits: { completions: [{ readsPerMinute: 5 }] } }, 'limits.completions[0]'],
    [{ servers, limits: { writes: [] } }, 'limits: unknown field'],
    [{ servers, http: { maxSessionsPerPrincipal: 0 } }, 'http.maxSessionsPerPrincipal'],
  ])('refuses bad limits %j', (input, message) => {
    expect(() => parse(input)).toThrow(message);
  });

  it('a policy error in a file names the file, the path and the problem', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'mcp-federate-policy-'));
    try {
      const file = path.join(dir, 'mcp.json');
      writeFileSync(file, JSON.stringify(rule({ servers: ['ghost'] })));
      await expect(loadConfig({ file, env: {} })).rejects.toMatchObject({
        code: ErrorCodes.CONFIG_INVALID,
        message: `${file}: policy.rules[0].servers[0]: "ghost" is not a configured server id (configured: docs, wiki-main)`,
      });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
