// compose: wrappers run in list order around the last handler; a missing concern is skipped.
import { describe, expect, it } from 'vitest';
import { compose, type Wrapper } from '../../src/wire/compose.js';

type H = (trace: string[]) => string[];
const tag =
  (name: string): Wrapper<H> =>
  (next) =>
  (trace) =>
    next([...trace, name]);

describe('compose', () => {
  it('the first wrapper listed sees a message first, the last handler last', () => {
    expect(compose([tag('edge'), tag('bound'), tag('era')], (t: string[]) => [...t, 'entry'])([])).toEqual(['edge', 'bound', 'era', 'entry']);
  });

  it('skips undefined wrappers and returns the last handler itself when there are none', () => {
    const last: H = (t) => [...t, 'entry'];
    expect(compose([undefined, tag('a'), undefined], last)([])).toEqual(['a', 'entry']);
    expect(compose([], last)).toBe(last);
    expect(compose([undefined], last)).toBe(last);
  });

  it('a wrapper may stop a message (it never calls next)', () => {
    const stop: Wrapper<H> = () => (t) => [...t, 'stopped'];
    expect(compose([tag('a'), stop, tag('b')], (t: string[]) => [...t, 'entry'])([])).toEqual(['a', 'stopped']);
  });
});
