// End to end: `mcp-federate token new` of the built CLI, its entry loaded from a config file, and bad auth configs exiting 2.
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/load.js';
import { createAuthenticator } from '../../src/serve/auth/authenticator.js';
import { runCli } from '../helpers/built-cli.js';
import { TempDir } from '../helpers/temp-dir.js';

describe.concurrent('token new', () => {
  it('prints a token and the entry of its hash; the entry in a config file authenticates the token', async () => {
    using dir = new TempDir();
    const result = await runCli(['token', 'new', '--principal', 'alice', '--role', 'eng', '--role', 'ops'], { cwd: dir.path, stripFinalNewline: false });
    expect(result).toMatchObject({ exitCode: 0, stderr: '' });
    const lines = String(result.stdout).split('\n');
    expect(lines).toHaveLength(3);
    expect(lines[2]).toBe('');
    const [token, json] = lines as [string, string];
    expect(token).toMatch(/^[A-Za-z0-9_-]+$/);
    expect(Buffer.from(token, 'base64url').length).toBeGreaterThanOrEqual(32);
    const entry = JSON.parse(json) as { principal: string; roles: string[]; sha256: string };
    expect(Object.keys(entry)).toEqual(['principal', 'roles', 'sha256']);
    expect(entry).toEqual({ principal: 'alice', roles: ['eng', 'ops'], sha256: createHash('sha256').update(token, 'utf8').digest('hex') });

    const file = dir.writeConfig({ servers: { a: { command: 'x' } }, auth: { tokens: [entry] } });
    const { config } = await loadConfig({ file, env: {} });
    const auth = createAuthenticator(config.auth!);
    expect(await auth.authenticate(`Bearer ${token}`)).toMatchObject({ ok: true, principal: 'alice', roles: ['eng', 'ops'] });
    expect(await auth.authenticate(`Bearer ${token.slice(0, -1)}`)).toEqual({ ok: false, reason: 'invalid' });
  });

  it('needs no configuration file, and two runs differ', async () => {
    using dir = new TempDir(); // an empty folder: nothing to find
    const [a, b] = await Promise.all([
      runCli(['token', 'new', '--principal', 'x'], { cwd: dir.path }),
      runCli(['token', 'new', '--principal', 'x'], { cwd: dir.path }),
    ]);
    expect([a.exitCode, b.exitCode]).toEqual([0, 0]);
    expect(String(a.stdout).split('\n')[0]).not.toBe(String(b.stdout).split('\n')[0]);
  });

  it.each([
    [['token'], 'missing subcommand "new"'],
    [['token', 'new'], '--principal <name> is required'],
    [['token', 'new', '--principal', ''], '--principal: must not be empty'],
    [['token', 'new', '--principal', 'a', '--admin'], "Unknown option '--admin'"],
  ])('%j exits 2 with the problem and the usage on stderr', async (argv, problem) => {
    const result = await runCli(argv);
    expect(result.exitCode).toBe(2);
    expect(result.stdout).toBe('');
    expect(String(result.stderr).split('\n')[0]!.startsWith(`mcp-federate: token: ${problem}`)).toBe(true);
    expect(String(result.stderr)).toContain('mcp-federate token new --principal <name> [--role <role>]...');
  });

  it('--help lists the token command', async () => {
    const result = await runCli(['--help']);
    expect(result.exitCode).toBe(0);
    expect(String(result.stdout)).toContain('mcp-federate token new --principal <name> [--role <role>]...');
  });
});

describe.concurrent('a bad auth or stdio block exits 2 naming the file, the path and the problem', () => {
  it.each([
    [{ auth: { tokens: [{ principal: 'a', sha256: 'ABC' }] } }, 'auth.tokens[0].sha256: must be 64 lowercase hex digits (the SHA-256 of the token)'],
    [
      { auth: { jwt: { audience: 'mcp', jwksUrl: 'https://idp.example.com/jwks', algorithms: ['none'] } } },
      'auth.jwt.algorithms[0]: "none" is refused: unsigned tokens are never accepted',
    ],
    [{ auth: { jwt: { audience: 'mcp', secret: 'too-short' } } }, 'auth.jwt.algorithms[0]: HS256 needs a secret of at least 32 bytes'],
    [{ stdio: { principal: '' } }, 'stdio.principal: must not be empty'],
  ])('%j', async (block, problem) => {
    using dir = new TempDir();
    const file = dir.writeConfig({ servers: { docs: { command: 'x' } }, ...block });
    const result = await runCli(['ls', '--config', file]);
    expect(result).toMatchObject({ exitCode: 2, stdout: '', stderr: `mcp-federate: ${file}: ${problem}` });
  });
});
