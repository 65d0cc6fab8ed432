// The environment a stdio upstream inherits is the shipped SDK's: same variable list, same filtering of unset values and exported shell functions.
import { DEFAULT_INHERITED_ENV_VARS, getDefaultEnvironment } from '@modelcontextprotocol/client/stdio';
import { afterEach, describe, expect, it } from 'vitest';
import { INHERITED_ENV_VARS, safeEnvironment } from '../../src/upstream/safe-env.js';

describe('safeEnvironment', () => {
  const saved = { ...process.env };
  afterEach(() => {
    for (const key of Object.keys(process.env)) if (!(key in saved)) delete process.env[key];
    Object.assign(process.env, saved);
  });

  it('inherits the variables the SDK inherits', () => {
    expect(INHERITED_ENV_VARS).toEqual(DEFAULT_INHERITED_ENV_VARS);
  });

  it('gives what getDefaultEnvironment gives: unset variables and shell functions left out, secrets never inherited', () => {
    process.env.SHELL = '() { :; }';
    delete process.env.LOGNAME;
    process.env.TERM = 'xterm';
    process.env.SECRET_TOKEN = 'hunter2';
    expect(safeEnvironment()).toEqual(getDefaultEnvironment());
    expect(safeEnvironment()).not.toHaveProperty('SHELL');
    expect(safeEnvironment()).not.toHaveProperty('LOGNAME');
    expect(safeEnvironment()).not.toHaveProperty('SECRET_TOKEN');
    expect(safeEnvironment().TERM).toBe('xterm');
  });
});
