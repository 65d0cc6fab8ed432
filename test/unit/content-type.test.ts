// Content-Type must be application/json, parameters allowed; nothing that merely mentions it.
import { describe, expect, it } from 'vitest';
import { isJsonContentType } from '../../src/serve/http/content-type.js';

describe('isJsonContentType', () => {
  it.each(['application/json', 'Application/JSON', ' application/json ; charset=utf-8', 'application/json;charset=UTF-8', ['application/json']])(
    'accepts %j',
    (h) => {
      expect(isJsonContentType(h)).toBe(true);
    },
  );
  it.each([
    undefined,
    '',
    'text/plain; x=application/json',
    'application/jsonx',
    'application/json-seq',
    'text/json',
    'application/json, text/plain',
    ['application/json', 'application/json'],
    [],
  ])('refuses %j', (h) => {
    expect(isJsonContentType(h)).toBe(false);
  });
});
