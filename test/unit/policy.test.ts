// Policy decisions: deny overrides, defaults, match fields, namespaced patterns, normalisation attacks, templates.
import { describe, expect, it } from 'vitest';
import { compilePolicy, type Policy, type PolicyAction, type PolicySubject } from '../../src/access/policy.js';
import { compileResourcePattern, patternServer, resourcePatternProblem } from '../../src/uri/resource-pattern.js';
import { parseConfig, type FederateConfigInput } from '../../src/config/load.js';

const SERVERS = { docs: { command: 'x' }, wiki: { command: 'x' }, git: { command: 'x' }, mem: { command: 'x' } };

/** A policy as the proxy builds it: validated by the config schema, compiled with the server ids. */
function policyOf(policy: FederateConfigInput['policy']): Policy {
  const config = parseConfig({ servers: SERVERS, policy }, { env: {} });
  return compilePolicy(config.policy, new Set(Object.keys(config.servers)));
}

const alice: PolicySubject = { principal: 'alice', roles: ['eng'] };
const bob: PolicySubject = { principal: 'bob', roles: ['eng', 'ops'] };
const carol: PolicySubject = { principal: 'carol', roles: [] };

const issueExample = policyOf({
  default: 'deny',
  rules: [
    {
      id: 'eng-docs',
      effect: 'allow',
      principals: ['alice'],
      roles: ['eng'],
      servers: ['docs'],
      resources: ['file:///handbook/**'],
      actions: ['list', 'read', 'subscribe', 'complete'],
    },
  ],
});

type Row = [string, PolicySubject, PolicyAction, string, string, boolean, string];

describe('decide: the issue example', () => {
  it.each<Row>([
    ['allowed', alice, 'read', 'docs', 'file:///handbook/a.md', true, 'eng-docs'],
    ['every action listed', alice, 'subscribe', 'docs', 'file:///handbook/x/y.md', true, 'eng-docs'],
    ['the directory itself', alice, 'list', 'docs', 'file:///handbook', true, 'eng-docs'],
    ['another principal', carol, 'read', 'docs', 'file:///handbook/a.md', false, 'default'],
    ['the principal but not the role', { principal: 'alice', roles: ['sales'] }, 'read', 'docs', 'file:///handbook/a.md', false, 'default'],
    ['another server', alice, 'read', 'wiki', 'file:///handbook/a.md', false, 'default'],
    ['outside the glob', alice, 'read', 'docs', 'file:///secrets/a.md', false, 'default'],
    ['a sibling with the same prefix', alice, 'read', 'docs', 'file:///handbook-old/a.md', false, 'default'],
  ])('%s', (_what, caller, action, server, uri, allow, rule) => {
    expect(issueExample.decide(caller, action, server, uri)).toEqual({ allow, rule });
  });
});

