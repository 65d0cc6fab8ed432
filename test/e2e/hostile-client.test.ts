// End to end, a hostile client: malformed lines written by hand to the built CLI's stdin. Every line
// gets exactly the answer the wire contract gives it (or none), the process stays up, and the same
// session keeps serving list and read. One session per describe block (per test for the deep lines,
// which crash some proxies), one line per test.
//
// How "exactly one" is checked without sleeping: the bad line and a marker read (a full round trip
// through the upstream) are written together; once the marker's answer is in, the bad line's answer
// must be too (it was read first; a short grace covers an implementation that answers a little later).
// A second marker then gives a duplicate the chance to show up before the count is checked. After
// every test, a read through the upstream on the same session must still succeed (afterEach).
import { afterEach, describe, expect, it } from 'vitest';
import { upstreams } from '../helpers/built-cli.js';
import { fixtureText } from '../helpers/catalog.js';
import { suiteResource } from '../helpers/suite.js';
import { rawCli, type RawCliClient } from '../helpers/cli-stdio.js';
import { type Answer, type AnyId, nested } from '../helpers/raw-client.js';

const SIZE = 1024;
const READ_URI = 'cat+fixture://res/0';
const CONFIG = { servers: { cat: upstreams.fixture('--resources', '3', '--size', String(SIZE)) } };

/** How long an answer may trail the marker answer written after it. */
const GRACE_MS = 1_000;

const startSession = (config: unknown) => async () => {
  const session = rawCli(config);
  await session.initialize();
  return session;
};

/** A read through the upstream on the same session; asserts it still works. */
async function sentinel(s: RawCliClient): Promise<void> {
  expect(await s.readText(READ_URI)).toBe(fixtureText(0, SIZE));
}

/** A round trip on the same session (a read through the upstream), whatever its answer. */
async function marker(s: RawCliClient): Promise<void> {
  await s.request('resources/read', { uri: READ_URI });
}

/** A JSON-RPC response, well formed: jsonrpc 2.0, exactly one of result / error, an integer code. */
function expectWellFormed(answer: Answer): void {
  expect(answer.jsonrpc).toBe('2.0');
  expect('result' in answer !== 'error' in answer, `exactly one of result/error: ${JSON.stringify(answer).slice(0, 300)}`).toBe(true);
  if (answer.error) {
    expect(Number.isInteger(answer.error.code)).toBe(true);
    expect(typeof answer.error.message).toBe('string');
  }
}

/** Writes `line`, expects exactly one answer carrying `id`, and returns it. */
async function oneAnswer(s: RawCliClient, line: string | Buffer, id: AnyId): Promise<Answer> {
  const nulls = s.nullAnswers.length;
  await s.write(Buffer.concat([Buffer.from(line), Buffer.from('\n')]));
  await marker(s);
  const answer = await s.answer(id, GRACE_MS);
  await marker(s);
  expect(s.answers(id), `answers with id ${JSON.stringify(id)}`).toHaveLength(1);
  expect(s.nullAnswers.slice(nulls), 'answers with id null').toEqual([]);
  expectWellFormed(answer);
  expect(answer).toHaveProperty('id', id);
  return answer;
}

/** Writes `line`, expects exactly one answer with id null, and returns it. */
async function oneNullAnswer(s: RawCliClient, line: string | Buffer): Promise<Answer> {
  const nulls = s.nullAnswers.length;
  await s.write(Buffer.concat([Buffer.from(line), Buffer.from('\n')]));
  await marker(s);
  await s.until(() => s.nullAnswers.length > nulls, 'an answer with id null', GRACE_MS);
  await marker(s);
  const answers = s.nullAnswers.slice(nulls);
  expect(answers, 'answers with id null').toHaveLength(1);
  const answer = answers[0]!;
  expectWellFormed(answer);
  expect(answer).toHaveProperty('id', null);
  return answer;
}

/** Writes `line` and expects no answer at all (none with `id`, none with id null). */
async function noAnswer(s: RawCliClient, line: string, id?: AnyId): Promise<void> {
  const nulls = s.nullAnswers.length;
  const before = s.lines.length;
  await s.write(`${line}\n`);
  await marker(s);
  await marker(s);
  if (id !== undefined) expect(s.answers(id), `answers with id ${JSON.stringify(id)}`).toEqual([]);
  expect(s.nullAnswers.slice(nulls), 'answers with id null').toEqual([]);
  // Nothing but the two marker answers was written.
  expect(s.lines.slice(before).filter((l) => l.parsed?.method === undefined)).toHaveLength(2);
}

