// Every shipped example configuration stays valid.
import { readdirSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';

const examples = readdirSync(new URL('../../examples/', import.meta.url)).filter((f) => f.endsWith('.json'));

describe('examples', () => {
  it('includes the default federation and the remote and mcpServers forms', () => {
    expect(examples).toEqual(expect.arrayContaining(['mcp-federate.json', 'remote.json', 'mcp-servers.json']));
  });

  it.each(examples)('%s loads and validates', async (file) => {
    const { config } = await loadConfig({ file: `examples/${file}`, env: { TICKETS_TOKEN: 't', WIKI_TOKEN: 'w' } });
    expect(Object.keys(config.servers).length).toBeGreaterThan(0);
  });
});