describe('decide: rules', () => {
  const policy = policyOf({
    default: 'deny',
    rules: [
      { id: 'eng-read', effect: 'allow', roles: ['eng'], actions: ['read', 'list'] },
      { id: 'no-secrets', effect: 'deny', resources: ['file:///secrets/**', 'memo:secret-*'] },
      { id: 'ops-subscribe', effect: 'allow', roles: ['ops'], actions: ['subscribe'], servers: ['docs', 'wiki'] },
      { id: 'bob-not-wiki', effect: 'deny', principals: ['bob'], servers: ['wiki'] },
      { id: 'docs-public', effect: 'allow', resources: ['docs+file:///public/*'] },
      { id: 'git-uris', effect: 'allow', resources: ['git\\+ssh://**'], actions: ['read'] },
      { id: 'mem-notes', effect: 'allow', resources: ['mem+memo:**'], principals: ['carol'] },
    ],
  });

  it.each<Row>([
    // roles: any one of the caller's roles
    ['a role grants', alice, 'read', 'docs', 'file:///a.md', true, 'eng-read'],
    ['a second role grants', bob, 'subscribe', 'docs', 'file:///a.md', true, 'ops-subscribe'],
    ['an action the rule leaves out', alice, 'subscribe', 'docs', 'file:///a.md', false, 'default'],
    ['no roles at all', carol, 'read', 'docs', 'file:///a.md', false, 'default'],
    // deny overrides allow, whatever the order of the rules
    ['deny overrides an earlier allow', alice, 'read', 'docs', 'file:///secrets/k', false, 'no-secrets'],
    ['deny covers the directory itself', alice, 'read', 'docs', 'file:///secrets', false, 'no-secrets'],
    ['deny covers the directory with a slash', alice, 'list', 'docs', 'file:///secrets/', false, 'no-secrets'],
    ['deny on an opaque URI', alice, 'read', 'mem', 'memo:secret-plans', false, 'no-secrets'],
    ['the opaque deny stays within its segment', alice, 'read', 'mem', 'memo:secret-x/y', true, 'eng-read'],
    ['a principal deny beats a role allow', bob, 'read', 'wiki', 'file:///a.md', false, 'bob-not-wiki'],
    ['the principal deny is per server', bob, 'read', 'docs', 'file:///a.md', true, 'eng-read'],
    // namespaced patterns apply to their server only
    ['a namespaced pattern on its server', carol, 'read', 'docs', 'file:///public/a', true, 'docs-public'],
    ['a namespaced pattern elsewhere', carol, 'read', 'wiki', 'file:///public/a', false, 'default'],
    ['a namespaced pattern is not matched against an upstream URI that looks namespaced', carol, 'read', 'wiki', 'docs+file:///public/a', false, 'default'],
    ['an escaped + matches the upstream scheme', carol, 'read', 'wiki', 'git+ssh://h/r', true, 'git-uris'],
    ['... on any server', carol, 'read', 'docs', 'git+ssh://h/r', true, 'git-uris'],
    ['an opaque namespaced pattern', carol, 'subscribe', 'mem', 'memo:anything/at/all', true, 'mem-notes'],
  ])('%s', (_what, caller, action, server, uri, allow, rule) => {
    expect(policy.decide(caller, action, server, uri)).toEqual({ allow, rule });
  });

  it('a bare ** covers every URI', () => {
    const p = policyOf({
      rules: [
        { id: 'md', effect: 'deny', resources: ['**.md'] },
        { id: 'all', effect: 'allow', resources: ['**'] },
      ],
    });
    expect(p.decide(carol, 'read', 'mem', 'memo:x')).toEqual({ allow: true, rule: 'all' });
    expect(p.decide(carol, 'read', 'docs', 'file:///a/b.md')).toEqual({ allow: false, rule: 'md' });
  });

  it('the first matching allow rule is the one named', () => {
    const p = policyOf({
      rules: [
        { id: 'first', effect: 'allow', roles: ['eng'] },
        { id: 'second', effect: 'allow' },
      ],
    });
    expect(p.decide(alice, 'read', 'docs', 'file:///a')).toEqual({ allow: true, rule: 'first' });
    expect(p.decide(carol, 'read', 'docs', 'file:///a')).toEqual({ allow: true, rule: 'second' });
  });
});

describe('decide: defaults', () => {
  it('no policy block: everything allowed, not enforced, even URIs that would be refused', () => {
    const config = parseConfig({ servers: SERVERS }, { env: {} });
    const p = compilePolicy(config.policy, new Set(Object.keys(config.servers)));
    expect(p.enforced).toBe(false);
    expect(p.decide(carol, 'read', 'docs', 'file:///secrets/x')).toEqual({ allow: true, rule: 'default' });
    expect(p.decide(carol, 'read', 'docs', 'file:///%2e%2e/x')).toEqual({ allow: true, rule: 'default' });
    expect(p.decideTemplate(carol, 'list', 'docs', 'file:///{path}')).toEqual({ allow: true, rule: 'default' });
  });

  it('a policy block with no rules denies everything by default', () => {
    const p = policyOf({});
    expect(p.enforced).toBe(true);
    expect(p.decide(alice, 'read', 'docs', 'file:///a')).toEqual({ allow: false, rule: 'default' });
  });

  it('default "allow" applies when no rule matches; deny rules still win', () => {
    const p = policyOf({ default: 'allow', rules: [{ id: 'no-secrets', effect: 'deny', resources: ['file:///secrets/**'] }] });
    expect(p.decide(carol, 'read', 'docs', 'file:///a')).toEqual({ allow: true, rule: 'default' });
    expect(p.decide(carol, 'read', 'docs', 'file:///secrets/a')).toEqual({ allow: false, rule: 'no-secrets' });
  });

  it('an evaluation error is a deny', () => {
    const p = policyOf({ default: 'allow', rules: [{ id: 'eng', effect: 'allow', roles: ['eng'] }] });
    const broken = {
      principal: 'mallory',
      get roles(): string[] {
        throw new Error('boom');
      },
    };
    expect(p.decide(broken, 'read', 'docs', 'file:///a')).toEqual({ allow: false, rule: 'error' });
    expect(p.decideTemplate(broken, 'list', 'docs', 'file:///{a}')).toEqual({ allow: false, rule: 'error' });
  });

  it('decide can be called detached from the policy object', () => {
    // eslint-disable-next-line @typescript-eslint/unbound-method -- the example's functions do not use `this`
    const { decide, decideTemplate } = issueExample;
    expect(decide(alice, 'read', 'docs', 'file:///handbook/a')).toEqual({ allow: true, rule: 'eng-docs' });
    expect(decideTemplate(alice, 'list', 'docs', 'file:///handbook/{a}')).toEqual({ allow: true, rule: 'eng-docs' });
  });
});

