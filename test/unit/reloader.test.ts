// createReloader: appliers run only for an accepted reload, once, with the new config; refusals and bad files leave them untouched.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { jsonLinesSink } from '../helpers/logs.js';
import { loadConfig } from '../../src/config/load.js';
import { createReloader } from '../../src/config/reloader.js';
import type { FederateConfig } from '../../src/config/schema.js';
import { createLogger } from '../../src/logger.js';

const SERVERS = { a: { command: 'a' } };
const POLICY = { default: 'deny', rules: [] };

describe('createReloader', () => {
  let dir: string | undefined;
  afterEach(() => {
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  async function setup(name: string, initial: string) {
    dir = mkdtempSync(path.join(os.tmpdir(), 'reloader-'));
    const file = path.join(dir, name);
    writeFileSync(file, initial);
    const { records: logs, destination } = jsonLinesSink();
    const applied: FederateConfig[] = [];
    return { file, logs, applied, destination };
  }

  it('applies an accepted file once, refuses a weakening and a broken file without calling the appliers', async () => {
    const { file, logs, applied, destination } = await setup('c.json', JSON.stringify({ servers: SERVERS, policy: POLICY }));
    const running = await loadConfig({ file });
    const reloader = createReloader({ file, running, context: {}, logger: createLogger({ level: 'info', destination }) });
    reloader.on((next) => applied.push(next));

    writeFileSync(file, JSON.stringify({ servers: SERVERS }));
    expect(await reloader.reload('test')).toBe('refused');
    writeFileSync(file, '{ "servers": ');
    expect(await reloader.reload('test')).toBe('invalid');
    writeFileSync(file, JSON.stringify({ servers: SERVERS, policy: POLICY }));
    expect(await reloader.reload('test')).toBe('unchanged');
    expect(applied).toEqual([]);

    writeFileSync(file, JSON.stringify({ servers: SERVERS, policy: { default: 'allow' } }));
    expect(await reloader.reload('test')).toBe('applied');
    expect(applied.map((c) => c.policy?.default)).toEqual(['allow']);
    // Compared with what now runs: leaving the policy out is still refused.
    writeFileSync(file, JSON.stringify({ servers: SERVERS }));
    expect(await reloader.reload('test')).toBe('refused');
    await reloader.close();
    await reloader.close();
    expect(logs.map((r) => r.msg)).toEqual([
      'configuration reload refused: it would weaken security without saying so; keeping the running one',
      'configuration not reloaded: keeping the running one',
      'configuration unchanged',
      'configuration reloaded',
      'configuration reload refused: it would weaken security without saying so; keeping the running one',
    ]);
    expect(logs[3]).toMatchObject({ changed: ['policy'] });
  });

  it('an applier that throws is logged; the others still run', async () => {
    const { file, logs, applied, destination } = await setup('c.json', JSON.stringify({ servers: SERVERS, policy: POLICY }));
    const reloader = createReloader({ file, running: await loadConfig({ file }), context: {}, logger: createLogger({ level: 'info', destination }) });
    reloader.on(() => {
      throw new Error('boom');
    });
    reloader.on((next) => applied.push(next));
    writeFileSync(file, JSON.stringify({ servers: SERVERS, policy: { default: 'deny', rules: [{ id: 'r', effect: 'allow' }] } }));
    expect(await reloader.reload('test')).toBe('applied');
    expect(applied).toHaveLength(1);
    expect(logs.find((r) => r.msg === 'configuration reload: applying failed part-way')).toMatchObject({ err: 'Error: boom' });
  });

  it('a JavaScript config is not reloaded (Node would serve the cached module): an error says to restart', async () => {
    const { file, logs, applied, destination } = await setup('mcp-federate.config.mjs', `export default ${JSON.stringify({ servers: SERVERS })};`);
    const reloader = createReloader({ file, running: await loadConfig({ file }), context: {}, logger: createLogger({ level: 'info', destination }) });
    reloader.on((next) => applied.push(next));
    writeFileSync(file, `export default ${JSON.stringify({ servers: { b: { command: 'b' } } })};`);
    expect(await reloader.reload('SIGHUP')).toBe('invalid');
    expect(applied).toEqual([]);
    expect(logs[0]).toMatchObject({ level: 50, msg: 'configuration not reloaded: a JavaScript configuration file is read once; restart to apply it' });
  });
});