const INVALID_REQUEST = /^Invalid Request/;

describe('malformed lines from the client', () => {
  const session = suiteResource(startSession(CONFIG));
  afterEach(() => sentinel(session()));

  it.each([
    ['plain text', 'this is not json'],
    ['truncated JSON', '{"jsonrpc":"2.0","id":"trunc-1","method":"resources/list"'],
    ['single quotes', "{'jsonrpc': '2.0'}"],
    ['trailing garbage', '{"jsonrpc":"2.0","id":"tail-1","method":"ping"} x'],
    ['control characters', '\u0000\u0001\u0002'],
  ])('not JSON (%s) -> one -32700 with id null', async (_name, line) => {
    const answer = await oneNullAnswer(session(), line);
    expect(answer.error?.code).toBe(-32700);
    expect(session().answers('trunc-1')).toEqual([]);
    expect(session().answers('tail-1')).toEqual([]);
  });

  it('invalid UTF-8 outside any string -> one -32700 with id null', async () => {
    const answer = await oneNullAnswer(session(), Buffer.from([0x7b, 0xff, 0xfe, 0x7d]));
    expect(answer.error?.code).toBe(-32700);
  });

  it.each([
    ['an empty batch', '[]'],
    ['a batch of requests', '[{"jsonrpc":"2.0","id":"batched-1","method":"ping"},{"jsonrpc":"2.0","id":"batched-2","method":"resources/list"}]'],
    ['an array of scalars', '[1,"two",null]'],
  ])('a JSON array (%s) -> one -32600 with id null; nothing inside it is served', async (_name, line) => {
    const answer = await oneNullAnswer(session(), line);
    expect(answer.error?.code).toBe(-32600);
    expect(session().answers('batched-1')).toEqual([]);
    expect(session().answers('batched-2')).toEqual([]);
  });

  it.each<[string, string, AnyId]>([
    ['no jsonrpc', '{"id":"env-1","method":"resources/list"}', 'env-1'],
    ['jsonrpc "1.0"', '{"jsonrpc":"1.0","id":"env-2","method":"resources/list"}', 'env-2'],
    ['jsonrpc as a number', '{"jsonrpc":2,"id":"env-3","method":"resources/list"}', 'env-3'],
    ['a numeric method', '{"jsonrpc":"2.0","id":"env-4","method":42}', 'env-4'],
    ['a null method', '{"jsonrpc":"2.0","id":"env-5","method":null}', 'env-5'],
    ['an object method', '{"jsonrpc":"2.0","id":"env-6","method":{"name":"ping"}}', 'env-6'],
    ['params as an array', '{"jsonrpc":"2.0","id":"env-7","method":"resources/list","params":[]}', 'env-7'],
    ['params as a string', '{"jsonrpc":"2.0","id":"env-8","method":"resources/list","params":"cursor"}', 'env-8'],
    ['params as a number', '{"jsonrpc":"2.0","id":"env-9","method":"ping","params":7}', 'env-9'],
    ['params null', '{"jsonrpc":"2.0","id":"env-10","method":"ping","params":null}', 'env-10'],
    ['a fractional id', '{"jsonrpc":"2.0","id":1.5,"method":"resources/list"}', 1.5],
    ['a negative fractional id with bad params', '{"jsonrpc":"2.0","id":-2.25,"method":"ping","params":true}', -2.25],
    ['a numeric id without jsonrpc', '{"id":4711,"method":"ping"}', 4711],
    ['a method plus both result and error', '{"jsonrpc":"2.0","id":"env-11","method":"ping","result":{},"error":{"code":1,"message":"x"}}', 'env-11'],
    ['an id and nothing else', '{"jsonrpc":"2.0","id":"env-12"}', 'env-12'],
    ['an empty-string id, no method', '{"jsonrpc":"2.0","id":""}', ''],
  ])('an invalid envelope (%s) -> one -32600 "Invalid Request" with the id echoed', async (_name, line, id) => {
    const answer = await oneAnswer(session(), line, id);
    expect(answer.error?.code).toBe(-32600);
    expect(answer.error?.message).toMatch(INVALID_REQUEST);
  });

  it.each([
    ['a boolean id', '{"jsonrpc":"2.0","id":true,"method":"ping"}'],
    ['an object id', '{"jsonrpc":"2.0","id":{"n":1},"method":"ping"}'],
    ['an array id', '{"jsonrpc":"2.0","id":[1],"method":"ping"}'],
    ['a null id', '{"jsonrpc":"2.0","id":null,"method":"ping"}'],
    ['an empty object', '{}'],
    ['only jsonrpc', '{"jsonrpc":"2.0"}'],
    ['a notification with a numeric method', '{"jsonrpc":"2.0","method":5}'],
    ['a notification with array params', '{"jsonrpc":"2.0","method":"notifications/initialized","params":[1]}'],
    ['a notification without jsonrpc', '{"method":"notifications/initialized"}'],
  ])('an invalid envelope without a readable id (%s) -> one -32600 with id null', async (_name, line) => {
    const answer = await oneNullAnswer(session(), line);
    expect(answer.error?.code).toBe(-32600);
    expect(answer.error?.message).toMatch(INVALID_REQUEST);
  });

  // eslint-disable-next-line @typescript-eslint/no-redundant-type-constituents -- `undefined` says "no id" to the reader
  it.each<[string, string, AnyId | undefined]>([
    ['a result', '{"jsonrpc":"2.0","id":"resp-1","result":{}}', 'resp-1'],
    ['an error', '{"jsonrpc":"2.0","id":"resp-2","error":{"code":-32000,"message":"nope"}}', 'resp-2'],
    ['both result and error', '{"jsonrpc":"2.0","id":"resp-3","result":{},"error":{"code":1,"message":"x"}}', 'resp-3'],
    ['a scalar result without jsonrpc', '{"id":"resp-4","result":1}', 'resp-4'],
    ['an unknown numeric id', '{"jsonrpc":"2.0","id":987654,"result":{"x":1}}', 987654],
    ['an echoed parse error (no ping-pong)', '{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}', undefined],
    ['an echoed invalid request with a bad id', '{"jsonrpc":"2.0","id":true,"error":{"code":-32600,"message":"Invalid Request"}}', undefined],
  ])('a response-shaped message (%s) is never answered', async (_name, line, id) => {
    await noAnswer(session(), line, id);
  });

  it.each([
    ['initialized (again)', '{"jsonrpc":"2.0","method":"notifications/initialized"}'],
    ['cancelled for a request never sent', '{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"never-sent","reason":"x"}}'],
    ['roots list_changed', '{"jsonrpc":"2.0","method":"notifications/roots/list_changed"}'],
    ['an unknown notification', '{"jsonrpc":"2.0","method":"notifications/no/such/thing","params":{"a":[1,2,3]}}'],
  ])('a valid notification (%s) is never answered', async (_name, line) => {
    await noAnswer(session(), line);
  });

  it.each<[string, string, unknown, RegExp]>([
    ['resources/read without params', 'resources/read', undefined, /uri|params/],
    ['resources/read with a numeric uri', 'resources/read', { uri: 123 }, /uri/],
    ['resources/read with a null uri', 'resources/read', { uri: null }, /uri/],
    ['resources/list with a numeric cursor', 'resources/list', { cursor: 1 }, /cursor/],
    ['resources/templates/list with an object cursor', 'resources/templates/list', { cursor: {} }, /cursor/],
    ['resources/subscribe without uri', 'resources/subscribe', {}, /uri/],
    ['resources/unsubscribe with an array uri', 'resources/unsubscribe', { uri: ['a'] }, /uri/],
    ['completion/complete with a string ref', 'completion/complete', { ref: 'nope', argument: { name: 'id', value: '1' } }, /ref/],
    ['completion/complete with an unknown ref type', 'completion/complete', { ref: { type: 'ref/nothing' }, argument: { name: 'id', value: '1' } }, /ref/],
  ])('schema-invalid params (%s) -> one -32602 with a one-line message naming the field', async (name, method, params, field) => {
    const id = `params-${name}`;
    const answer = await oneAnswer(session(), JSON.stringify({ jsonrpc: '2.0', id, method, ...(params === undefined ? {} : { params }) }), id);
    expect(answer.error?.code).toBe(-32602);
    const message = String(answer.error?.message);
    expect(message).not.toContain('\n');
    expect(message.length).toBeLessThan(200);
    expect(message).toMatch(field);
  });

  it.each(['tools/LIST', 'no/such/method', 'resources/READ'])('an unknown method (%s) -> one -32601', async (method) => {
    const id = `unknown-${method}`;
    const answer = await oneAnswer(session(), JSON.stringify({ jsonrpc: '2.0', id, method, params: {} }), id);
    expect(answer.error?.code).toBe(-32601);
  });

  it('after all of that, the same session lists and reads, and the process is alive', async () => {
    const s = session();
    const list = await s.request('resources/list', {});
    expect((list.result?.resources as { uri: string }[]).map((r) => r.uri)).toContain(READ_URI);
    expect(await s.readText('cat+fixture://res/2')).toBe(fixtureText(2, SIZE));
    expect(s.carrier.alive).toBe(true);
    // Nothing but JSON ever went to stdout.
    expect(s.lines.filter((l) => l.parsed === undefined).map((l) => l.raw.slice(0, 200))).toEqual([]);
  });
});

