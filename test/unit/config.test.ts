// Config schema, interpolation and error messages.
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
    [{ servers: { Docs: { command: 'x' } } }, 'servers.Docs: server ids must match'],
    [{ servers: { a_b: { command: 'x' } } }, 'server ids must match'],
    [{ servers: { 'a+b': { command: 'x' } } }, 'server ids must match'],
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
