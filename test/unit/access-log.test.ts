// The access log's lean line: byte for byte what pino writes for the same record, hostile strings included; pino's path wherever the logger could differ.
import { describe, expect, it } from 'vitest';
import pino from 'pino';
import { createLogger, REDACT_PATHS, type Logger } from '../../src/logger.js';
import { asString, createAccessLog } from '../../src/observe/access-log.js';
import type { RequestRecord } from '../../src/observe/metrics.js';

/** A logger shaped as `createLogger` makes it, with a fixed clock, writing into `lines`. */
function fixedClockLogger(lines: string[], extra: pino.LoggerOptions = {}): Logger {
  return pino(
    {
      level: 'info',
      base: { name: 'mcp-federate' },
      redact: { paths: REDACT_PATHS, censor: '[redacted]' },
      timestamp: () => ',"time":1764183600000',
      ...extra,
    },
    { write: (s: string) => void lines.push(s) },
  );
}

/** The same record through the lean line and through pino: both lines. */
function both(record: RequestRecord, session: string, extra: pino.LoggerOptions = {}): [string | undefined, string | undefined] {
  const lean: string[] = [];
  const viaPino: string[] = [];
  createAccessLog(fixedClockLogger(lean, extra))(record, session);
  createAccessLog(fixedClockLogger(viaPino, extra), { lean: false })(record, session);
  expect(lean).toHaveLength(1);
  expect(viaPino).toHaveLength(1);
  return [lean[0], viaPino[0]];
}

const record = (over: Partial<RequestRecord> = {}): RequestRecord => ({
  method: 'resources/read',
  server: 'docs',
  outcome: 'ok',
  effect: 'allow',
  rule: 'default',
  cache: undefined,
  durationMs: 0.4216,
  principal: 'alice',
  ...over,
});

// Strings a client, a token's claims or a configuration can put in a line.
const HOSTILE = [
  '',
  'plain',
  'quote " and backslash \\ ',
  '"\\"\\\\',
  'newline\nand tab\t',
  '\u0000\u001f',
  'x'.repeat(100),
  'x'.repeat(101) + '"',
  'lone \ud800 surrogate',
  'pair 😀 and é',
  '\u2028\u2029',
  '</script>',
  '{"level":60,"msg":"forged"}',
];

