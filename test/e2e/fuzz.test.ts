// End to end, a fuzzed client: one proxy process, thousands of generated lines (a seeded PRNG; set
// FUZZ_SEED to replay a run) mixing every bad shape the wire contract names - not JSON, bad UTF-8,
// batches, broken envelopes, ids of every type, responses and notifications, params of the wrong
// shape, deep nesting, long strings, unknown methods - with valid requests. Sent in chunks, each
// chunk's answers awaited before the next. Afterwards: the process is alive; every request-shaped
// line with a readable id (a string or a number) got exactly one answer with that id; no
// response-shaped line and nothing inside a batch got any; nothing was answered with an id that was
// never sent; list and read still work. Answers with id null are not attributed to a line.
import { describe, expect, it } from 'vitest';
import { upstreams } from '../helpers/built-cli.js';
import { fixtureText } from '../helpers/catalog.js';
import { rawCli } from '../helpers/cli-stdio.js';
import { idKey, nested } from '../helpers/raw-client.js';

const SEED = process.env.FUZZ_SEED === undefined ? Math.floor(Math.random() * 2 ** 32) : Number(process.env.FUZZ_SEED);
const MESSAGES = 5000;
/** A chunk ends at this many lines or bytes, whichever comes first. */
const CHUNK_LINES = 100;
const CHUNK_BYTES = 256 * 1024;
/** How long one chunk's answers may take. */
const CHUNK_MS = 10_000;

/** What the contract lets a line's readable id get. */
type Expectation = 'one' | 'none' | 'atMostOne';

interface Case {
  label: string;
  line: Buffer;
  /**
   * Readable ids in the line and what each must get; empty for lines without one. `code`: the error
   * code the answer must carry, where the contract fixes it.
   */
  ids: { id: string | number; expect: Expectation; code?: number }[];
}

/** mulberry32: small, fast, good enough to spread cases; fully determined by the seed. */
function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const q = (v: unknown): string => JSON.stringify(v);

class Generator {
  private n = 0;
  constructor(private readonly rnd: () => number) {}

  int(max: number): number {
    return Math.floor(this.rnd() * max);
  }
  between(min: number, max: number): number {
    return min + this.int(max - min + 1);
  }
  pick<T>(items: readonly T[]): T {
    return items[this.int(items.length)] as T;
  }
  chance(p: number): boolean {
    return this.rnd() < p;
  }

  /** A string with the awkward characters JSON must escape or carry (no raw newline: JSON.stringify escapes it). */
  string(maxLength = 24): string {
    const alphabet = ['a', 'Z', '0', ' ', '"', '\\', '/', '\n', '\t', '\u0000', '\u001f', 'é', 'ü', '€', '😀', '\u2028', '+', ':', '{', '[', '?'];
    return Array.from({ length: this.int(maxLength + 1) }, () => this.pick(alphabet)).join('');
  }

  /** A random JSON value (bounded depth), as text. */
  value(depth = 2): string {
    const kinds = depth > 0 ? 7 : 5;
    switch (this.int(kinds)) {
      case 0:
        return q(this.string());
      case 1:
        return String(this.pick([0, -1, 1.5, 1e21, -0.000001, 42, 2 ** 53]));
      case 2:
        return this.pick(['true', 'false', 'null']);
      case 3:
        return q(this.string(4));
      case 4:
        return String(this.int(1000));
      case 5:
        return `[${Array.from({ length: this.int(4) }, () => this.value(depth - 1)).join(',')}]`;
      default:
        return `{${Array.from({ length: this.int(4) }, () => `${q(this.string(8))}:${this.value(depth - 1)}`).join(',')}}`;
    }
  }

  /** A fresh readable id: its JSON text and the value an answer must echo. Unique per run. */
  readableId(): { text: string; value: string | number } {
    const n = ++this.n;
    switch (this.int(8)) {
      case 0:
        return { text: q(`f${n}`), value: `f${n}` };
      case 1:
        return { text: q(`${n}`), value: `${n}` }; // a numeric-looking string is still a string
      case 2: {
        const value = `fuzz "${n}" \\ ü 😀 \u2028`;
        return { text: q(value), value };
      }
      case 3:
        return { text: q(`${'L'.repeat(200)}${n}`), value: `${'L'.repeat(200)}${n}` };
      case 4: {
        const value = 10_000_000 + n;
        return { text: this.pick([`${value}`, `${value}.0`, `${value}E0`, `${value}e+0`]), value };
      }
      case 5:
        return { text: `${-(10_000_000 + n)}`, value: -(10_000_000 + n) };
      case 6:
        return { text: `${20_000_000 + n}.5`, value: 20_000_000 + n + 0.5 }; // fractional: invalid, still echoed
      default:
        return { text: `${n}`, value: n };
    }
  }

