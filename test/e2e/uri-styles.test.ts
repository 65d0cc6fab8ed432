// One canonical URI per request, through the built CLI: hostile spellings against upstreams that parse URIs four ways never reach a denied file.
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { readJsonLines } from '../helpers/logs.js';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { normalizeUri } from '../../src/uri/normalize-uri.js';
import { hostileSpellings } from '../helpers/hostile-uris.js';
import { ROOT } from '../helpers/built-cli.js';
import { HttpGatewayProcess } from '../helpers/http-gateway.js';
import { rpcError } from '../helpers/rpc-error.js';
import { TempDir } from '../helpers/temp-dir.js';
import { rawCli, type RawCliClient } from '../helpers/cli-stdio.js';
import { type Answer } from '../helpers/raw-client.js';

const FIXTURE = path.join(ROOT, 'test', 'fixtures', 'uri-styles.mjs');
const STYLES = ['exact', 'whatwg', 'strip', 'template'] as const;
const LISTED = ['file:///public/a.txt', 'file:///public/b%20c.txt', 'file:///public/dir/../a2.txt', 'file:///secrets/key.txt'];

interface Recorded {
  method: string;
  uri: string;
  path: string | null;
}

function gateway(policy: unknown): { session: RawCliClient; logs: () => Recorded[] } {
  const session = rawCli(
    {
      servers: Object.fromEntries(STYLES.map((style) => [style, { command: process.execPath, args: [FIXTURE, '--style', style, '--log', `${style}.jsonl`] }])),
      policy,
    },
    { logLevel: 'warn' },
  );
  const logs = () =>
    STYLES.flatMap((style) => {
      return readJsonLines<Recorded>(path.join(session.carrier.dir.path, `${style}.jsonl`));
    });
  return { session, logs };
}

/** The exact line the gateway wrote for `response`. */
function lineOf(session: RawCliClient, response: Answer): string {
  const line = [...session.rawLines].reverse().find((l) => {
    try {
      const m = JSON.parse(l) as Answer;
      return m.id === response.id && m.method === undefined;
    } catch {
      return false;
    }
  });
  if (line === undefined) throw new Error(`no line for ${String(response.id)}`);
  return line;
}

/** The answer line with its id and the URI it names replaced: what is left must be byte for byte the same. */
function shapeOf(line: string, id: unknown, uri: string): string {
  const idText = `"id":${JSON.stringify(id)}`;
  expect(line).toContain(idText);
  const parsed = JSON.parse(line) as { error?: { data?: { uri?: unknown } } };
  expect(parsed.error?.data?.uri).toBe(uri);
  // Re-serialising would hide a difference in escapes: replace the URI's encoding as it appears on the line.
  const encoded = /^"(?:[^"\\]|\\.)*"/.exec(line.slice(line.indexOf('"uri":') + 6))![0];
  return line.replace(idText, '"id":0').replace(`"uri":${encoded}`, '"uri":"U"');
}

async function hostileRound(policy: unknown, inside: (file: string | null) => boolean) {
  const { session, logs } = gateway(policy);
  await using _s = session;
  await session.initialize();
  const spellings = hostileSpellings();
  expect(spellings.length).toBeGreaterThanOrEqual(60);

  // Every URI each upstream lists (and the client may see) still reads, spelled as listed.
  const listed = (await session.request('resources/list', {})).result!.resources as { uri: string }[];
  for (const { uri } of listed) {
    const read = await session.request('resources/read', { uri });
    expect(read.error, uri).toBeUndefined();
    expect((read.result!.contents as { text: string }[])[0]!.text).not.toMatch(/SECRET/);
  }

  let refused = 0;
  for (const style of STYLES) {
    const missing = `${style}+file:///public/missing.txt`;
    const missingAnswer = await session.request('resources/read', { uri: missing });
    const expected = shapeOf(lineOf(session, missingAnswer), missingAnswer.id, missing);
    const unknown = `nosuch+file:///public/a.txt`;
    const unknownSub = await session.request('resources/subscribe', { uri: unknown });
    for (const spelling of spellings) {
      const uri = `${style}+${spelling}`;
      const answer = await session.request('resources/read', { uri });
      expect(answer.result, uri).toBeUndefined();
      expect(shapeOf(lineOf(session, answer), answer.id, uri), uri).toBe(expected);
      if (!normalizeUri(spelling).ok) refused++;
      if (style === 'strip') {
        const sub = await session.request('resources/subscribe', { uri });
        expect(sub.error, uri).toEqual({ ...unknownSub.error, data: { uri } });
      }
    }
  }
  expect(refused).toBeGreaterThan(spellings.length);

  // What the upstreams were asked: never a file outside what the policy allows, and only canonical or listed spellings.
  const records = logs().filter((r) => r.method !== 'complete');
  expect(records.length).toBeGreaterThan(0);
  for (const r of records) {
    expect(inside(r.path), JSON.stringify(r)).toBe(true);
    const canonical = normalizeUri(r.uri);
    expect(LISTED.includes(r.uri) || (canonical.ok && canonical.uri === r.uri), r.uri).toBe(true);
  }
}

