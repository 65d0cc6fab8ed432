// Config schema, interpolation, server namespaces and error messages.
import { describe, expect, it } from 'vitest';
import { parseConfig } from '../../src/config.js';
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
    expect(c.list).toEqual({ maxItemsPerPage: 1000, maxPagesPerUpstream: 1000 });
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
    [{ servers: { a: { command: 'x', timeoutMS: 5 } } }, 'servers.a: unknown field(s) "timeoutMS"'],
    [{ servers: {} }, 'servers: at least one server is required'],
    [{}, 'servers: at least one server is required'],
    [{ servers: { a: { command: 'x' } }, mcpServers: { b: { command: 'y' } } }, 'mcpServers: give either'],
    [{ servers: { a: { command: 'x' } }, extra: 1 }, 'unknown field(s) "extra"'],
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
    [{ servers: { Memory: { command: 'x' }, memory: { command: 'y' } } }, 'servers.Memory and servers.memory both use namespace "memory"; set "namespace" on one'],
    [{ mcpServers: { brave_search: { command: 'x' }, 'brave-search': { command: 'y' } } }, 'mcpServers.brave_search and mcpServers.brave-search both use namespace "brave-search"; set "namespace" on one'],
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
