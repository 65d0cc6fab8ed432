// Every shipped example configuration stays valid.
import { readdirSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';

const examples = readdirSync(new URL('../../examples/', import.meta.url)).filter((f) => f.endsWith('.json'));
const load = (file: string) => loadConfig({ file: `examples/${file}`, env: { TICKETS_TOKEN: 't', WIKI_TOKEN: 'w' } });

describe('examples', () => {
  it('includes the default federation, the remote and mcpServers forms, and a Claude Desktop file', () => {
    expect(examples).toEqual(expect.arrayContaining(['mcp-federate.json', 'remote.json', 'mcp-servers.json', 'claude-desktop.json']));
  });

  it.each(examples)('%s loads and validates', async (file) => {
    const { config } = await load(file);
    expect(Object.keys(config.servers).length).toBeGreaterThan(0);
  });

  it('the Claude Desktop file loads as it is, its own settings set aside', async () => {
    const { config, ignoredKeys } = await load('claude-desktop.json');
    expect(Object.keys(config.servers)).toEqual(['memory', 'everything-demo']);
    expect(ignoredKeys).toEqual(['globalShortcut']);
  });
});
