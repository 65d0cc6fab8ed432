// The listen core shared by stdio and HTTP: each URI accepted once, held URIs kept once, refusals and rejections left out, an early stop.
import { describe, expect, it } from 'vitest';
import { acceptEach } from '../../src/eras/listen-accept.js';

describe('acceptEach', () => {
  it('accepts each requested URI once, in order, and keeps each held URI once', async () => {
    const asked: string[] = [];
    const held = await acceptEach(['a', 'B', 'a', 'b', 'c'], async (uri) => {
      asked.push(uri);
      return uri.toLowerCase(); // two spellings of one resource are held as one
    });
    expect(asked).toEqual(['a', 'B', 'b', 'c']);
    expect(held).toEqual(['a', 'b', 'c']);
  });

  it('leaves out refused URIs and ones whose accept rejects', async () => {
    const held = await acceptEach(['ok', 'denied', 'broken', 'ok2'], async (uri) => {
      if (uri === 'broken') throw new Error('audit log failed');
      return uri === 'denied' ? undefined : uri;
    });
    expect(held).toEqual(['ok', 'ok2']);
  });

  it('stops asking once the listen is no longer wanted', async () => {
    let open = true;
    const asked: string[] = [];
    const held = await acceptEach(
      ['a', 'b', 'c'],
      async (uri) => {
        asked.push(uri);
        if (uri === 'b') open = false;
        return uri;
      },
      () => open,
    );
    expect(asked).toEqual(['a', 'b']);
    expect(held).toEqual(['a', 'b']);
  });
});
