// `token new` in process: output shape, the hash, and every bad invocation exiting 2.
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { StaticTokenSchema } from '../../src/config/schema.js';
import { TOKEN_USAGE, runTokenCommand } from '../../src/commands/token.js';

function run(argv: string[], random?: (n: number) => Buffer) {
  const out: string[] = [];
  const err: string[] = [];
  const code = runTokenCommand(argv, { out: (l) => void out.push(l), err: (l) => void err.push(l) }, random);
  return { code, out, err };
}

describe('token new', () => {
  it('prints the base64url of 32 random bytes, then the entry with its SHA-256', () => {
    const bytes = Buffer.from(Array.from({ length: 32 }, (_, i) => i * 7));
    const { code, out, err } = run(['new', '--principal', 'alice', '--role', 'eng', '--role', 'ops'], (n) => {
      expect(n).toBe(32);
      return bytes;
    });
    expect(code).toBe(0);
    expect(err).toEqual([]);
    expect(out).toEqual([
      bytes.toString('base64url'),
      JSON.stringify({ principal: 'alice', roles: ['eng', 'ops'], sha256: createHash('sha256').update(bytes.toString('base64url')).digest('hex') }),
    ]);
    expect(StaticTokenSchema.parse(JSON.parse(out[1]!))).toEqual(JSON.parse(out[1]!));
  });

  it('roles default to [] and two runs make different tokens', () => {
    const a = run(['new', '--principal', 'bob']);
    const b = run(['new', '--principal=bob']);
    expect(JSON.parse(a.out[1]!)).toMatchObject({ principal: 'bob', roles: [] });
    expect(a.out[0]).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(a.out[0]).not.toBe(b.out[0]);
  });

  it('--help prints the usage on out', () => {
    expect(run(['--help'])).toEqual({ code: 0, out: TOKEN_USAGE.trimEnd().split('\n'), err: [] });
  });

  it.each([
    [[], 'missing subcommand "new"'],
    [['old', '--principal', 'a'], 'unknown subcommand "old"'],
    [['new'], '--principal <name> is required'],
    [['new', '--principal', ''], '--principal: must not be empty'],
    [['new', '--principal=', '--role', 'x'], '--principal: must not be empty'],
    [['new', '--principal', 'a', '--role', ''], '--role: must not be empty'],
    [['new', '--principal'], "Option '--principal <value>' argument missing"],
    [['new', '--principal', 'a', '--roles', 'x'], "Unknown option '--roles'"],
    [['new', '--principal', 'a', 'extra'], 'unexpected argument "extra"'],
  ])('%j exits 2 naming the problem, with the usage, printing nothing', (argv, problem) => {
    const { code, out, err } = run(argv);
    expect(code).toBe(2);
    expect(out).toEqual([]);
    expect(err[0]).toContain(`mcp-federate: token: ${problem}`);
    expect(err.join('\n')).toContain('mcp-federate token new --principal <name>');
  });
});
