// The access log through the real proxy core: one info line per request with method, server, outcome, duration, principal and session; never a URI, contents or token; switchable off.
import { describe, expect, it } from 'vitest';
import { createUpstreamServer } from '../helpers/upstream-server.mjs';
import { startHarness } from '../helpers/harness.js';

const upstreams = { docs: () => createUpstreamServer({ resources: [{ uri: 'file:///a.md', name: 'a' }] }).server };
const accessLines = (logs: Record<string, unknown>[]) => logs.filter((r) => r.access === true);

describe('access log', () => {
  it('writes one line per request, with no URI or contents in it', async () => {
    await using h = await startHarness({ upstreams });
    const client = await h.client();
    await client.readResource({ uri: 'docs+file:///a.md' });
    await expect(client.readResource({ uri: 'docs+file:///missing.md' })).rejects.toThrow();
    await client.listResources();
    const lines = accessLines(h.logs);
    expect(lines.map((l) => [l.method, l.server, l.outcome])).toEqual([
      ['resources/read', 'docs', 'ok'],
      ['resources/read', 'docs', 'not_found'],
      ['resources/list', undefined, 'ok'],
    ]);
    for (const l of lines) {
      expect(l.level).toBe(30); // info
      expect(l.msg).toBe('request');
      expect(typeof l.durationMs).toBe('number');
      expect(typeof l.principal).toBe('string');
      expect(typeof l.session).toBe('string');
    }
    expect(JSON.stringify(lines)).not.toMatch(/file:\/\/|content of/);
    // Access lines skip the logger's redaction pass, so they may hold only these fields.
    const allowed = new Set(['level', 'time', 'name', 'access', 'method', 'server', 'outcome', 'rule', 'cache', 'durationMs', 'principal', 'session', 'msg']);
    for (const l of lines) expect(Object.keys(l).filter((k) => !allowed.has(k))).toEqual([]);
    await client.close();
  });

  it('is off with accessLog: false', async () => {
    await using h = await startHarness({ upstreams, config: { accessLog: false } });
    const client = await h.client();
    await client.readResource({ uri: 'docs+file:///a.md' });
    expect(accessLines(h.logs)).toEqual([]);
    await client.close();
  });
});
