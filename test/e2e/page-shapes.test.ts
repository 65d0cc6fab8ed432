// End to end: exact page shapes through the built CLI, with a filtering policy, for two principals who see the same items by different rules.
import { describe, expect, it } from 'vitest';
import { upstreams } from '../helpers/built-cli.js';
import { listAll } from '../helpers/catalog.js';
import { ProxyProcess } from '../helpers/sdk-clients.js';

const SERVERS = {
  one: upstreams.fixture('--resources', '23', '--page-size', '4'),
  two: upstreams.fixture('--resources', '17', '--page-size', '6'),
};

/** The items both principals may list: `res/1` and `res/10`…`res/19` of each upstream that has them. */
const VISIBLE = [
  ...['1', ...Array.from({ length: 10 }, (_, i) => `1${i}`)].map((n) => `one+fixture://res/${n}`),
  ...['1', ...Array.from({ length: 7 }, (_, i) => `1${i}`)].map((n) => `two+fixture://res/${n}`),
];

/** alice: deny by default, allowed exactly those items (and nothing else). */
const ALICE = {
  servers: SERVERS,
  stdio: { principal: 'alice' },
  list: { maxItemsPerPage: 5 },
  policy: { default: 'deny', rules: [{ id: 'ones', effect: 'allow', principals: ['alice'], actions: ['list'], resources: ['fixture://res/1*'] }] },
};

/** bob: allow by default (templates, reads, …), everything else listed is denied. */
const BOB = {
  servers: SERVERS,
  stdio: { principal: 'bob' },
  list: { maxItemsPerPage: 5 },
  policy: {
    default: 'allow',
    rules: [
      {
        id: 'not-ones',
        effect: 'deny',
        actions: ['list'],
        resources: ['fixture://ticker', 'fixture://stats', 'fixture://res/0', ...[2, 3, 4, 5, 6, 7, 8, 9].map((d) => `fixture://res/${d}*`)],
      },
    ],
  },
};

describe('page shapes through the built CLI', () => {
  it('pages are exactly maxItemsPerPage visible items, the last short and never empty, the same for two principals who see the same items', async () => {
    await using alice = await ProxyProcess.start(ALICE);
    await using bob = await ProxyProcess.start(BOB);
    const a = await listAll(alice.client);
    const b = await listAll(bob.client);
    expect(a.items.map((r) => r.uri)).toEqual(VISIBLE);
    expect(b.items.map((r) => r.uri)).toEqual(VISIBLE);
    expect(a.pages.map((p) => p.size)).toEqual([5, 5, 5, 4]);
    expect(b.pages.map((p) => p.size)).toEqual([5, 5, 5, 4]);
    expect([...a.pages, ...b.pages].map((p) => p.meta)).toEqual(Array(8).fill(undefined));
    // bob sees more than alice elsewhere: the templates.
    const templates = { alice: (await listAll(alice.client, 'templates')).items, bob: (await listAll(bob.client, 'templates')).items };
    expect(templates.bob).toHaveLength(4);
    expect(templates.alice.length).toBeLessThan(templates.bob.length);
  });
});
