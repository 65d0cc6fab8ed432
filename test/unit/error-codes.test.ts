// JSON-RPC error codes are spelled as numbers only in src/errors.ts and src/protocol.ts; everything else names them.
import { readdirSync, readFileSync } from 'node:fs';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import {
  errorAnswer,
  errorText,
  ErrorCodes,
  httpErrorBody,
  JsonRpc,
  JsonRpcError,
  notFound,
  ProxyError,
  rateLimited,
  toJsonRpcError,
  unknownItem,
} from '../../src/errors.js';

const SRC = new URL('../../src/', import.meta.url);
const ALLOWED = new Set(['errors.ts', 'protocol.ts']);

/** `-32768`..`-32000` (the JSON-RPC reserved range) written as a negated numeric literal; comments and strings are not code. */
function rawCodes(text: string): string[] {
  const file = ts.createSourceFile('f.ts', text, ts.ScriptTarget.Latest, true);
  const found: string[] = [];
  const visit = (node: ts.Node): void => {
    if (ts.isPrefixUnaryExpression(node) && node.operator === ts.SyntaxKind.MinusToken && ts.isNumericLiteral(node.operand)) {
      const value = Number(node.operand.text);
      if (value >= 32000 && value <= 32768) found.push(node.getText(file));
    }
    ts.forEachChild(node, visit);
  };
  visit(file);
  return found;
}

describe('JSON-RPC error codes', () => {
  it('no raw -32xxx literal appears in src/ outside errors.ts and protocol.ts', () => {
    const files = (readdirSync(SRC, { recursive: true }) as string[]).filter((f) => f.endsWith('.ts') && !ALLOWED.has(f));
    expect(files.length).toBeGreaterThan(50);
    const offenders = files.flatMap((f) => rawCodes(readFileSync(new URL(f, SRC), 'utf8')).map((code) => `${f}: ${code}`));
    expect(offenders).toEqual([]);
  });

  it('the check finds a literal in code, not in comments or strings', () => {
    expect(rawCodes('const a = -32603; // -32001\n/* `-32000` */ const b = `${a}-32602`; f(x, -32700); type T = -32001 | 1;')).toEqual([
      '-32603',
      '-32700',
      '-32001',
    ]);
  });

  it('the helpers keep the bytes the wire had', () => {
    expect(JSON.stringify(httpErrorBody(JsonRpc.SESSION_NOT_FOUND, 'Session not found'))).toBe(
      '{"jsonrpc":"2.0","error":{"code":-32001,"message":"Session not found"},"id":null}',
    );
    expect(JSON.stringify(errorAnswer(7, JsonRpc.INTERNAL_ERROR, 'Internal error'))).toBe(
      '{"jsonrpc":"2.0","id":7,"error":{"code":-32603,"message":"Internal error"}}',
    );
    expect(JSON.stringify(errorAnswer(null, JsonRpc.SERVER_ERROR, 'm', { retryAfterMs: 1000 }))).toBe(
      '{"jsonrpc":"2.0","id":null,"error":{"code":-32000,"message":"m","data":{"retryAfterMs":1000}}}',
    );
    expect(errorText('1e2', JsonRpc.INVALID_REQUEST, 'm')).toBe('{"jsonrpc":"2.0","id":1e2,"error":{"code":-32600,"message":"m"}}');
  });

  it('rate limiting is a ProxyError answered as -32000 with data.retryAfterMs', () => {
    const err = rateLimited(1500);
    expect(err.code).toBe(ErrorCodes.RATE_LIMITED);
    const answer = toJsonRpcError(err);
    expect({ code: answer.code, message: answer.message, data: answer.data }).toEqual({
      code: -32000,
      message: 'Rate limit exceeded',
      data: { retryAfterMs: 1500 },
    });
  });

  it('an expected outcome (missing, denied, rate limited) and an answer capture no stack trace; a failure does, and the limit is given back', () => {
    const limit = Error.stackTraceLimit;
    const frames = (e: Error) => (e.stack ?? '').split('\n').filter((line) => line.trimStart().startsWith('at ')).length;
    for (const quiet of [
      new ProxyError(ErrorCodes.RESOURCE_NOT_FOUND, 'Resource not found'),
      unknownItem('tool', 'x'),
      rateLimited(5),
      notFound('a+x://1'),
      new JsonRpcError(JsonRpc.INTERNAL_ERROR, 'Internal error'),
    ]) {
      expect(frames(quiet)).toBe(0);
      expect(quiet.message).not.toBe('');
    }
    expect(frames(new ProxyError(ErrorCodes.UPSTREAM_ERROR, 'upstream failed'))).toBeGreaterThan(0);
    expect(frames(new Error('plain'))).toBeGreaterThan(0);
    expect(Error.stackTraceLimit).toBe(limit);
  });
});
