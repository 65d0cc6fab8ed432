// What a tool call or prompt get sends upstream: the client's hop fields and retry fields removed, the caller's log level added.
import { describe, expect, it } from 'vitest';
import { upstreamParamsOf, withMeta } from '../../src/federation/tools.js';
import { callerLogMeta } from '../../src/eras/log-level.js';

const LEVEL = 'io.modelcontextprotocol/logLevel';
const ctx = (envelope?: Record<string, unknown>) => ({ mcpReq: { envelope } }) as never;

describe('upstream params of a call', () => {
  it('drop the client’s progress token, reserved _meta keys, inputResponses and requestState; keep the rest', () => {
    const params = {
      name: 'ask',
      arguments: { a: 1 },
      inputResponses: { name: { action: 'accept' } },
      requestState: 'the-gateway’s',
      _meta: { progressToken: 7, 'io.modelcontextprotocol/protocolVersion': '2026-07-28', mine: true },
    };
    expect(upstreamParamsOf(params)).toEqual({ name: 'ask', arguments: { a: 1 }, _meta: { mine: true } });
    expect(upstreamParamsOf({ name: 'x' })).toEqual({ name: 'x' });
  });

  it('carry the caller’s log level: its own envelope’s for 2026-07-28 (none when it set none), every message for 2025-11-25', () => {
    expect(callerLogMeta('modern', ctx({ [LEVEL]: 'warning' }))).toEqual({ [LEVEL]: 'warning' });
    expect(callerLogMeta('modern', ctx({}))).toBeUndefined();
    expect(callerLogMeta('legacy', ctx())).toEqual({ [LEVEL]: 'debug' });
    expect(withMeta({ name: 'x', _meta: { mine: true } }, { [LEVEL]: 'info' })).toEqual({ name: 'x', _meta: { mine: true, [LEVEL]: 'info' } });
    expect(withMeta({ name: 'x' }, undefined)).toEqual({ name: 'x' });
    // With the upstream's name: one copy, the name kept in its place and _meta added after it, the caller's object untouched.
    const params = { name: 'a__x', arguments: { n: 1 } };
    expect(JSON.stringify(withMeta(params, { [LEVEL]: 'debug' }, 'x'))).toBe(`{"name":"x","arguments":{"n":1},"_meta":{"${LEVEL}":"debug"}}`);
    expect(JSON.stringify(withMeta(params, undefined, 'x'))).toBe('{"name":"x","arguments":{"n":1}}');
    expect(params).toEqual({ name: 'a__x', arguments: { n: 1 } });
    const hostile = JSON.parse('{"name":"a__x","__proto__":{"polluted":true}}') as Record<string, unknown>;
    const out = withMeta(hostile, { [LEVEL]: 'debug' }, 'x');
    expect(Object.getPrototypeOf(out)).toBe(Object.prototype);
    expect(Object.hasOwn(out, '__proto__')).toBe(true);
  });
});