describe('the access log line', () => {
  it('is the line pino writes, field for field and byte for byte', () => {
    const [lean, viaPino] = both(record(), 's1');
    expect(lean).toBe(viaPino);
    expect(lean).toBe(
      '{"level":30,"time":1764183600000,"name":"mcp-federate","access":true,"method":"resources/read","server":"docs","outcome":"ok","durationMs":0.422,"principal":"alice","session":"s1","msg":"request"}\n',
    );
  });

  it('is rendered without pino on a plain logger, and by pino when a tracing subscriber listens', async () => {
    const lines: string[] = [];
    const logger = fixedClockLogger(lines);
    const internals = logger as unknown as Record<symbol, (...a: unknown[]) => unknown>;
    const write = internals[pino.symbols.writeSym];
    let viaPino = 0;
    // The child the access log makes inherits the root's `write`: counting it counts pino's path.
    internals[pino.symbols.writeSym] = function (this: unknown, ...a: unknown[]) {
      viaPino++;
      return write?.apply(this, a);
    };
    const log = createAccessLog(logger);
    log(record(), 's');
    expect([lines.length, viaPino]).toEqual([1, 0]);
    const { tracingChannel } = await import('node:diagnostics_channel');
    const channel = tracingChannel('pino_asJson');
    const seen: unknown[] = [];
    const subscriber = {
      start: (m: unknown) => void seen.push(m),
      end: () => undefined,
      asyncStart: () => undefined,
      asyncEnd: () => undefined,
      error: () => undefined,
    };
    channel.subscribe(subscriber);
    try {
      log(record(), 's');
    } finally {
      channel.unsubscribe(subscriber);
    }
    expect([lines.length, viaPino, seen.length]).toEqual([2, 1, 1]);
    expect(lines[1]).toBe(lines[0]);
  });

  it('leaves out what is undefined and writes the rule only for a rate-limited request, as pino does', () => {
    for (const r of [
      record({ server: undefined, cache: 'hit' }),
      record({ outcome: 'rate_limited', rule: 'rate-limit' }),
      record({ outcome: 'denied', rule: 'deny-all' }),
      record({ cache: 'coalesced', durationMs: 12 }),
    ]) {
      const [lean, viaPino] = both(r, 'sess');
      expect(lean).toBe(viaPino);
    }
    expect(both(record({ outcome: 'rate_limited', rule: 'rate-limit' }), 's')[0]).toContain('"rule":"rate-limit"');
    expect(both(record({ outcome: 'denied', rule: 'deny-all' }), 's')[0]).not.toContain('"rule"');
  });

  it('escapes hostile strings in every field exactly as pino does, and each line stays one line of JSON', () => {
    for (const s of HOSTILE) {
      for (const r of [record({ method: s }), record({ server: s }), record({ principal: s }), record({ outcome: 'rate_limited', rule: s })]) {
        const [lean, viaPino] = both(r, s);
        expect(lean).toBe(viaPino);
        expect(lean?.indexOf('\n')).toBe((lean?.length ?? 0) - 1);
        expect((JSON.parse(lean ?? '') as { access: boolean; msg: string }).msg).toBe('request');
      }
      expect(asString(s)).toBe(s.length > 100 || /[\u0000-\u001f]/.test(s) ? JSON.stringify(s) : `"${s.replace(/["\\]/g, (c) => `\\${c}`)}"`);
    }
  });

  it('writes durations that are not finite as null, as pino does', () => {
    for (const durationMs of [Number.NaN, Number.POSITIVE_INFINITY, -0, 1e21, 1e-7]) {
      const [lean, viaPino] = both(record({ durationMs }), 's');
      expect(lean).toBe(viaPino);
    }
  });

  it('goes through pino for a field of a type it does not render, and for a logger that could render the line otherwise', () => {
    const odd = record({ principal: 42 as unknown as string, server: { toString: () => 'x' } as unknown as string });
    const [lean, viaPino] = both(odd, 's');
    expect(lean).toBe(viaPino);
    for (const extra of [
      { mixin: () => ({ host: 'h' }) },
      { messageKey: 'message' },
      { formatters: { log: (o: Record<string, unknown>) => ({ ...o, extra: 1 }) } },
      { hooks: { streamWrite: (s: string) => s.replace('alice', 'bob') } },
      { msgPrefix: '[gw] ' },
      { serializers: { principal: () => 'masked' } },
    ] satisfies pino.LoggerOptions[]) {
      const [a, b] = both(record(), 's', extra);
      expect(a).toBe(b);
    }
    expect(both(record(), 's', { mixin: () => ({ host: 'h' }) })[0]).toContain('"host":"h"');
    expect(both(record(), 's', { hooks: { streamWrite: (s: string) => s.replace('alice', 'bob') } })[0]).toContain('"principal":"bob"');
  });

  it('writes nothing below the logger level, and follows a level changed later', () => {
    const lines: string[] = [];
    const logger = createLogger({ level: 'warn', destination: { write: (s: string) => void lines.push(s) } });
    const log = createAccessLog(logger);
    log(record(), 's');
    expect(lines).toEqual([]);
    logger.level = 'info';
    log(record(), 's');
    expect(lines).toHaveLength(1);
  });

  it('on the process logger (real clock) matches pino apart from the time', () => {
    const lean: string[] = [];
    const viaPino: string[] = [];
    const before = Date.now();
    createAccessLog(createLogger({ level: 'info', destination: { write: (s: string) => void lean.push(s) } }))(record(), 's1');
    createAccessLog(createLogger({ level: 'info', destination: { write: (s: string) => void viaPino.push(s) } }), { lean: false })(record(), 's1');
    const time = Number(/"time":(\d+)/.exec(lean[0] ?? '')?.[1]);
    expect(time).toBeGreaterThanOrEqual(before);
    expect(lean[0]?.replace(/"time":\d+/, '"time":0')).toBe(viaPino[0]?.replace(/"time":\d+/, '"time":0'));
  });
});
