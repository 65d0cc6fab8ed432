// Composition stays visible: no new in-place reassignment of a transport's (or Protocol's) callbacks in src/ outside the places listed here, each with its reason.
import { readdirSync, readFileSync } from 'node:fs';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const SRC = new URL('../../src/', import.meta.url);

/** The callbacks a connection is wired by: a transport's handlers and sends, and the SDK Protocol's own entry points. */
const CALLBACKS = new Set([
  'send',
  'sendText',
  'onmessage',
  'onclose',
  'onerror',
  'onrefused',
  'onloss',
  'receive',
  '_onresponse',
  '_onrequest',
  '_onnotification',
]);

/**
 * Every assignment to one of {@link CALLBACKS} left in src/, as `file: target`, with why it stays.
 * A connection's wrappers are composed in one place per kind of connection (`compose`, `next => handler`);
 * what is set in place is either that place handing the composed handlers to a transport, or the SDK's
 * own interface that has no other way in.
 */
const ALLOWED: Record<string, string> = {
  // The stdio composition place: the composed edge handed to the transport, once per connection.
  'serve/stdio.ts: transport.onmessage': 'stdio composition place: the composed inbound (serverEdge) handed to the LineTransport',
  'serve/stdio.ts: lossy.onrefused': 'stdio composition place: refused lines to the composed edge',
  'serve/stdio.ts: transport.onerror': 'stdio composition place: transport errors to the log',
  'serve/stdio.ts: transport.onclose': 'stdio composition place: the close reaches the tail, then releases the session',
  'serve/stdio.ts: lossy.onloss': 'stdio composition place: lost output reported loudly',
  // Where a Protocol is plugged into a connection: the SDK's connect() sets transport.onmessage itself.
  'wire/dispatch.ts: transport.receive':
    'a guarded tail (stdio, HTTP sessions): the Protocol plugged in behind the composed edge, so nothing is classified twice',
  'wire/dispatch.ts: transport.onmessage':
    "a transport the SDK connected (upstream clients; SDK channels: the 2026 HTTP handler's and serveStdio's): the SDK's connect() set onmessage, so the envelope-checked dispatch replaces it",
  'wire/dispatch.ts: transport.onrefused': 'the same transports: refused lines fail their own request (client) or are answered (server)',
  // The SDK Protocol's public events: set on the Server or Client, never on a transport; the SDK chains the transport's close and errors into them.
  'upstream/upstream.ts: client.onerror': "the SDK Client's error event (no constructor option): logged",
  'upstream/upstream.ts: client.onclose': "the SDK Client's close event (no constructor option): the upstream reconnects",
  'serve/sessions.ts: server.onclose': "the SDK Server's close event (no constructor option): the session forgets the Server",
  'serve/sessions.ts: server.onerror': "the SDK Server's error event (no constructor option): logged quietly",
};

/** `file: target` for every assignment (`=`, `??=`, `||=`) to a callback, and every `Object.assign`/`defineProperty` naming one. */
function reassignments(file: string, text: string): string[] {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const found: string[] = [];
  const nameOf = (node: ts.Expression): string | undefined => {
    if (ts.isPropertyAccessExpression(node)) return node.name.text;
    if (ts.isElementAccessExpression(node) && ts.isStringLiteralLike(node.argumentExpression)) return node.argumentExpression.text;
    return undefined;
  };
  const assigning = new Set([ts.SyntaxKind.EqualsToken, ts.SyntaxKind.QuestionQuestionEqualsToken, ts.SyntaxKind.BarBarEqualsToken]);
  const visit = (node: ts.Node): void => {
    if (ts.isBinaryExpression(node) && assigning.has(node.operatorToken.kind)) {
      const name = nameOf(node.left);
      if (name !== undefined && CALLBACKS.has(name)) found.push(`${file}: ${node.left.getText(source)}`);
    }
    if (ts.isCallExpression(node) && /^Object\.(assign|defineProperty|defineProperties)$/.test(node.expression.getText(source))) {
      const [target, ...rest] = node.arguments;
      const named = rest.some(
        (arg) =>
          (ts.isStringLiteralLike(arg) && CALLBACKS.has(arg.text)) ||
          (ts.isObjectLiteralExpression(arg) && arg.properties.some((p) => p.name !== undefined && CALLBACKS.has(p.name.getText(source)))),
      );
      if (named && target) found.push(`${file}: Object.assign(${target.getText(source)})`);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

describe('composition places', () => {
  it('no transport or Protocol callback is reassigned in src/ outside the listed places, and every listed one is still there', () => {
    const files = (readdirSync(SRC, { recursive: true }) as string[]).map((f) => f.split('\\').join('/')).filter((f) => f.endsWith('.ts'));
    expect(files.length).toBeGreaterThan(50);
    // Only files that could hold one are parsed (an assignment to a callback, or Object.assign/define*).
    const maybe =
      /\b(send|sendText|on(message|close|error|refused|loss)|receive|_on(response|request|notification))\s*(\?\?|\|\|)?=[^=>]|Object\.(assign|define)|\[['"]/;
    const found = files.flatMap((f) => {
      const text = readFileSync(new URL(f, SRC), 'utf8');
      return maybe.test(text) ? reassignments(f, text) : [];
    });
    const unlisted = found.filter((hit) => !(hit in ALLOWED));
    // A new one: compose it in its connection's place instead (see docs/architecture.md, "Composition"), or list it here with its reason.
    expect(unlisted).toEqual([]);
    // A listed one that is gone: take it off the list.
    expect(Object.keys(ALLOWED).filter((hit) => !found.includes(hit))).toEqual([]);
    expect(new Set(found).size).toBe(found.length);
  });

  it('the scan finds assignments of every form, and not calls, reads or declarations', () => {
    const code = [
      'transport.onmessage = (m) => next(m);',
      "t['onclose'] = () => undefined;",
      'a.b.send ??= send;',
      'client._onresponse = patched;',
      'Object.assign(lines, { onerror: report });',
      "Object.defineProperty(t, 'receive', { value: f });",
      'this.onmessage?.(m); const onclose = () => 1; if (x.onerror === y) z(); class C { onclose?: () => void; send = () => 1; }',
      'Object.assign(this, handlers); other.send(m);',
    ].join('\n');
    expect(reassignments('f.ts', code)).toEqual([
      'f.ts: transport.onmessage',
      "f.ts: t['onclose']",
      'f.ts: a.b.send',
      'f.ts: client._onresponse',
      'f.ts: Object.assign(lines)',
      'f.ts: Object.assign(t)',
    ]);
  });
});
