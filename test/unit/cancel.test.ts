// LazyAbort: the signal is made on first ask, listeners need none, and an abort before or after reaches both with its reason.
import { describe, expect, it } from 'vitest';
import { LazyAbort, onAbort, signalOf } from '../../src/cancel.js';

describe('LazyAbort', () => {
  it('makes one signal, on first ask', () => {
    const cancel = new LazyAbort();
    const signal = cancel.signal();
    expect(signal.aborted).toBe(false);
    expect(cancel.signal()).toBe(signal);
    expect(signalOf(cancel)).toBe(signal);
  });

  it('an abort after the signal was made reaches it and the listeners, once, with its reason', () => {
    const cancel = new LazyAbort();
    const signal = cancel.signal();
    let fired = 0;
    let heard = 0;
    signal.addEventListener('abort', () => fired++);
    cancel.onAbort(() => heard++);
    cancel.abort('client cancelled');
    cancel.abort('again');
    expect(cancel.aborted).toBe(true);
    expect(cancel.reason).toBe('client cancelled');
    expect(signal.aborted).toBe(true);
    expect(signal.reason).toBe('client cancelled');
    expect([fired, heard]).toEqual([1, 1]);
    expect(() => cancel.throwIfAborted()).toThrow('client cancelled');
  });

  it('a signal asked for after the abort is already aborted, with the first reason', () => {
    const cancel = new LazyAbort();
    cancel.abort('early');
    cancel.abort('later');
    const signal = cancel.signal();
    expect(signal.aborted).toBe(true);
    expect(signal.reason).toBe('early');
  });

  it('a removed listener is not called; one added after the abort is called at once', () => {
    const cancel = new LazyAbort();
    const calls: string[] = [];
    const off = cancel.onAbort(() => calls.push('removed'));
    cancel.onAbort(() => calls.push('kept'));
    off();
    off();
    cancel.abort();
    cancel.onAbort(() => calls.push('late'));
    expect(calls).toEqual(['kept', 'late']);
  });
});

describe('onAbort and signalOf on a plain AbortSignal', () => {
  it('listens once, can be removed, and fires at once on an aborted signal', () => {
    const controller = new AbortController();
    const calls: string[] = [];
    const off = onAbort(controller.signal, () => calls.push('removed'));
    onAbort(controller.signal, () => calls.push('kept'));
    off();
    controller.abort();
    controller.abort();
    onAbort(controller.signal, () => calls.push('late'));
    expect(calls).toEqual(['kept', 'late']);
    expect(signalOf(controller.signal)).toBe(controller.signal);
    expect(signalOf(undefined)).toBeUndefined();
  });
});
