// The record's line: exactly its RFC 8785 form plus the hash, whatever fields are present or hostile.
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { chainHash, escapeLineBreakers, GENESIS_HASH, MAX_ROLES, sealRecord, type AuditEntry } from '../../src/audit/record.js';
import { canonicalize } from '../../src/audit/jcs.js';

const base: AuditEntry = {
  caller: { principal: 'alice', roles: ['reader'], session: 's', transport: 'stdio' },
  method: 'resources/read',
  decision: 'allow',
  rule: 'default',
  outcome: 'ok',
  durationMs: 1,
};
const hostile = 'x\n\r\t"\\\u0000\u007f\u0085\u2028\u2029\u202e\u2066é😀\ud800';

describe('chainHash', () => {
  it('is the hex SHA-256 of the UTF-8 bytes of prev followed by body, hostile characters included', () => {
    for (const body of ['{}', `{"uri":"${hostile}"}`, 'é'.repeat(5000)]) {
      expect(chainHash(GENESIS_HASH, body)).toBe(createHash('sha256').update(GENESIS_HASH).update(body, 'utf8').digest('hex'));
    }
  });
});

describe('sealRecord', () => {
  it.each([
    ['no optional field', base],
    [
      'every optional field',
      // eslint-disable-next-line @typescript-eslint/no-unnecessary-type-assertion -- without it tsc widens `cache` to string
      { ...base, uri: 'a+b://c', server: 'a', upstreamUri: 'b://c', cache: 'hit', bytes: 0, returned: 3, filtered: 1, durationMs: 0.0004 } as AuditEntry,
    ],
    [
      'hostile strings everywhere',
      {
        ...base,
        uri: hostile,
        server: hostile,
        upstreamUri: hostile,
        rule: hostile,
        method: hostile,
        caller: { ...base.caller, principal: hostile, session: hostile, roles: [hostile, ''] },
      },
    ],
    ['truncated fields', { ...base, uri: 'u'.repeat(3000), caller: { ...base.caller, roles: Array.from({ length: MAX_ROLES + 1 }, (_, i) => `r${i}`) } }],
    ['odd numbers', { ...base, bytes: -0, durationMs: 1e21, returned: Number.NaN, filtered: Number.POSITIVE_INFINITY }],
  ])('with %s, the line is the JCS form of the record without hash, then the hash', (_what, entry) => {
    const { record, line } = sealRecord(entry, { seq: 42, prev: GENESIS_HASH, time: 0 });
    expect(line.endsWith('}\n')).toBe(true);
    expect(line.slice(0, -1)).not.toMatch(/[\n\r\u2028\u2029\u0085]/);
    const { hash, ...rest } = JSON.parse(line) as Record<string, unknown>;
    expect(hash).toBe(record.hash);
    const jcs = canonicalize(rest);
    // eslint-disable-next-line @typescript-eslint/restrict-template-expressions -- `hash` is the parsed line's field, checked to be a string by the line above
    expect(line).toBe(`${escapeLineBreakers(jcs.slice(0, -1))},"hash":"${hash}"}\n`);
    expect(hash).toBe(chainHash(GENESIS_HASH, jcs));
  });

  it('drops non-finite counts and keeps the duration to the microsecond', () => {
    const { line } = sealRecord({ ...base, bytes: Number.NaN, durationMs: 1.23456789 }, { seq: 1, prev: GENESIS_HASH, time: 0 });
    const parsed = JSON.parse(line) as Record<string, unknown>;
    expect(parsed).not.toHaveProperty('bytes');
    expect(parsed.durationMs).toBe(1.235);
  });

  it('lists the fields cut, sorted, once each', () => {
    const long = 'x'.repeat(3000);
    const { record } = sealRecord({ ...base, uri: long, rule: long, caller: { ...base.caller, roles: [long, long] } }, { seq: 1, prev: GENESIS_HASH, time: 0 });
    expect(record.truncated).toEqual(['roles', 'rule', 'uri']);
  });
});