describe('decide: normalisation attacks', () => {
  // Alice may read the handbook; nobody may read secrets, and the default is allow, so a URI that
  // dodged the deny rule would be let through: each attack below must still be denied.
  const p = policyOf({
    default: 'allow',
    rules: [
      { id: 'handbook', effect: 'allow', principals: ['alice'], resources: ['file:///handbook/**'] },
      { id: 'secrets', effect: 'deny', resources: ['file:///secrets/**', 'https://h.example/admin/**'] },
    ],
  });
  const strict = policyOf({ rules: [{ id: 'handbook', effect: 'allow', resources: ['file:///handbook/**'] }] });

  it.each([
    // dot segments are refused outright (issue 14): a reader may resolve them or not
    ['dot segments', 'file:///handbook/../secrets/k', 'invalid-uri'],
    ['dot segments at the end', 'file:///secrets/a/..', 'invalid-uri'],
    ['single dots', 'file:///./secrets/./k', 'invalid-uri'],
    ['climbing above the root', 'file:///../../secrets/k', 'invalid-uri'],
    ['dot segments in the query', 'file:///handbook/x?/../../secrets/k', 'invalid-uri'],
    ['dot segments in the fragment', 'file:///handbook/x#/../../secrets/k', 'invalid-uri'],
    ['a localhost authority', 'file://localhost/secrets/k', 'secrets'],
    ['a LOCALHOST authority', 'file://LOCALHOST/secrets/k', 'secrets'],
    ['an escaped localhost authority', 'file://%6cocalhost/secrets/k', 'secrets'],
    ['file:/ without authority', 'file:/secrets/k', 'secrets'],
    ['file: with a relative path', 'file:secrets/k', 'secrets'],
    ['another file authority', 'file://evil/secrets/k', 'invalid-uri'],
    ['the default port', 'https://h.example:443/admin/x', 'secrets'],
    ['no http authority', 'https:h.example/admin/x', 'invalid-uri'],
    ['a percent-spelled letter', 'file:///%73ecrets/k', 'secrets'],
    ['lower-case escapes of letters', 'file:///s%65cr%65ts/k', 'secrets'],
    ['mixed-case scheme', 'FILE:///secrets/k', 'secrets'],
    ['mixed-case scheme and host', 'HTTPS://H.Example/admin/x', 'secrets'],
    ['encoded dots', 'file:///handbook/%2e%2e/secrets/k', 'invalid-uri'],
    ['encoded dots, upper case', 'file:///handbook/%2E%2E/secrets/k', 'invalid-uri'],
    ['encoded slash', 'file:///handbook%2f..%2fsecrets/k', 'invalid-uri'],
    ['encoded slash, upper case', 'file:///handbook%2F..%2Fsecrets/k', 'invalid-uri'],
    ['encoded backslash', 'file:///handbook/..%5Csecrets/k', 'invalid-uri'],
    ['encoded NUL', 'file:///secrets%00/k', 'invalid-uri'],
    ['double encoding', 'file:///handbook/%252e%252e/secrets/k', 'invalid-uri'],
    ['raw backslash', 'file:///handbook\\..\\secrets\\k', 'invalid-uri'],
    ['raw NUL', 'file:///secrets\u0000/k', 'invalid-uri'],
    ['raw newline', 'file:///secrets/k\n', 'invalid-uri'],
    ['U+2028', 'file:///secrets\u2028/k', 'invalid-uri'],
    ['U+2029', 'file:///handbook/a\u2029', 'invalid-uri'],
    ['DEL', 'file:///handbook/a\u007f', 'invalid-uri'],
    ['a C1 control', 'file:///handbook/a\u009b', 'invalid-uri'],
    ['an empty segment', 'file:////secrets/k', 'invalid-uri'],
    ['an empty segment before dots', 'file:///handbook//../secrets/k', 'invalid-uri'],
    ['no scheme', '/secrets/k', 'invalid-uri'],
  ])('%s: %j is denied by %s', (_what, uri, rule) => {
    expect(p.decide(alice, 'read', 'docs', uri)).toEqual({ allow: false, rule });
  });

  it.each([
    ['file:///handbook/../secrets'],
    ['file:///handbook/%2e%2e/secrets'],
    ['file:///handbook/%2E%2e/secrets'],
    ['file:///handbook/..%2Fsecrets'],
    ['file:///handbook/.%2e/secrets'],
    ['file:///handbook/\u2028'],
  ])('%j never matches file:///handbook/**', (uri) => {
    expect(strict.decide(alice, 'read', 'docs', uri).allow).toBe(false);
  });

  it.each([
    ['file:///handbook', true],
    ['file:///handbook/', true],
    ['file:///handbook/a/./b.md', false], // dot segments: refused (issue 14)
    ['file:///handbook/a/../b.md', false],
    ['file://localhost/handbook/a', true],
    ['file:///HANDBOOK/a', false],
    ['FILE:///handbook/a', true],
    ['file:///handbook%2Fa', false],
    ['file:///handbook/caf%C3%A9', true],
  ])('trailing slashes and harmless spellings: %j → allow %s', (uri, allow) => {
    expect(strict.decide(alice, 'read', 'docs', uri).allow).toBe(allow);
  });

  it('an issued URI is decided on its listed form: dot segments resolved, else its exact text', () => {
    expect(p.decide(alice, 'read', 'docs', 'file:///handbook/../secrets/k', 'issued')).toEqual({ allow: false, rule: 'secrets' });
    expect(strict.decide(alice, 'read', 'docs', 'file:///handbook/a/../b.md', 'issued')).toEqual({ allow: true, rule: 'handbook' });
    expect(strict.decide(alice, 'read', 'docs', 'file://evil/handbook/a', 'issued').allow).toBe(false);
    expect(p.decide(alice, 'read', 'docs', 'file:///secrets/%2e%2e/k', 'issued')).toEqual({ allow: false, rule: 'secrets' });
  });

  it('a rule written in NFC or NFD matches URIs in either', () => {
    for (const rule of ['file:///priv\u00e9/**', 'file:///prive\u0301/**']) {
      const nfc = policyOf({ default: 'allow', rules: [{ id: 'prive', effect: 'deny', resources: [rule] }] });
      for (const uri of ['file:///priv\u00e9/k', 'file:///prive\u0301/k', 'file:///priv%C3%A9/k', 'file:///prive%CC%81/k']) {
        expect(nfc.decide(alice, 'read', 'docs', uri), `${rule} ${uri}`).toEqual({ allow: false, rule: 'prive' });
      }
    }
  });
});

