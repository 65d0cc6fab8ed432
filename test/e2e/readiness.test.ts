// Readiness and liveness through the built CLI: /readyz follows required upstreams (and agrees with `ls`); a silent (SIGSTOPped) upstream is recycled.
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { runCli, upstreams } from '../helpers/built-cli.js';
import { within } from '../helpers/gate.js';
import { HttpGatewayProcess } from '../helpers/http-gateway.js';

/** The pids a fixture wrote to its `--starts-file`, oldest first. */
const startsOf = (file: string): number[] => readFileSync(file, 'utf8').trim().split('\n').map(Number);

class Gateway extends HttpGatewayProcess {
  configFile = '';
  static async start(configOf: (file: (name: string) => string) => Record<string, unknown>): Promise<Gateway> {
    const g = new Gateway();
    g.configFile = g.dir.writeConfig(configOf((name) => g.dir.file(name)));
    await g.spawn(g.configFile, { logLevel: 'info' });
    return g;
  }
  async readyz(): Promise<{ status: number; body: { ready: boolean; notReady?: string[]; upstreams?: { server: string; status: string }[] } }> {
    const res = await fetch(new URL('/readyz', this.url));
    return { status: res.status, body: (await res.json()) as never };
  }
  async client(): Promise<Client> {
    const client = new Client({ name: 'readiness-test', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(this.url));
    return client;
  }
}

describe('/readyz and required upstreams', () => {
  let g: Gateway;
  let gate = '';
  let starts = '';
  beforeAll(async () => {
    g = await Gateway.start((file) => {
      gate = file('fx-may-start');
      starts = file('fx-starts');
      writeFileSync(gate, '');
      return {
        servers: {
          fx: upstreams.fixture('--resources', '2', '--start-when-file', gate, '--starts-file', starts),
          optional: { ...upstreams.fixture('--exit-on-start'), required: false },
        },
        reconnect: { initialDelayMs: 20, maxDelayMs: 100 },
      };
    });
    await within(g.started, 'the upstreams to start');
  });
  afterAll(async () => {
    await g?.[Symbol.asyncDispose]();
  });

  it('is ready with every required upstream ready, an optional one down; `ls` agrees (exit 0)', async () => {
    const ready = await g.readyz();
    expect(ready.status).toBe(200);
    expect(ready.body.ready).toBe(true);
    expect(ready.body.upstreams).toEqual([
      { server: 'fx', status: 'ready' },
      { server: 'optional', status: expect.stringMatching(/unavailable|connecting/) },
    ]);
    const ls = await runCli(['ls', '--json', '--config', g.configFile]);
    expect(ls.exitCode).toBe(0);
  });

  it('answers 503 naming the required upstream while it is down, and 200 once it is back', async () => {
    // The next child will not answer initialize until the gate file exists again.
    rmSync(gate);
    const closed = g.nextLog((r) => r.msg === 'upstream connection closed' && r.server === 'fx');
    process.kill(startsOf(starts)[0]!, 'SIGKILL');
    await within(closed, 'the gateway to see fx die');
    const down = await g.readyz();
    expect(down.status).toBe(503);
    expect(down.body.ready).toBe(false);
    expect(down.body.notReady).toEqual(['upstream:fx']);

    const back = g.nextLog((r) => r.msg === 'upstream ready' && r.server === 'fx');
    writeFileSync(gate, '');
    await within(back, 'fx to come back', 60_000);
    const up = await g.readyz();
    expect(up.status).toBe(200);
    expect(up.body.ready).toBe(true);
  });

  it('`ls` exits 1 when a required upstream is down, as /readyz would answer 503', async () => {
    const file = g.dir.writeConfig({ servers: { fx: upstreams.fixture('--resources', '1'), gone: upstreams.missing() } }, 'required-down.json');
    expect((await runCli(['ls', '--json', '--config', file])).exitCode).toBe(1);
    const optional = g.dir.writeConfig(
      { servers: { fx: upstreams.fixture('--resources', '1'), gone: { ...upstreams.missing(), required: false } } },
      'optional-down.json',
    );
    expect((await runCli(['ls', '--json', '--config', optional])).exitCode).toBe(0);
  });
});

describe('upstream liveness', () => {
  const INTERVAL_MS = 1000;
  let g: Gateway;
  let starts = '';
  let client: Client;
  beforeAll(async () => {
    g = await Gateway.start((file) => ({
      servers: { fx: { ...upstreams.fixture('--resources', '2', '--starts-file', (starts = file('starts'))), pingIntervalMs: INTERVAL_MS, pingFailures: 2 } },
      reconnect: { initialDelayMs: 20, maxDelayMs: 100 },
      metrics: {},
    }));
    await within(g.started, 'the upstreams to start');
    client = await g.client();
  });
  afterAll(async () => {
    for (const pid of startsOf(starts)) {
      try {
        process.kill(pid, 'SIGKILL'); // a stopped child left behind by a failed run
      } catch {
        // gone already
      }
    }
    await client?.close().catch(() => undefined);
    await g?.[Symbol.asyncDispose]();
  });

  it('recycles an upstream stopped with SIGSTOP (connected, silent) within two ping intervals; its read in flight fails, the next succeeds', async () => {
    expect((await client.readResource({ uri: 'fx+fixture://res/0' })).contents).toHaveLength(1);
    const [pid] = startsOf(starts);
    const recycling = g.nextLog((r) => r.msg === 'upstream not answering pings: recycling it');
    const back = g.nextLog((r) => r.msg === 'upstream ready' && r.server === 'fx');
    const stoppedAt = Date.now();
    process.kill(pid!, 'SIGSTOP');
    // A read sent to the silent upstream: answered with an error once it is recycled, not after its 30 s timeout.
    const inFlight = client.readResource({ uri: 'fx+fixture://res/1' }).then(
      () => 'answered',
      (err: Error) => err.message,
    );
    const record = await within(recycling, 'the silent upstream to be recycled', 20_000);
    // Two intervals from the stop, with one interval of slack for a loaded machine's timers.
    expect((record.time as number) - stoppedAt).toBeLessThanOrEqual(3 * INTERVAL_MS);
    expect(await within(inFlight, 'the read in flight to be answered', 20_000)).not.toBe('answered');
    await within(back, 'fx to be back', 20_000);
    expect(startsOf(starts)).toHaveLength(2);
    expect((await client.readResource({ uri: 'fx+fixture://res/1' })).contents).toHaveLength(1);
    const metrics = await (await fetch(new URL('/metrics', g.url))).text();
    expect(metrics).toContain('mcp_federate_upstream_last_failure{server="fx",class="ping"} 1');
    expect(metrics).toContain('mcp_federate_upstream_reconnects_total{server="fx"} 1');
  });
});