  unreadableId(): string {
    return this.pick(['true', 'false', 'null', '{}', '[]', `{"n":${this.int(100)}}`, `[${this.int(100)}]`, nested(this.between(2, 50))]);
  }

  /** A JSON object from members, in the given order, with random (valid) whitespace. */
  object(members: [string, string][]): string {
    const ws = () => (this.chance(0.8) ? '' : this.pick([' ', '\t', '  ', ' \t ']));
    return `{${ws()}${members.map(([k, v]) => `${q(k)}${ws()}:${ws()}${v}`).join(`,${ws()}`)}${ws()}}`;
  }

  shuffle<T>(items: T[]): T[] {
    for (let i = items.length - 1; i > 0; i--) {
      const j = this.int(i + 1);
      [items[i], items[j]] = [items[j] as T, items[i] as T];
    }
    return items;
  }

  /** A request the proxy serves normally: [method, params text or undefined]. */
  validCall(): [string, string | undefined] {
    return this.pick<() => [string, string | undefined]>([
      () => ['ping', this.pick([undefined, '{}'])],
      () => ['resources/list', '{}'],
      () => ['resources/list', undefined],
      () => ['resources/list', `{"cursor":${q(this.string())}}`], // a forged cursor: -32602, still one answer
      () => ['resources/templates/list', '{}'],
      () => ['resources/read', `{"uri":"cat+fixture://res/${this.int(3)}"}`],
      () => ['resources/read', `{"uri":${q(`cat+fixture://nope/${this.string()}`)}}`],
      () => ['resources/read', `{"uri":${q(this.string())}}`],
      () => ['resources/read', `{"uri":"cat+fixture://res/1","_meta":{"progressToken":${q(`p${this.int(1e6)}`)}}}`],
      () => ['resources/unsubscribe', `{"uri":${q(`cat+fixture://nope/${this.string()}`)}}`],
      () => ['completion/complete', '{"ref":{"type":"ref/resource","uri":"cat+fixture://item/{category}/{id}"},"argument":{"name":"category","value":"a"}}'],
    ])();
  }

  /** A known method with params of the wrong shape. */
  badParamsCall(): [string, string | undefined] {
    return this.pick<() => [string, string | undefined]>([
      () => ['resources/read', undefined],
      () => ['resources/read', '{}'],
      () => ['resources/read', `{"uri":${this.pick(['1', 'null', 'true', '[]', '{}', '1.5'])}}`],
      () => ['resources/list', `{"cursor":${this.pick(['1', 'null', 'false', '[]', '{}'])}}`],
      () => ['resources/templates/list', `{"cursor":${this.pick(['2', '{}'])}}`],
      () => ['resources/subscribe', this.pick(['{}', '{"uri":5}', undefined])],
      () => ['resources/unsubscribe', this.pick(['{}', '{"uri":[]}'])],
      () => [
        'completion/complete',
        this.pick(['{}', '{"ref":5,"argument":{"name":"a","value":"b"}}', '{"ref":{"type":"ref/nothing"},"argument":{}}', `{"ref":${this.value()}}`]),
      ],
    ])();
  }

  unknownMethod(): string {
    return this.pick([
      'tools/LIST',
      'prompts/gets',
      'sampling/createMessage',
      'rpc.discover',
      '',
      ' ',
      'RESOURCES/LIST',
      'resources/read/',
      `x/${this.string(10)}`,
      'notifications/initialized',
    ]);
  }

  /** A request line: members in random order (jsonrpc first most of the time). */
  request(idText: string | undefined, method: string, params: string | undefined, opts: { idFirst?: boolean; extra?: [string, string][] } = {}): string {
    const members: [string, string][] = [['method', q(method)]];
    if (params !== undefined) members.push(['params', params]);
    members.push(...(opts.extra ?? []));
    this.shuffle(members);
    if (idText !== undefined) {
      if (opts.idFirst) members.unshift(['id', idText]);
      else members.splice(this.int(members.length + 1), 0, ['id', idText]);
    }
    if (opts.idFirst || this.chance(0.8)) members.unshift(['jsonrpc', '"2.0"']);
    else members.push(['jsonrpc', '"2.0"']);
    return this.object(members);
  }

  /** One generated line. */
  next(): Case {
    const r = this.rnd();
    const text = (label: string, line: string, ids: Case['ids'] = []): Case => ({ label, line: Buffer.from(line), ids });
    const one = (id: { value: string | number }, code?: number): Case['ids'] => [{ id: id.value, expect: 'one', ...(code === undefined ? {} : { code }) }];
    /** A fractional id makes any request an invalid envelope: -32600 whatever the method. */
    const codeFor = (id: { value: string | number }, code: number) => (typeof id.value === 'number' && !Number.isInteger(id.value) ? -32600 : code);

    if (r < 0.2) {
      const id = this.readableId();
      const [method, params] = this.validCall();
      return text(`valid ${method}`, this.request(id.text, method, params), one(id));
    }
    if (r < 0.28) {
      const id = this.readableId();
      return text('unknown method', this.request(id.text, this.unknownMethod(), this.chance(0.5) ? '{}' : undefined), one(id, codeFor(id, -32601)));
    }
    if (r < 0.38) {
      const id = this.readableId();
      const [method, params] = this.badParamsCall();
      return text(`bad params ${method}`, this.request(id.text, method, params), one(id, codeFor(id, -32602)));
    }
    if (r < 0.56) {
      const id = this.readableId();
      const [method, params] = this.validCall();
      const mutation = this.int(8);
      const members: [string, string][] = [['id', id.text]];
      if (mutation !== 0) members.push(['jsonrpc', mutation === 1 ? this.pick(['"1.0"', '2', '"2"', 'null', '"2.0 "', '{}']) : '"2.0"']);
      if (mutation === 2) members.push(['method', this.pick(['5', 'null', 'true', '{}', '[]', '["ping"]'])]);
      else if (mutation !== 6) members.push(['method', q(method)]);
      if (mutation === 3) members.push(['params', this.pick(['[]', '[1,2]', '"x"', '7', 'null', 'true'])]);
      else if (params !== undefined && mutation !== 6) members.push(['params', params]);
      if (mutation === 4) members.push(['result', '{}'], ['error', '{"code":1,"message":"x"}']);
      if (mutation === 5) members.push(['result', this.value()]);
      if (mutation === 7) members.push([this.pick(['extra', 'ID', 'Method', 'params ']), this.value()]);
      // #7 (an extra member) may be refused or served: one answer either way, its code not fixed.
      return text(`invalid envelope #${mutation}`, this.object(this.shuffle(members)), one(id, mutation === 7 ? undefined : -32600));
    }
    if (r < 0.62) {
      return text('unreadable id', this.request(this.unreadableId(), this.validCall()[0], this.pick([undefined, '{}'])));
    }
    if (r < 0.69) {
      const id = this.readableId();
      const members: [string, string][] = [['id', id.text]];
      if (this.chance(0.8)) members.push(['jsonrpc', '"2.0"']);
      const shape = this.int(3);
      const deep = shape !== 1 && this.chance(0.3);
      if (shape !== 1) members.push(['result', deep ? `{"deep":${nested(this.between(1100, 5000))}}` : this.value()]);
      if (shape !== 0)
        members.push(['error', this.pick(['{"code":-32000,"message":"x"}', '{"code":"bad"}', 'null', '{"code":-32700,"message":"Parse error"}'])]);
      // Never answered - except that a too-deep one may be refused like any too-deep line (the
      // contract's two rules meet there): then at most one answer, never a loop.
      return deep
        ? text('response-shaped, too deep', this.object(this.shuffle(members)), [{ id: id.value, expect: 'atMostOne' }])
        : text('response-shaped', this.object(this.shuffle(members)), [{ id: id.value, expect: 'none' }]);
    }
    if (r < 0.75) {
      const notification = this.pick<() => string>([
        () => '{"jsonrpc":"2.0","method":"notifications/initialized"}',
        () => `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":${q(`never-sent-${this.int(1e9)}`)}}}`,
        () => '{"jsonrpc":"2.0","method":"notifications/roots/list_changed"}',
        () => `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":${q(`t${this.int(1e6)}`)},"progress":1}}`,
        () => `{"jsonrpc":"2.0","method":${q(`notifications/${this.string(12)}`)},"params":${this.pick(['{}', `{"a":${this.value()}}`])}}`,
      ])();
      return text('notification', notification);
    }
    if (r < 0.8) {
      const id = this.readableId();
      const [method, params] = this.validCall();
      const whole = this.request(id.text, method, params, { idFirst: this.chance(0.5) });
      const garbage = this.pick<() => [string, boolean]>([
        () => [whole.slice(0, this.between(1, whole.length - 1)), true],
        () => [`${whole},`, true],
        () => [`${whole}}`, true],
        () => [whole.replace(/"/g, "'"), true],
        () => [this.string(40).replace(/\n/g, ' '), false],
        () => [`{${this.string(10).replace(/\n/g, ' ')}`, false],
      ])();
      // Not JSON: the contract answers id null; a line that still shows an id must not get two.
      return text('not JSON', garbage[0], garbage[1] ? [{ id: id.value, expect: 'atMostOne' }] : []);
    }
    if (r < 0.84) {
      const inner = Array.from({ length: this.int(4) }, () => {
        const id = this.readableId();
        const [method, params] = this.validCall();
        return { id, line: this.request(id.text, method, params) };
      });
      return text(
        'batch',
        `[${inner.map((i) => i.line).join(',')}]`,
        inner.map((i) => ({ id: i.id.value, expect: 'none' as const })),
      );
    }
    if (r < 0.9) {
      const depth = this.chance(0.02) ? 100_000 : this.between(1_100, 20_000);
      const deep = this.pick([nested(depth), `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`]);
      const where = this.int(4);
      if (where === 0) {
        const id = this.readableId();
        // Compact, id right after jsonrpc: readable from the start of the line, before any nesting.
        const line = `{"jsonrpc":"2.0","id":${id.text},"method":${q(this.pick(['ping', 'resources/read', 'no/such']))},"params":{"uri":"cat+fixture://res/0","x":${deep}}}`;
        return text(`deep ${depth}, id first`, line, one(id, -32600));
      }
      if (where === 1) {
        const id = this.readableId();
        const line = `{"jsonrpc":"2.0","method":"ping","params":{"x":${deep}},"id":${id.text}}`;
        return text(`deep ${depth}, id last`, line, [{ id: id.value, expect: 'atMostOne' }]);
      }
      if (where === 2) return text(`deep ${depth}, notification`, `{"jsonrpc":"2.0","method":"notifications/x","params":{"x":${deep}}}`);
      // Within the limit (under 1000 levels in all): an ordinary request.
      const id = this.readableId();
      const shallow = nested(this.between(10, 900));
      return text(
        'nested within the limit',
        this.request(id.text, this.pick(['ping', 'resources/read', 'no/such']), `{"uri":"cat+fixture://res/2","x":${shallow}}`),
        one(id),
      );
    }
    if (r < 0.93) {
      const id = this.readableId();
      const long = 'x'.repeat(this.between(10_000, 60_000));
      const line = this.chance(0.5)
        ? this.request(id.text, 'resources/read', `{"uri":"cat+fixture://nope/${long}"}`)
        : this.request(id.text, this.unknownMethod(), `{"pad":"${long}"}`);
      return text('long string', line, one(id));
    }
    if (r < 0.96) {
      const id = this.readableId();
      const bad = Buffer.from(Array.from({ length: this.between(1, 8) }, () => this.between(0x80, 0xff)));
      const inString = this.chance(0.7);
      const before = inString
        ? `{"jsonrpc":"2.0","id":${id.text},"method":"resources/read","params":{"uri":"cat+fixture://nope/`
        : `{"jsonrpc":"2.0","id":${id.text},`;
      const after = inString ? '"}}' : '"method":"ping"}';
      // Bad bytes inside a string may be decoded as U+FFFD (one answer) or refused (id null): at most one.
      return {
        label: `invalid UTF-8 ${inString ? 'in a string' : 'between members'}`,
        line: Buffer.concat([Buffer.from(before), bad, Buffer.from(after)]),
        ids: [{ id: id.value, expect: 'atMostOne' }],
      };
    }
    return text('scalar or blank', this.pick(['42', '"str"', 'null', 'true', '-1.5e3', '', '   ', '\t', '{}', '[]', '[[]]', '""']));
  }
}

describe('fuzzed client input', () => {
  it(
    `${MESSAGES} generated lines on one session: alive, exactly one answer per request id, none for responses`,
    { timeout: 60_000 },
    async ({ onTestFailed }) => {
      onTestFailed(() => {
        console.error(`fuzz seed ${SEED}: replay with FUZZ_SEED=${SEED} npx vitest run test/e2e/fuzz.test.ts`);
      });
      const gen = new Generator(prng(SEED));
      await using s = rawCli({ servers: { cat: upstreams.fixture('--resources', '3') } }, { logLevel: 'warn' });
      await s.initialize();

      const cases: Case[] = [];
      while (cases.length < MESSAGES) {
        const chunk: Case[] = [];
        let bytes = 0;
        while (chunk.length < CHUNK_LINES && bytes < CHUNK_BYTES && cases.length + chunk.length < MESSAGES) {
          const c = gen.next();
          chunk.push(c);
          bytes += c.line.length + 2;
        }
        cases.push(...chunk);
        const eol = () => Buffer.from(gen.chance(0.05) ? '\r\n' : '\n');
        await s.write(Buffer.concat(chunk.flatMap((c) => [c.line, eol()])));
        const owed = chunk.flatMap((c) => c.ids.filter((i) => i.expect === 'one').map((i) => ({ ...i, label: c.label })));
        await s
          .until(() => owed.every((i) => s.answers(i.id).length > 0), `answers to chunk ending at line ${cases.length}`, CHUNK_MS)
          .catch((err: unknown) => {
            const missing = owed.filter((i) => s.answers(i.id).length === 0).slice(0, 8);
            throw new Error(
              `seed ${SEED}: ${String(err).split('\n')[0]}; no answer yet for ${missing.map((m) => `${JSON.stringify(m.id).slice(0, 40)} (${m.label})`).join(', ')}`,
            );
          });
      }

      // Two full round trips: anything still owed or duplicated has had its chance to show up.
      expect(await s.readText('cat+fixture://res/0'), `seed ${SEED}`).toBe(fixtureText(0, 1024));
      expect(await s.readText('cat+fixture://res/1'), `seed ${SEED}`).toBe(fixtureText(1, 1024));

      const violations: string[] = [];
      const sent = new Set<string>();
      for (const c of cases) {
        for (const { id, expect: want, code } of c.ids) {
          sent.add(idKey(id));
          const answers = s.answers(id);
          const got = answers.length;
          const ok = want === 'one' ? got === 1 : want === 'none' ? got === 0 : got <= 1;
          if (!ok) violations.push(`${c.label}: id ${JSON.stringify(id).slice(0, 60)} expected ${want}, got ${got} answer(s)`);
          else if (code !== undefined && answers[0]?.error?.code !== code) {
            violations.push(`${c.label}: id ${JSON.stringify(id).slice(0, 60)} expected error ${code}, got ${JSON.stringify(answers[0]).slice(0, 160)}`);
          }
        }
      }
      const strangers = s.lines.filter(
        (l) =>
          l.parsed?.method === undefined &&
          l.parsed?.id !== null &&
          l.parsed?.id !== undefined &&
          !sent.has(idKey(l.parsed.id)) &&
          // eslint-disable-next-line @typescript-eslint/no-base-to-string -- any id the gateway echoed, stringified only to test its prefix
          !String(l.parsed.id).startsWith('w-'),
      );
      for (const l of strangers.slice(0, 10)) violations.push(`an answer with an id never sent: ${l.raw.slice(0, 120)}`);
      const notJson = s.lines.filter((l) => l.parsed?.jsonrpc !== '2.0');
      for (const l of notJson.slice(0, 10)) violations.push(`a stdout line that is not a JSON-RPC message: ${l.raw.slice(0, 120)}`);
      const byKind = new Map<string, number>();
      for (const v of violations) byKind.set(v.slice(0, v.indexOf(':')), (byKind.get(v.slice(0, v.indexOf(':'))) ?? 0) + 1);
      const summary = [...byKind].map(([k, n]) => `${n}x ${k}`).join('; ');
      expect(violations.slice(0, 30), `seed ${SEED}: ${violations.length} violation(s): ${summary}`).toEqual([]);

      expect(s.carrier.alive, `seed ${SEED}`).toBe(true);
      const list = await s.request('resources/list', {});
      expect(
        (list.result?.resources as { uri: string }[] | undefined)?.map((r) => r.uri),
        `seed ${SEED}`,
      ).toContain('cat+fixture://res/2');
      expect(await s.readText('cat+fixture://res/2'), `seed ${SEED}`).toBe(fixtureText(2, 1024));
      expect(cases.length).toBeGreaterThanOrEqual(MESSAGES);
    },
  );
});