describe('decide: queries and fragments', () => {
  const p = policyOf({
    default: 'allow',
    rules: [
      { id: 'md-secrets', effect: 'deny', resources: ['file:///secrets/*.md'] },
      { id: 'private-notes', effect: 'deny', resources: ['memo:**#private'] },
      { id: 'handbook-md', effect: 'allow', principals: ['alice'], resources: ['file:///handbook/*.md'] },
      { id: 'search', effect: 'allow', principals: ['alice'], resources: ['https://h.example/search\\?q=*'] },
    ],
  });
  const strict = policyOf({
    rules: [
      { id: 'handbook-md', effect: 'allow', resources: ['file:///handbook/*.md'] },
      { id: 'search', effect: 'allow', resources: ['https://h.example/search\\?q=*'] },
    ],
  });

  it.each<Row>([
    ['a query cannot dodge a suffix deny', carol, 'read', 'docs', 'file:///secrets/a.md?raw=1', false, 'md-secrets'],
    ['a query with slashes cannot either', carol, 'read', 'docs', 'file:///secrets/a.md?x=/y/z', false, 'md-secrets'],
    ['a fragment cannot dodge a suffix deny', carol, 'read', 'docs', 'file:///secrets/a.md#top', false, 'md-secrets'],
    ['a pattern with # matches the fragment', carol, 'read', 'mem', 'memo:a/b#private', false, 'private-notes'],
    ['... and only that fragment', carol, 'read', 'mem', 'memo:a/b#public', true, 'default'],
  ])('%s', (_what, caller, action, server, uri, allow, rule) => {
    expect(p.decide(caller, action, server, uri)).toEqual({ allow, rule });
  });

  it.each<[string, string, boolean]>([
    ['a query does not stop an allow on the path', 'file:///handbook/a.md?x=/y', true],
    ['the path must still match', 'file:///handbook/a.txt?x=.md', false],
    ['a pattern with \\? matches the query', 'https://h.example/search?q=cats', true],
    ['... which it then requires', 'https://h.example/search', false],
    ['... with * within one segment', 'https://h.example/search?q=a/b', false],
  ])('%s: %j → %s', (_what, uri, allow) => {
    expect(strict.decide(alice, 'read', 'docs', uri).allow).toBe(allow);
  });

  it('templates with a query are decided on the path unless the pattern has one', () => {
    expect(p.decideTemplate(carol, 'list', 'docs', 'file:///secrets/a.md?v={v}')).toEqual({ allow: false, rule: 'md-secrets' });
    expect(p.decideTemplate(carol, 'list', 'docs', 'file:///secrets/a.txt?v={v}')).toEqual({ allow: true, rule: 'default' });
    expect(strict.decideTemplate(alice, 'list', 'docs', 'file:///handbook/a.md#{part}')).toEqual({ allow: true, rule: 'handbook-md' });
    expect(strict.decideTemplate(alice, 'list', 'docs', 'file:///handbook/a.txt?{q}')).toEqual({ allow: false, rule: 'default' });
    expect(strict.decideTemplate(alice, 'list', 'docs', 'https://h.example/search?q={q}')).toEqual({ allow: true, rule: 'search' });
    expect(strict.decideTemplate(alice, 'list', 'docs', 'https://h.example/find?q={q}')).toEqual({ allow: false, rule: 'default' });
  });
});