describe('messages nested deeper than wire.maxDepth (default 1000)', () => {
  // A session per test: a proxy that falls over on one deep line must not take the other cases with it.
  const deepParams = (levels: number) => `{"uri":"${READ_URI}","x":${nested(levels)}}`;
  const fresh = startSession(CONFIG);

  /** Runs `body` on a fresh session, then checks that the session still lists and reads. */
  async function onFreshSession(body: (s: RawCliClient) => Promise<void>): Promise<void> {
    await using s = await fresh();
    await body(s);
    const list = await s.request('resources/list', {});
    expect((list.result?.resources as { uri: string }[] | undefined)?.map((r) => r.uri)).toContain(READ_URI);
    await sentinel(s);
    expect(s.carrier.alive).toBe(true);
  }

  it.each<[string, string, AnyId]>([
    ['5000 levels in params, string id', `{"jsonrpc":"2.0","id":"deep-1","method":"resources/read","params":${deepParams(5000)}}`, 'deep-1'],
    ['1100 levels in params, numeric id', `{"jsonrpc":"2.0","id":77,"method":"resources/read","params":${deepParams(1100)}}`, 77],
    ['100000 levels in params', `{"jsonrpc":"2.0","id":"deep-2","method":"ping","params":{"x":${nested(100_000)}}}`, 'deep-2'],
    ['deep objects in an unknown method', `{"jsonrpc":"2.0","id":"deep-3","method":"no/such","params":${'{"a":'.repeat(3000)}1${'}'.repeat(3000)}}`, 'deep-3'],
  ])('a request (%s) -> one -32600 with its id', async (_name, line, id) => {
    await onFreshSession(async (s) => {
      const answer = await oneAnswer(s, line, id);
      expect(answer.error?.code).toBe(-32600);
    });
  });

  it.each([
    ['a deep notification', `{"jsonrpc":"2.0","method":"notifications/whatever","params":{"x":${nested(5000)}}}`],
    ['a deep top-level array', nested(5000)],
    ['a deep top-level array of 100000 levels', nested(100_000)],
    ['a deep object with an unreadable id', `{"jsonrpc":"2.0","id":true,"method":"ping","params":{"x":${nested(5000)}}}`],
  ])('%s -> one -32600 with id null', async (_name, line) => {
    await onFreshSession(async (s) => {
      const answer = await oneNullAnswer(s, line);
      expect(answer.error?.code).toBe(-32600);
    });
  });

  // Two rules meet here: a response is never answered, a too-deep line is refused with its id. Either
  // is accepted; what matters is no second answer (no loop) and a session that goes on.
  it('a deep response-shaped message gets at most one answer (-32600 if any)', async () => {
    await onFreshSession(async (s) => {
      const nulls = s.nullAnswers.length;
      await s.write(`{"jsonrpc":"2.0","id":"deep-resp","result":{"x":${nested(5000)}}}\n`);
      await marker(s);
      await marker(s);
      const answers = [...s.answers('deep-resp'), ...s.nullAnswers.slice(nulls)];
      expect(answers.length).toBeLessThanOrEqual(1);
      for (const a of answers) expect(a.error?.code).toBe(-32600);
    });
  });

  it('900 levels are within the limit: served as usual', async () => {
    await onFreshSession(async (s) => {
      const answer = await oneAnswer(s, `{"jsonrpc":"2.0","id":"shallow-1","method":"ping","params":{"x":${nested(900)}}}`, 'shallow-1');
      expect(answer.result).toEqual({});
    });
  });
});