describe('one canonical URI per request (four upstream URI parsers)', () => {
  it(`a principal denied file:///secrets/** reads no secret through ${hostileSpellings().length} spellings on any parser; every answer is the missing resource's, byte for byte`, async () => {
    await hostileRound(
      { default: 'allow', rules: [{ id: 'no-secrets', effect: 'deny', resources: ['file:///secrets/**'] }] },
      (file) => !file?.startsWith('/secrets'),
    );
  }, 120_000);

  it('a principal allowed only file:///public/** never gets an upstream past /public, query and fragment escapes included', async () => {
    await hostileRound(
      { default: 'deny', rules: [{ id: 'public', effect: 'allow', resources: ['file:///public/**'] }] },
      (file) => file === null || file.startsWith('/public/'),
    );
  }, 120_000);

  it('canonical spellings of allowed files reach every parser as the same string and read', async () => {
    const { session, logs } = gateway({ default: 'deny', rules: [{ id: 'public', effect: 'allow', resources: ['file:///public/**'] }] });
    await using _s = session;
    await session.initialize();
    for (const style of STYLES) {
      for (const spelling of [
        'FILE:///public/a.txt',
        'file://localhost/public/a.txt',
        'file://%6cocalhost/public/%61.txt',
        'file:/public/a.txt',
        'file:public/a.txt',
      ]) {
        const read = await session.request('resources/read', { uri: `${style}+${spelling}` });
        expect((read.result?.contents as { text: string }[] | undefined)?.[0]?.text, `${style} ${spelling}`).toBe('public a');
      }
    }
    const forwarded = new Set(logs().map((r) => r.uri));
    expect([...forwarded]).toEqual(['file:///public/a.txt']); // every spelling forwarded as the one canonical string
  }, 120_000);

  it('over HTTP, with a bearer token: the same spellings reach no file outside /public, each answered as the missing resource', async () => {
    using dir = new TempDir();
    const config = dir.writeConfig({
      servers: Object.fromEntries(
        STYLES.map((style) => [style, { command: process.execPath, args: [FIXTURE, '--style', style, '--log', dir.file(`${style}.jsonl`)] }]),
      ),
      auth: { tokens: [{ principal: 'pat', roles: ['public'], token: 'pat-token-0123456789abcdef' }] },
      policy: { default: 'deny', rules: [{ id: 'public', effect: 'allow', roles: ['public'], resources: ['file:///public/**'] }] },
    });
    const gw = await HttpGatewayProcess.serve(config);
    try {
      const { url } = gw;
      const client = new Client({ name: 'c', version: '1' });
      await client.connect(new StreamableHTTPClientTransport(url, { requestInit: { headers: { authorization: 'Bearer pat-token-0123456789abcdef' } } }));
      for (const { uri } of (await client.listResources()).resources) {
        expect(((await client.readResource({ uri })).contents[0] as { text: string }).text).not.toMatch(/SECRET/);
      }
      for (const style of STYLES) {
        const missing = await rpcError(client.readResource({ uri: `${style}+file:///public/missing.txt` }));
        for (const spelling of hostileSpellings()) {
          const uri = `${style}+${spelling}`;
          expect(await rpcError(client.readResource({ uri })), uri).toEqual({ ...missing, data: { uri } });
        }
      }
      await client.close();
      const records = STYLES.flatMap((style) => readJsonLines<Recorded>(dir.file(`${style}.jsonl`)));
      expect(records.length).toBeGreaterThan(0);
      for (const r of records) expect(r.path === null || r.path.startsWith('/public/'), JSON.stringify(r)).toBe(true);
    } finally {
      await gw[Symbol.asyncDispose]();
    }
  }, 120_000); // about 1,000 requests each: slow on a loaded machine
});