describe('decideTemplate', () => {
  const p = policyOf({
    default: 'deny',
    rules: [
      { id: 'handbook', effect: 'allow', roles: ['eng'], resources: ['file:///handbook/**', 'memo:notes-*'] },
      { id: 'all-eng-list', effect: 'allow', roles: ['ops'], actions: ['list'] },
      { id: 'drafts', effect: 'deny', resources: ['file:///handbook/drafts/**'] },
      { id: 'one-draft', effect: 'deny', resources: ['file:///handbook/final/secret.md'] },
      { id: 'no-wiki', effect: 'deny', servers: ['wiki'], principals: ['bob'] },
    ],
  });

  it.each<Row>([
    ['a template inside the allowed tree', alice, 'list', 'docs', 'file:///handbook/{path}', true, 'handbook'],
    ['a template whose prefix reaches the allowed tree', alice, 'list', 'docs', 'file:///{path}', true, 'handbook'],
    ['a template with an empty prefix', alice, 'list', 'docs', '{uri}', true, 'handbook'],
    ['a template outside the allowed tree', alice, 'list', 'docs', 'file:///other/{path}', false, 'default'],
    ['a template on a sibling with the same prefix', alice, 'list', 'docs', 'file:///handbook-old/{path}', false, 'default'],
    ['an opaque template within a segment glob', alice, 'list', 'docs', 'memo:notes-{id}', true, 'handbook'],
    ['an opaque template beyond it', alice, 'list', 'docs', 'memo:other-{id}', false, 'default'],
    ['a deny that covers every expansion hides it', alice, 'list', 'docs', 'file:///handbook/drafts/{path}', false, 'drafts'],
    ['a deny that covers every expansion, deeper', alice, 'list', 'docs', 'file:///handbook/drafts/2024/{m}', false, 'drafts'],
    ['a deny that covers some expansions does not', alice, 'list', 'docs', 'file:///handbook/{path}', true, 'handbook'],
    ['a deny of one URI does not', alice, 'list', 'docs', 'file:///handbook/final/{name}', true, 'handbook'],
    ['a deny with no resources covers everything', bob, 'list', 'wiki', 'file:///handbook/{path}', false, 'no-wiki'],
    ['an allow with no resources counts', { principal: 'dan', roles: ['ops'] }, 'list', 'wiki', 'tickets://{id}', true, 'all-eng-list'],
    ['... for its actions only', { principal: 'dan', roles: ['ops'] }, 'read', 'wiki', 'tickets://{id}', false, 'default'],
    ['the prefix is normalised: case', alice, 'list', 'docs', 'FILE:///handbook/drafts/{x}', false, 'drafts'],
    ['the prefix is normalised: dots', alice, 'list', 'docs', 'file:///handbook/x/../drafts/{x}', false, 'drafts'],
    ['a prefix that cannot be a URI', alice, 'list', 'docs', 'file:///handbook/%2e%2e/{x}', false, 'invalid-uri'],
    ['a template without expressions is decided as a URI', alice, 'list', 'docs', 'file:///handbook/a.md', true, 'handbook'],
    ['... including its denies', alice, 'list', 'docs', 'file:///handbook/final/secret.md', false, 'one-draft'],
  ])('%s', (_what, caller, action, server, template, allow, rule) => {
    expect(p.decideTemplate(caller, action, server, template)).toEqual({ allow, rule });
  });

  it('default "allow" lists a template no rule is about', () => {
    const open = policyOf({ default: 'allow', rules: [{ id: 'drafts', effect: 'deny', resources: ['file:///drafts/**'] }] });
    expect(open.decideTemplate(carol, 'list', 'docs', 'file:///{path}')).toEqual({ allow: true, rule: 'default' });
    expect(open.decideTemplate(carol, 'list', 'docs', 'file:///drafts/{path}')).toEqual({ allow: false, rule: 'drafts' });
  });
});

