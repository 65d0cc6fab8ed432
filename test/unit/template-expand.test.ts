// expandKnown: RFC 6570 expressions expanded while their variables are known.
import { describe, expect, it } from 'vitest';
import { expandKnown } from '../../src/access/template-expand.js';

describe('expandKnown', () => {
  it.each([
    ['file:///{name}', { name: 'a.md' }, 'file:///a.md'],
    ['file:///{dir}/{name}', { dir: 'docs' }, 'file:///docs/{name}'],
    ['file:///{dir}/{name}', { name: 'a' }, 'file:///{dir}/{name}'],
    ['x://h{/seg}', { seg: 'p' }, 'x://h/p'],
    ['x://h/s{?q,lang}', { q: 'k', lang: 'en' }, 'x://h/s?q=k&lang=en'],
    ['x://h{#frag}', { frag: 'top' }, 'x://h#top'],
    ['x://{+path}', { path: 'a/b' }, 'x://a/b'],
    ['no-vars', {}, 'no-vars'],
    ['x://{unclosed', { unclosed: 'v' }, 'x://{unclosed'],
    ['x://{a}{b}', { a: '1', b: '2' }, 'x://12'],
  ])('%s with %j is %s', (template, vars, expected) => {
    expect(expandKnown(template, vars)).toBe(expected);
  });
});
