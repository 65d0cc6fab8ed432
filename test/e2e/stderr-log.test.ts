// The serving process's stderr log, written once per event-loop turn: every line whole and in order, the access lines all there, nothing lost when the process ends.
import { describe, expect, it } from 'vitest';
import { execa } from 'execa';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ROOT, upstreams } from '../helpers/built-cli.js';
import { HttpGatewayProcess } from '../helpers/http-gateway.js';
import { parseLogLines } from '../helpers/logs.js';
import { TempDir } from '../helpers/temp-dir.js';

const TOKEN = 'stderr-log-token-0123456789abcdef';
const LOGGER = new URL('dist/logger.js', `file://${ROOT}/`).href;

/** Runs a module script that logs through a batched stderr logger; its stderr and exit code. */
async function logScript(body: string): Promise<{ stderr: string; exitCode: number | undefined }> {
  const script = `import { createLogger, flushStderrLog } from ${JSON.stringify(LOGGER)};\nconst log = createLogger({ level: 'info', batch: true, pretty: false });\n${body}`;
  const r = await execa(process.execPath, ['--input-type=module', '-e', script], { reject: false, stdin: 'ignore' });
  return { stderr: r.stderr, exitCode: r.exitCode };
}

describe('the stderr log of a serving process', () => {
  it('holds every access line of concurrent requests, whole and in order, between listening and shutting down', async () => {
    using dir = new TempDir();
    const config = dir.writeConfig({
      auth: { tokens: [{ principal: 'alice', token: TOKEN }] },
      cache: { enabled: false },
      servers: { fx: upstreams.fixture('--resources', '50') },
    });
    await using g = await HttpGatewayProcess.serve(config, { logLevel: 'info' });
    await g.started;
    const client = new Client({ name: 'stderr-log', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(g.url, { requestInit: { headers: { authorization: `Bearer ${TOKEN}` } } }));
    const reads = 60;
    await Promise.all(Array.from({ length: reads }, (_, i) => client.readResource({ uri: `fx+fixture://res/${i % 50}` })));
    await client.close();
    expect(await g.stop()).toBe(0);
    const lines = g.log.split('\n').filter((l) => l !== '');
    const records = parseLogLines(g.log);
    expect(records).toHaveLength(lines.length); // every line is one whole JSON record
    const index = (msg: string) => records.findIndex((r) => r.msg === msg);
    const access = records.flatMap((r, i) => (r.access === true && r.method === 'resources/read' ? [i] : []));
    expect(access).toHaveLength(reads);
    for (const i of access) expect(records[i]).toMatchObject({ outcome: 'ok', server: 'fx', principal: 'alice' });
    expect(index('listening')).toBeLessThan(access[0]!);
    expect(index('shutting down')).toBeGreaterThan(access.at(-1)!);
    const times = records.map((r) => r.time as number);
    expect(times).toEqual([...times].sort((a, b) => a - b)); // written in the order they were logged
    expect(g.log).not.toContain(TOKEN);
  });
});

describe('a batched stderr logger', () => {
  it('writes the lines held when the process exits in the same turn', async () => {
    const r = await logScript(`log.info('one'); log.info('two'); process.exit(7);`);
    expect(r.exitCode).toBe(7);
    expect(parseLogLines(r.stderr).map((l) => l.msg)).toEqual(['one', 'two']);
  });

  it("writes the lines held before an uncaught exception's report, as an unbatched log would", async () => {
    const r = await logScript(`log.info('before'); setImmediate(() => { log.warn('about to fail'); throw new Error('boom'); });`);
    expect(r.exitCode).toBe(1);
    const before = r.stderr.indexOf('"msg":"before"');
    const warned = r.stderr.indexOf('"msg":"about to fail"');
    const boom = r.stderr.indexOf('Error: boom');
    expect(before).toBeGreaterThanOrEqual(0);
    expect(warned).toBeGreaterThan(before);
    expect(boom).toBeGreaterThan(warned);
  });

  it('keeps its lines before what the process writes to stderr itself after flushStderrLog', async () => {
    const r = await logScript(`log.info('logged'); flushStderrLog(); process.stderr.write('mcp-federate: plain\\n'); log.info('after');`);
    expect(r.exitCode).toBe(0);
    const at = (s: string) => r.stderr.indexOf(s);
    expect(at('"msg":"logged"')).toBeGreaterThanOrEqual(0);
    expect(at('mcp-federate: plain')).toBeGreaterThan(at('"msg":"logged"'));
    expect(at('"msg":"after"')).toBeGreaterThan(at('mcp-federate: plain'));
  });
});
