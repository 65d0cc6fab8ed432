// End to end: `mcp-federate policy check` through the built CLI — output and exit codes 0, 1 and 2.
import { describe, expect, it } from 'vitest';
import { runCli } from '../helpers/built-cli.js';
import { TempDir } from '../helpers/temp-dir.js';

const NO_STACK = /^\s+at /m;

const config = {
  servers: { docs: { command: 'never-started' } },
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
    ],
  },
};

describe.concurrent('policy check', () => {
  it('allowed: prints the rule and exits 0', async () => {
    using dir = new TempDir();
    const file = dir.writeConfig(config);
    const result = await runCli([
      'policy',
      'check',
      '--config',
      file,
      '--principal',
      'alice',
      '--role',
      'eng',
      '--action',
      'read',
      'docs+file:///handbook/a.md',
    ]);
    expect(result).toMatchObject({ exitCode: 0, stdout: 'allow eng-docs', stderr: '' });
  });

  it('denied: prints the deciding rule (default) and exits 1', async () => {
    using dir = new TempDir();
    const file = dir.writeConfig(config);
    const result = await runCli([
      'policy',
      'check',
      '--config',
      file,
      '--principal',
      'alice',
      '--role',
      'eng',
      '--action',
      'read',
      'docs+file://localhost/secrets',
    ]); // compared as file:///secrets (a dot segment would be invalid-uri)
    expect(result).toMatchObject({ exitCode: 1, stdout: 'deny default', stderr: '' });
  });

  it.each([
    [['--principal', 'alice', '--action', 'read'], 'policy check: a namespaced URI is required'],
    [['--action', 'read', 'docs+file:///a'], 'policy check: --principal is required'],
    [
      ['--principal', 'alice', '--action', 'delete', 'docs+file:///a'],
      'policy check: --action: expected one of list, read, subscribe, complete, call, get, got "delete"',
    ],
    [
      ['--principal', 'alice', '--action', 'read', 'file:///handbook/a.md'],
      'policy check: "file:///handbook/a.md" is not namespaced with a configured server id',
    ],
  ])('bad invocation %j: exit 2, one reason and the usage', async (args, reason) => {
    using dir = new TempDir();
    const file = dir.writeConfig(config);
    const result = await runCli(['policy', 'check', '--config', file, ...args]);
    expect(result.exitCode).toBe(2);
    expect(result.stdout).toBe('');
    expect(String(result.stderr).startsWith(`mcp-federate: ${reason}`)).toBe(true);
    expect(result.stderr).not.toMatch(NO_STACK);
  });

  it('a bad policy in the config: exit 2 naming the file, the path and the problem', async () => {
    using dir = new TempDir();
    const file = dir.writeConfig({ ...config, policy: { rules: [{ id: 'x', effect: 'allow', servers: ['wiki'] }] } });
    const result = await runCli(['policy', 'check', '--config', file, '--principal', 'alice', '--action', 'read', 'docs+file:///a']);
    expect(result).toMatchObject({
      exitCode: 2,
      stdout: '',
      stderr: `mcp-federate: ${file}: policy.rules[0].servers[0]: "wiki" is not a configured server id (configured: docs)`,
    });
  });

  it('--help lists policy check', async () => {
    const result = await runCli(['--help']);
    expect(result.exitCode).toBe(0);
    expect(result.stdout).toContain('mcp-federate policy check [--config <file>] --principal <name>');
  });
});
