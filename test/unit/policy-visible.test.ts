// policy.visibleServer: a server is named to a principal only when the policy could allow it something there.
import { describe, expect, it } from 'vitest';
import { PolicySchema } from '../../src/config/schema.js';
import { compilePolicy } from '../../src/access/policy.js';

const servers = new Set(['docs', 'secrets', 'web']);
const compile = (policy: unknown) => compilePolicy(PolicySchema.parse(policy), servers);
const alice = { principal: 'alice', roles: ['eng'] };
const bob = { principal: 'bob', roles: [] };

describe('visibleServer', () => {
  it('follows allow rules by server, role, principal and namespaced resource patterns', () => {
    const policy = compile({
      rules: [
        { id: 'eng', effect: 'allow', roles: ['eng'], servers: ['docs', 'secrets'] },
        { id: 'bob-web', effect: 'allow', principals: ['bob'], resources: ['web+https://example.com/**'] },
      ],
    });
    expect(['docs', 'secrets', 'web'].map((s) => policy.visibleServer(alice, s))).toEqual([true, true, false]);
    expect(['docs', 'secrets', 'web'].map((s) => policy.visibleServer(bob, s))).toEqual([false, false, true]);
  });

  it('a blanket deny hides a server even under default allow; a narrow deny does not', () => {
    const policy = compile({
      default: 'allow',
      rules: [
        { id: 'no-secrets', effect: 'deny', principals: ['bob'], servers: ['secrets'] },
        { id: 'no-web-all', effect: 'deny', principals: ['bob'], servers: ['web'], resources: ['**'], tools: ['**'], prompts: ['**'] },
        { id: 'no-key', effect: 'deny', principals: ['bob'], resources: ['docs+file:///key'] },
      ],
    });
    expect(['docs', 'secrets', 'web'].map((s) => policy.visibleServer(bob, s))).toEqual([true, false, false]);
    expect(['docs', 'secrets', 'web'].map((s) => policy.visibleServer(alice, s))).toEqual([true, true, true]);
  });

  it('a deny of every resource leaves a server visible while its tools are allowed; denying its tools and prompts too hides it', () => {
    const only = (extra: Record<string, unknown>) =>
      compile({ default: 'allow', rules: [{ id: 'no-web', effect: 'deny', principals: ['bob'], servers: ['web'], resources: ['**'], ...extra }] });
    expect(only({}).visibleServer(bob, 'web')).toBe(true);
    expect(only({ tools: ['**'] }).visibleServer(bob, 'web')).toBe(true);
    expect(only({ tools: ['**'], prompts: ['**'] }).visibleServer(bob, 'web')).toBe(false);
    expect(only({ tools: ['read_*'], prompts: ['**'] }).visibleServer(bob, 'web')).toBe(true);
  });

  it('an action-limited deny leaves the server visible through the other actions', () => {
    const policy = compile({ default: 'allow', rules: [{ id: 'no-read', effect: 'deny', servers: ['docs'], actions: ['read'] }] });
    expect(policy.visibleServer(bob, 'docs')).toBe(true);
  });

  it('default deny with no rule about the caller hides everything; no policy shows everything', () => {
    expect(compile({ rules: [] }).visibleServer(alice, 'docs')).toBe(false);
    expect(compilePolicy(undefined, servers).visibleServer(bob, 'secrets')).toBe(true);
  });
});
