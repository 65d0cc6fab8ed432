// `policy check` in process: decisions and exit codes, invocation errors, config errors, no-policy warning.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runPolicyCommand } from '../../src/commands/policy-check.js';
import { ErrorCodes } from '../../src/errors.js';

const dir = mkdtempSync(path.join(os.tmpdir(), 'mcp-federate-policy-check-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const write = (name: string, config: unknown) => {
  const file = path.join(dir, name);
  writeFileSync(file, JSON.stringify(config));
  return file;
};

const servers = { docs: { command: 'x' }, mem: { command: 'y' } };
const configFile = write('policy.json', {
  servers,
  policy: {
    default: 'deny',
    rules: [
      {
        id: 'eng-docs',
        effect: 'allow',
        principals: ['alice'],
        roles: ['eng'],
        servers: ['docs'],
        resources: ['file:///handbook/**'],
        actions: ['list', 'read', 'subscribe', 'complete'],
      },
      { id: 'drafts', effect: 'deny', resources: ['file:///handbook/drafts/**'] },
      { id: 'support-ro', effect: 'allow', roles: ['support'], annotations: { readOnlyHint: true }, actions: ['list', 'call'] },
      { id: 'greet', effect: 'allow', prompts: ['greet'], actions: ['get'] },
      { id: 'no-delete', effect: 'deny', tools: ['delete_*'] },
    ],
  },
});

async function run(...argv: string[]) {
  const out = { stdout: '', stderr: '' };
  const code = await runPolicyCommand(argv, { stdout: (t) => void (out.stdout += t), stderr: (t) => void (out.stderr += t) }, { env: {} });
  return { code, ...out };
}

describe('policy check', () => {
  const check = (...rest: string[]) => run('check', '--config', configFile, ...rest);

  it.each([
    [['--principal', 'alice', '--role', 'eng', '--action', 'read', 'docs+file:///handbook/a.md'], 0, 'allow eng-docs'],
    [['--principal', 'alice', '--role', 'sales', '--role', 'eng', '--action', 'subscribe', 'docs+file:///handbook/a.md'], 0, 'allow eng-docs'],
    [['--principal', 'alice', '--action', 'read', 'docs+file:///handbook/a.md'], 1, 'deny default'],
    [['--principal', 'bob', '--role', 'eng', '--action', 'read', 'docs+file:///handbook/a.md'], 1, 'deny default'],
    [['--principal', 'alice', '--role', 'eng', '--action', 'read', 'mem+file:///handbook/a.md'], 1, 'deny default'],
    [['--principal', 'alice', '--role', 'eng', '--action', 'read', 'docs+file:///handbook/drafts/x'], 1, 'deny drafts'],
    [['--principal', 'alice', '--role', 'eng', '--action', 'read', 'docs+file:///handbook/%2e%2e/secrets'], 1, 'deny invalid-uri'],
    [['--principal', 'alice', '--role', 'eng', '--action', 'read', 'docs+FILE://localhost/handbook/x/a.md'], 0, 'allow eng-docs'],
    [['--principal', 'alice', '--role', 'eng', '--action', 'read', 'docs+FILE:///handbook/x/../a.md'], 1, 'deny invalid-uri'], // dot segments: refused (issue 14)
    [['--principal', 'alice', '--role', 'eng', '--action', 'list', 'docs+file:///handbook/{path}'], 0, 'allow eng-docs'],
    [['--principal', 'alice', '--role', 'eng', '--action', 'list', 'docs+file:///handbook/drafts/{path}'], 1, 'deny drafts'],
    [['--principal', 'sam', '--role', 'support', '--action', 'call', '--tool', 'docs__search', '--annotation', 'readOnlyHint=true'], 0, 'allow support-ro'],
    [['--principal', 'sam', '--role', 'support', '--action', 'call', '--tool', 'docs__search'], 1, 'deny default'],
    [['--principal', 'sam', '--role', 'support', '--action', 'call', '--tool', 'docs__delete_x', '--annotation', 'readOnlyHint=true'], 1, 'deny no-delete'],
    [['--principal', 'sam', '--action', 'get', '--prompt', 'mem__greet'], 0, 'allow greet'],
    [['--principal', 'sam', '--action', 'complete', '--prompt', 'mem__greet'], 1, 'deny default'],
  ])('%j → exit %i, %j', async (args, code, line) => {
    const result = await check(...args);
    expect(result).toEqual({ code, stdout: `${line}\n`, stderr: '' });
  });

  it.each([
    [['--action', 'read', 'docs+file:///a'], '--principal is required'],
    [['--principal', '', '--action', 'read', 'docs+file:///a'], '--principal is required'],
    [['--principal', 'alice', 'docs+file:///a'], '--action is required'],
    [['--principal', 'alice', '--action', 'write', 'docs+file:///a'], '--action: expected one of list, read, subscribe, complete, call, get, got "write"'],
    [['--principal', 'alice', '--role', '', '--action', 'read', 'docs+file:///a'], '--role must not be empty'],
    [['--principal', 'alice', '--action', 'read'], 'a namespaced URI is required'],
    [['--principal', 'alice', '--action', 'read', 'docs+file:///a', 'docs+file:///b'], 'one URI only'],
    [
      ['--principal', 'alice', '--action', 'read', 'file:///handbook/a.md'],
      '"file:///handbook/a.md" is not namespaced with a configured server id (<server-id>+<uri>; configured: docs, mem)',
    ],
    [['--principal', 'alice', '--action', 'read', 'wiki+file:///a'], '"wiki+file:///a" is not namespaced'],
    [['--principal', 'alice', '--action', 'read', '--bogus', 'docs+file:///a'], "Unknown option '--bogus'"],
  ])('%j is a bad invocation: %s', async (args, reason) => {
    const result = await check(...args);
    expect(result.code).toBe(2);
    expect(result.stdout).toBe('');
    expect(result.stderr).toContain(reason);
    expect(result.stderr).toMatch(/^mcp-federate: /);
    expect(result.stderr).toContain('Usage:\n  mcp-federate policy check');
  });

  it.each([[[]], [['frob']], [['chek', '--principal', 'a']]])('policy %j is an unknown command', async (args) => {
    const result = await run(...args);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/^mcp-federate: unknown command: policy/);
  });

  it('--help prints the usage', async () => {
    const result = await run('--help');
    expect(result).toMatchObject({ code: 0, stderr: '' });
    expect(result.stdout).toMatch(/^Usage:\n {2}mcp-federate policy check/);
  });

  it('a config error is the loader’s error (exit 2 in the CLI), naming file, path and problem', async () => {
    const bad = write('bad.json', { servers, policy: { rules: [{ id: 'r', effect: 'allow', actions: ['write'] }] } });
    await expect(run('check', '--config', bad, '--principal', 'a', '--action', 'read', 'docs+file:///a')).rejects.toMatchObject({
      code: ErrorCodes.CONFIG_INVALID,
      message: expect.stringContaining(`${bad}: policy.rules[0].actions[0]:`),
    });
  });

  it('without a policy block: allowed by default, with a warning', async () => {
    const open = write('open.json', { servers });
    const result = await run('check', '--config', open, '--principal', 'anyone', '--action', 'read', 'docs+file:///secrets/x');
    expect(result).toEqual({ code: 0, stdout: 'allow default\n', stderr: `mcp-federate: ${open} has no "policy" block: every request is allowed\n` });
  });

  it('needs no auth secret: the token and JWT variables are never resolved, nor upstream ones', async () => {
    const team = write('team.json', {
      servers: {
        docs: { command: 'x', env: { API_KEY: '${DOCS_KEY_NOT_SET}' } },
        mem: { url: 'https://h/mcp', headers: { Authorization: 'Bearer ${input:mem-token}' } },
      },
      auth: { tokens: [{ principal: 'alice', roles: ['eng'], token: '${ALICE_TOKEN_NOT_SET}' }], jwt: { audience: 'mcp', secret: '${JWT_SECRET_NOT_SET}' } },
      policy: { default: 'deny', rules: [{ id: 'eng', effect: 'allow', roles: ['eng'], servers: ['docs'] }] },
    });
    const result = await run('check', '--config', team, '--principal', 'alice', '--role', 'eng', '--action', 'read', 'docs+file:///a.md');
    expect(result).toEqual({ code: 0, stdout: 'allow eng\n', stderr: '' });
  });
});
