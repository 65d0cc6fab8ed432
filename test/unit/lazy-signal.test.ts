// LazyAbort: the signal is made on first ask, and an abort before or after reaches it with its reason.
import { describe, expect, it } from 'vitest';
import { LazyAbort, signalOf } from '../../src/federation/lazy-signal.js';

describe('LazyAbort', () => {
  it('makes one signal, on first ask', () => {
    const cancel = new LazyAbort();
    const signal = cancel.signal();
    expect(signal.aborted).toBe(false);
    expect(cancel.signal()).toBe(signal);
    expect(signalOf(cancel.signal)).toBe(signal);
  });

  it('an abort after the signal was made reaches it, once, with its reason', () => {
    const cancel = new LazyAbort();
    const signal = cancel.signal();
    let fired = 0;
    signal.addEventListener('abort', () => fired++);
    cancel.abort('client cancelled');
    cancel.abort('again');
    expect(cancel.aborted).toBe(true);
    expect(signal.aborted).toBe(true);
    expect(signal.reason).toBe('client cancelled');
    expect(fired).toBe(1);
  });

  it('a signal asked for after the abort is already aborted, with the first reason', () => {
    const cancel = new LazyAbort();
    cancel.abort('early');
    cancel.abort('later');
    const signal = cancel.signal();
    expect(signal.aborted).toBe(true);
    expect(signal.reason).toBe('early');
  });

  it('signalOf passes a plain signal through and leaves undefined alone', () => {
    const signal = new AbortController().signal;
    expect(signalOf(signal)).toBe(signal);
    expect(signalOf(undefined)).toBeUndefined();
  });
});
