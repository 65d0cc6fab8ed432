// Real config files of each MCP client's shape load whole, with their placeholders read as their clients read them.
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { ErrorCodes } from '../../src/errors.js';
import { loadConfig } from '../../src/config/load.js';

const CLIENTS = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'fixtures', 'clients');
const file = (...parts: string[]) => path.join(CLIENTS, ...parts);
const userHome = '/home/tester';

describe('client config files, each loaded whole from a real file', () => {
  it("Claude Desktop's claude_desktop_config.json: mcpServers federated, globalShortcut set aside", async () => {
    const { config, ignoredKeys } = await loadConfig({ file: file('claude-desktop', 'claude_desktop_config.json'), env: {}, userHome });
    expect(ignoredKeys).toEqual(['globalShortcut']);
    expect(Object.keys(config.servers)).toEqual(['memory', 'filesystem']);
    expect(config.servers.filesystem).toMatchObject({ command: 'npx', env: { DEBUG: '0' } });
  });

  it("Claude Code's .mcp.json: stdio, http and sse entries, ${VAR} and ${VAR:-default}", async () => {
    const env = { API_KEY: 'k', TICKETS_TOKEN: 't0k' };
    const { config, ignoredKeys } = await loadConfig({ file: file('claude-code', '.mcp.json'), env, userHome });
    expect(ignoredKeys).toEqual([]);
    expect(config.servers.docs).toMatchObject({ command: 'node', env: { API_KEY: 'k', LEVEL: 'info' } });
    expect(config.servers.tickets).toMatchObject({ url: 'https://tickets.example.com/mcp', headers: { Authorization: 'Bearer t0k' } });
    expect(config.servers.legacy).toMatchObject({ transport: 'sse' });
  });

  it("Cursor's .cursor/mcp.json: ${workspaceFolder} is the folder the file is in, ${userHome}, ${env:NAME}", async () => {
    const env = { NOTES_TOKEN: 'n', SEARCH_KEY: 's' };
    const { config } = await loadConfig({ file: file('cursor', '.cursor', 'mcp.json'), env, userHome });
    expect(config.servers.notes).toMatchObject({
      args: [`${file('cursor', '.cursor')}/tools/notes.js`, '--home', userHome],
      env: { TOKEN: 'n' },
    });
    expect(config.servers.search).toMatchObject({ headers: { 'X-Api-Key': 's' } });
  });

  it("VS Code's .vscode/mcp.json: ${workspaceFolder} is the folder holding .vscode/, inputs from the environment", async () => {
    const env = { 'github-token': 'ghp_x', LANG: 'C.UTF-8' };
    const { config, ignoredKeys } = await loadConfig({ file: file('vscode', '.vscode', 'mcp.json'), env, userHome });
    expect(ignoredKeys).toEqual(['inputs']);
    expect(config.servers.github).toMatchObject({ headers: { Authorization: 'Bearer ghp_x' } });
    expect(config.servers.workspace).toMatchObject({ args: [`${file('vscode')}/server.js`], env: { HOME_DIR: userHome, LANG: 'C.UTF-8' } });
  });

  it('a VS Code input with no variable to supply it stops the load, naming the input and the variable, and is never passed on', async () => {
    const vscode = file('vscode', '.vscode', 'mcp.json');
    await expect(loadConfig({ file: vscode, env: { LANG: 'C' }, userHome })).rejects.toMatchObject({
      code: ErrorCodes.CONFIG_INVALID,
      message: `${vscode}: servers.github.headers.Authorization: \${input:github-token} is a VS Code input, which mcp-federate cannot prompt for: set the environment variable github-token or GITHUB_TOKEN, or write \${env:NAME} instead`,
    });
  });
});
