// examples/cluster/: one config file serves every replica (its id and audit file from REPLICA), and the redis block's defaults.
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/load.js';
import { ConfigSchema, RedisSchema } from '../../src/config/schema.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const FILE = path.join(ROOT, 'examples', 'cluster', 'mcp-federate.json');

describe('examples/cluster', () => {
  it.each(['r1', 'r2', 'r3'])('replica %s gets its own chain id and audit file from one config', async (replica) => {
    const { config } = await loadConfig({ file: FILE, env: { REPLICA: replica } });
    expect(config.redis).toMatchObject({ url: 'redis://127.0.0.1:6379', replicas: 3, chain: replica, reloadChannel: 'reload' });
    expect(config.audit?.file).toBe(path.join(ROOT, 'examples', 'cluster', `audit-${replica}.jsonl`));
    expect(config.http?.allowedHosts).toEqual(['127.0.0.1:7330', 'localhost:7330']);
  });

  it('the redis block: defaults, and what it refuses', () => {
    expect(RedisSchema.parse({})).toEqual({
      url: 'redis://127.0.0.1:6379',
      keyPrefix: 'mcp-federate:',
      tls: false,
      replicas: 1,
      dedupeMs: 500,
      timeoutMs: 250,
      leaseMs: 250,
    });
    for (const bad of [
      { url: 'http://x' },
      { replicas: 0 },
      { chain: 'a/b' },
      { passwordEnv: 'not a name' },
      { password: 'inline' },
      { leaseMs: -1 },
      { leaseMs: 60_001 },
    ]) {
      expect(RedisSchema.safeParse(bad).success, JSON.stringify(bad)).toBe(false);
    }
    // Without the block, nothing of it is in the config.
    expect(ConfigSchema.parse({ servers: { a: { command: 'x' } } })).not.toHaveProperty('redis');
  });
});