describe('resource patterns', () => {
  const ids = new Set(['docs', 'git']);

  it.each([
    ['docs+file:///**', 'docs', 'file:///**'],
    ['git+ssh://**', 'git', 'ssh://**'],
    ['git\\+ssh://**', undefined, 'git\\+ssh://**'],
    ['wiki+file:///**', undefined, 'wiki+file:///**'],
    ['file:///**', undefined, 'file:///**'],
    ['+file:///**', undefined, '+file:///**'],
    ['d*+file:///**', undefined, 'd*+file:///**'],
  ])('%j names server %s and matches with %j', (pattern, server, glob) => {
    expect(patternServer(pattern, ids)).toBe(server);
    const compiled = compileResourcePattern(pattern, ids);
    expect(compiled.server).toBe(server);
    expect(compiled.glob.source).toBe(glob);
  });

  it.each([
    ['file:///a/*.md', false],
    ['file:///a?b', false],
    ['https://h/s\\?q=*', true],
    ['memo:**#private', true],
    ['docs+memo:**#private', true],
  ])('%j is matched against the whole URI: %s', (pattern, whole) => {
    expect(compileResourcePattern(pattern, ids).wholeUri).toBe(whole);
  });

  it.each([
    ['file:///handbook/**', undefined],
    ['docs+file:///handbook/**', undefined],
    ['memo:**', undefined],
    ['*:**', undefined],
    ['**', undefined],
    ['**.md', undefined],
    ['?*:/**', undefined],
    ['**/../x', 'a dot segment'],
    ['file:///a?**/../x', 'never matches'],
    ['file://localhost/**', 'write file URIs as file:///path'],
    ['http://h.example:80/**', 'leave out the default port'],
    ['file:///priv\u00e9/**', undefined],
    ['file:///prive\u0301/**', undefined],
    ['**/%7E', 'write percent-escaped characters'],
    ['https://*.example.com/**', undefined],
    ['FILE:///**', 'write the scheme in lower case'],
    ['https://*.Example.com/**', 'write the host in lower case'],
    ['file:///a/../**', 'a "." or ".." segment never matches'],
    ['file:///**/./x', 'a "." or ".." segment never matches'],
    ['file:///%7E/**', 'write percent-escaped characters'],
    ['file:///a%2f**', 'an escaped'],
    ['file:///***', '"***" is not a glob'],
    ['file:///{a,b}', '"{" is reserved'],
    ['/handbook/**', 'no scheme'],
    ['file:///a\u2028', 'a control character'],
  ])('%j: problem %s', (pattern, problem) => {
    const found = resourcePatternProblem(pattern);
    if (problem === undefined) expect(found).toBeUndefined();
    else expect(found).toContain(problem);
  });
});
