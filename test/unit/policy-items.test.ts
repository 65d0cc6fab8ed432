// Policy on tools and prompts: name globs (upstream or client name), annotations, kinds a rule is about, deny overrides, and the config's id collisions.
import { describe, expect, it } from 'vitest';
import { compilePolicy } from '../../src/access/policy.js';
import { ConfigSchema, PolicySchema } from '../../src/config/schema.js';

const compile = (policy: unknown) => compilePolicy(PolicySchema.parse(policy), new Set(['gh', 'docs']));
const support = { principal: 'sam', roles: ['support'] };
const eng = { principal: 'erin', roles: ['eng'] };
const tool = (name: string, annotations?: Record<string, unknown>) => ({ kind: 'tool' as const, name, clientName: `gh__${name}`, annotations });

describe('policy on tools and prompts', () => {
  const policy = compile({
    default: 'deny',
    rules: [
      { id: 'read-only', effect: 'allow', roles: ['support'], annotations: { readOnlyHint: true } },
      { id: 'eng-gh', effect: 'allow', roles: ['eng'], servers: ['gh'], tools: ['gh__*'] },
      { id: 'eng-docs', effect: 'allow', roles: ['eng'], resources: ['docs+file:///**'] },
      { id: 'no-delete', effect: 'deny', tools: ['delete_*'] },
      { id: 'prompts', effect: 'allow', prompts: ['greet'], actions: ['list', 'get'] },
    ],
  });

  it('one rule for read-only tools; a missing or false annotation does not match', () => {
    expect(policy.decideItem(support, 'call', 'gh', tool('search', { readOnlyHint: true }))).toEqual({ allow: true, rule: 'read-only' });
    expect(policy.decideItem(support, 'call', 'gh', tool('create', { readOnlyHint: false }))).toEqual({ allow: false, rule: 'default' });
    expect(policy.decideItem(support, 'call', 'gh', tool('create'))).toEqual({ allow: false, rule: 'default' });
  });

  it('globs match the client name or the upstream name; deny overrides; a resource rule is not about tools', () => {
    expect(policy.decideItem(eng, 'call', 'gh', tool('create_issue'))).toEqual({ allow: true, rule: 'eng-gh' });
    expect(policy.decideItem(eng, 'call', 'gh', tool('delete_repo'))).toEqual({ allow: false, rule: 'no-delete' });
    expect(policy.decideItem(eng, 'call', 'docs', { kind: 'tool', name: 'x', clientName: 'docs__x' })).toEqual({ allow: false, rule: 'default' });
    expect(policy.decide(eng, 'read', 'docs', 'file:///a.md')).toEqual({ allow: true, rule: 'eng-docs' });
    expect(policy.decide(eng, 'read', 'gh', 'file:///a.md')).toEqual({ allow: false, rule: 'default' }); // eng-gh names tools only
  });

  it('prompts by name and action', () => {
    const greet = { kind: 'prompt' as const, name: 'greet', clientName: 'docs__greet' };
    expect(policy.decideItem(eng, 'get', 'docs', greet)).toEqual({ allow: true, rule: 'prompts' });
    expect(policy.decideItem(eng, 'complete', 'docs', greet)).toEqual({ allow: false, rule: 'default' });
    expect(policy.decideItem(eng, 'get', 'docs', { ...greet, name: 'other', clientName: 'docs__other' })).toEqual({ allow: false, rule: 'default' });
  });

  it('a rule with no target field is about every kind', () => {
    const all = compile({ default: 'deny', rules: [{ id: 'admin', effect: 'allow', roles: ['admin'] }] });
    const admin = { principal: 'a', roles: ['admin'] };
    expect(all.decideItem(admin, 'call', 'gh', tool('anything')).allow).toBe(true);
    expect(all.decide(admin, 'read', 'gh', 'file:///x').allow).toBe(true);
  });

  it('refuses server ids whose tool name prefixes collide (a config error)', () => {
    const parsed = ConfigSchema.safeParse({ servers: { 'a.b': { command: 'x' }, 'a-b': { command: 'y' } } });
    expect(parsed.success).toBe(false);
    expect(JSON.stringify(parsed.error?.issues)).toContain('server ids \\"a.b\\" and \\"a-b\\" give tool names the same prefix');
  });
});
