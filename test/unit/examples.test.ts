// Every shipped example configuration stays valid.
import { readdirSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/load.js';

/** The gateway configurations (docker-compose.yml is Docker's; the folders hold Prometheus, Grafana and systemd files). */
const examples = readdirSync(new URL('../../examples/', import.meta.url)).filter((f) => /\.(json|ya?ml)$/.test(f) && f !== 'docker-compose.yml');
const load = (file: string) =>
  loadConfig({
    file: `examples/${file}`,
    env: {
      TICKETS_TOKEN: 't',
      WIKI_TOKEN: 'w',
      ALICE_TOKEN: 'alice-example-token-0123',
      BOB_TOKEN: 'bob-example-token-01234',
      MCP_TOKEN: 'client-example-token-0123',
      METRICS_TOKEN: 'scrape-example-token-0123',
    },
  });

describe('examples', () => {
  it('includes the default federation, the remote and mcpServers forms, a Claude Desktop file and YAML', () => {
    expect(examples).toEqual(expect.arrayContaining(['mcp-federate.json', 'remote.json', 'mcp-servers.json', 'claude-desktop.json', 'mcp-federate.yaml']));
  });

  it.each(examples)('%s loads and validates', async (file) => {
    const { config } = await load(file);
    expect(Object.keys(config.servers).length).toBeGreaterThan(0);
  });

  it('the YAML example is the default federation under the same namespaces', async () => {
    const yaml = (await load('mcp-federate.yaml')).config.servers;
    const json = (await load('mcp-federate.json')).config.servers;
    expect(Object.keys(yaml)).toEqual(Object.keys(json));
    expect(Object.values(yaml).map((s) => s.name)).toEqual(['Everything', 'Knowledge Graph']);
  });

  it('the Claude Desktop file loads as it is, its own settings set aside', async () => {
    const { config, ignoredKeys } = await load('claude-desktop.json');
    expect(Object.keys(config.servers)).toEqual(['memory', 'everything-demo']);
    expect(ignoredKeys).toEqual(['globalShortcut']);
  });
});