describe('lines longer than wire.maxMessageBytes', () => {
  const LIMIT = 65_536;
  const session = suiteResource(startSession({ ...CONFIG, wire: { maxMessageBytes: LIMIT } }));
  afterEach(() => sentinel(session()));
  const longUri = (bytes: number) => `cat+fixture://long/${'x'.repeat(bytes)}`;

  it('a line just under the limit is served (here: not found)', async () => {
    const uri = longUri(LIMIT - 200);
    const line = JSON.stringify({ jsonrpc: '2.0', id: 'under-1', method: 'resources/read', params: { uri } });
    expect(Buffer.byteLength(line)).toBeLessThan(LIMIT);
    const answer = await oneAnswer(session(), line, 'under-1');
    expect(answer.error?.code).toBe(-32002);
  });

  it.each<[string, (pad: string) => string, AnyId]>([
    ['{"jsonrpc":"2.0","id":7,...', (pad) => `{"jsonrpc":"2.0","id":7,"method":"resources/read","params":{"uri":"cat+${pad}"}}`, 7],
    ['{"jsonrpc":"2.0","id":"s",...', (pad) => `{"jsonrpc":"2.0","id":"long-s","method":"resources/read","params":{"uri":"cat+${pad}"}}`, 'long-s'],
    ['{"id":8,...', (pad) => `{"id":8,"jsonrpc":"2.0","method":"ping","params":{"pad":"${pad}"}}`, 8],
  ])('an over-long line starting %s -> one -32600 carrying that id; the next line on the same write is served', async (_name, make, id) => {
    const s = session();
    const nextId = `after-${JSON.stringify(id)}`;
    const next = JSON.stringify({ jsonrpc: '2.0', id: nextId, method: 'resources/list', params: {} });
    const answer = await oneAnswer(s, `${make('y'.repeat(LIMIT * 3))}\n${next}`, id);
    expect(answer.error?.code).toBe(-32600);
    const after = await s.answer(nextId);
    expect(after.result?.resources).toBeDefined();
  });

  it.each([
    ['that is not JSON at all', (pad: string) => `not json ${pad}`],
    ['that is one huge string', (pad: string) => `"${pad}"`],
    ['with an unreadable id at its start', (pad: string) => `{"jsonrpc":"2.0","id":true,"method":"ping","params":{"pad":"${pad}"}}`],
  ])('an over-long line %s -> one -32600 with id null', async (_name, make) => {
    const answer = await oneNullAnswer(session(), make('z'.repeat(LIMIT * 2)));
    expect(answer.error?.code).toBe(-32600);
  });

  // The contract promises the id only when it can be read from the start of the line; one found at
  // its end (without buffering the line) is accepted too. Either way: one answer, -32600.
  it('an over-long line with its id only at the end -> one -32600, with id null (or that id)', async () => {
    const s = session();
    const nulls = s.nullAnswers.length;
    await s.write(`{"jsonrpc":"2.0","method":"ping","params":{"pad":"${'z'.repeat(LIMIT * 2)}"},"id":"late-id"}\n`);
    await marker(s);
    await s.until(() => s.nullAnswers.length > nulls || s.answers('late-id').length > 0, 'an answer with id null or "late-id"', GRACE_MS);
    await marker(s);
    const answers = [...s.nullAnswers.slice(nulls), ...s.answers('late-id')];
    expect(answers).toHaveLength(1);
    expect(answers[0]?.error?.code).toBe(-32600);
  });

  it('an over-long line arriving in several writes keeps the framing of what follows', async () => {
    const s = session();
    const line = `{"jsonrpc":"2.0","id":"split-1","method":"resources/read","params":{"uri":"cat+${'q'.repeat(LIMIT * 4)}"}}`;
    const cuts = [0, 1000, LIMIT - 10, LIMIT + 10, LIMIT * 2];
    for (let i = 0; i + 1 < cuts.length; i++) await s.write(line.slice(cuts[i], cuts[i + 1]));
    // The rest of the line, its newline and the sentinel read arrive together.
    const answer = await oneAnswer(s, line.slice(LIMIT * 2), 'split-1');
    expect(answer.error?.code).toBe(-32600);
    await sentinel(s);
  });

  it('the session still lists and reads; the process is alive', async () => {
    const s = session();
    const list = await s.request('resources/list', {});
    expect((list.result?.resources as { uri: string }[]).map((r) => r.uri)).toContain(READ_URI);
    await sentinel(s);
    expect(s.carrier.alive).toBe(true);
  });
});

describe('a line longer than the default wire.maxMessageBytes (16 MiB)', () => {
  const session = suiteResource(startSession(CONFIG));
  afterEach(() => sentinel(session()));

  it('-> one -32600 carrying the id read from its start; the session goes on', async () => {
    const s = session();
    const line = `{"jsonrpc":"2.0","id":"big-1","method":"resources/read","params":{"uri":"cat+${'b'.repeat(17 * 1024 * 1024)}"}}`;
    const answer = await oneAnswer(s, line, 'big-1');
    expect(answer.error?.code).toBe(-32600);
    expect(s.carrier.alive).toBe(true);
  });
});
