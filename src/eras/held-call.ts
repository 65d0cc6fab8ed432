// One call to a 2025-11-25 upstream that asks for user input while it runs: the requests it is waiting on, and the call held open between a 2026 client's rounds.
import { randomUUID } from 'node:crypto';
import type { ServerRequest } from '../upstream/upstream.js';

/** Why a request still waiting when its call ends fails (one instance: most calls end with nothing waiting). */
const CALL_ENDED = new Error('the call ended');

/** What a held call did next: the upstream answered or failed, or it is waiting on input. */
export type HeldCallEvent = { kind: 'done'; result: unknown } | { kind: 'failed'; error: unknown } | { kind: 'input' };

/** One request of the upstream, waiting for the client's answer. */
interface Waiting {
  request: ServerRequest;
  resolve: (result: Record<string, unknown>) => void;
  reject: (err: unknown) => void;
}

/**
 * The upstream side of one bridged call to a 2025-11-25 upstream. Its requests for input queue here
 * (`enqueue`) until the gateway asks the client for them (`take`) and the client's retry answers them
 * (`answer`). `cancel` aborts the upstream call and fails whatever it is still waiting on.
 */
export class HeldCall {
  private ownId: string | undefined;
  /** Rounds of input asked so far: the state of an earlier round is refused. */
  round = 0;
  /** Whether the call counts against its principal's held-call bound. */
  held = false;
  /** Whether the upstream has asked for input (from then on the call is its caller's alone). */
  asking = false;
  /** Disarms the held call's expiry (set while it waits for the client's retry). */
  disarm: (() => void) | undefined;
  private readonly abort = new CallAbort();
  private readonly pending = new Map<string, Waiting>();
  private readonly asked = new Map<string, Waiting>();
  private keys = 0;
  private outcome!: Promise<HeldCallEvent>;
  private wake: (() => void) | undefined;
  private ended = false;

  constructor(
    /** Who the call is for: its state only opens for them. */
    readonly principal: string,
    /** Told once when the call ends, however it ends (answered, failed, cancelled, expired). */
    private readonly onEnd: () => void = () => undefined,
  ) {}

  /** Opaque id, sealed inside the state the client echoes (made when first asked: most calls never are). */
  get id(): string {
    return (this.ownId ??= randomUUID());
  }

  /** The signal the upstream call runs under. */
  get signal(): AbortSignal {
    return this.abort as unknown as AbortSignal;
  }

  /** Whether the upstream call has ended (answered, failed or cancelled). */
  get settled(): boolean {
    return this.ended;
  }

  /** Starts the upstream call. */
  start(run: (signal: AbortSignal) => Promise<unknown>): void {
    this.outcome = run(this.signal).then(
      (result): HeldCallEvent => ({ kind: 'done', result }),
      // Cancelled by the gateway: the reason it gave (expired, timed out, closing) is the failure.
      (error: unknown): HeldCallEvent => ({ kind: 'failed', error: this.abort.aborted ? this.abort.reason : error }),
    );
    void this.outcome.then(() => this.end(CALL_ENDED));
  }

  /** Queues one request of the upstream for the client; resolves with the client's answer. */
  enqueue(request: ServerRequest, signal: AbortSignal): Promise<Record<string, unknown>> {
    if (this.ended) return Promise.reject(CALL_ENDED);
    const key = `input-${++this.keys}`;
    return new Promise((resolve, reject) => {
      this.pending.set(key, { request, resolve, reject });
      signal.addEventListener(
        'abort',
        () => {
          this.pending.delete(key);
          this.asked.delete(key);
          reject(signal.reason);
        },
        { once: true },
      );
      this.wake?.();
    });
  }

  /** The upstream's answer, or as soon as it waits on input (whichever comes first). */
  async next(): Promise<HeldCallEvent> {
    for (;;) {
      if (this.pending.size > 0) return { kind: 'input' };
      if (this.ended) return this.outcome;
      const woke = new Promise<HeldCallEvent>((resolve) => (this.wake = () => resolve({ kind: 'input' })));
      const event = await Promise.race([this.outcome, woke]);
      this.wake = undefined;
      if (event.kind !== 'input') return event;
    }
  }

  /** The requests waiting to be asked, now asked (keyed as the client will answer them). */
  take(): Record<string, ServerRequest> {
    const taken: Record<string, ServerRequest> = {};
    for (const [key, waiting] of this.pending) {
      taken[key] = waiting.request;
      this.asked.set(key, waiting);
    }
    this.pending.clear();
    return taken;
  }

  /** The method of an asked request (undefined: never asked, or already answered). */
  methodOf(key: string): string | undefined {
    return this.asked.get(key)?.request.method;
  }

  /** Hands the client's answer for `key` to the upstream; an unanswered key fails (the upstream sees an error). */
  answer(key: string, response: Record<string, unknown> | undefined): void {
    const waiting = this.asked.get(key);
    if (!waiting) return;
    this.asked.delete(key);
    if (response === undefined) waiting.reject(new Error('the client did not answer this request'));
    else waiting.resolve(response);
  }

  /** Aborts the upstream call (it is told `notifications/cancelled`) and fails every request still waiting. Idempotent. */
  cancel(reason: unknown): void {
    this.abort.abort(reason);
    this.end(reason);
  }

  private end(reason: unknown): void {
    if (this.ended) return;
    this.ended = true;
    this.disarm?.();
    this.disarm = undefined;
    for (const w of [...this.pending.values(), ...this.asked.values()]) w.reject(reason);
    this.pending.clear();
    this.asked.clear();
    this.wake?.();
    this.onEnd();
  }
}

/**
 * The part of `AbortSignal` the SDK client's `request` and `Upstream.request` use (`aborted`, `reason`,
 * `throwIfAborted`, and `abort` listeners), for one call. Every relayed call makes one, and a Node
 * `AbortController` costs about 20 us of CPU to create (an EventTarget each): a fifth of a relayed
 * read. Never handed to code that combines signals (`AbortSignal.any`) or checks `instanceof`.
 */
class CallAbort {
  aborted = false;
  reason: unknown;
  private listeners: Set<() => void> | undefined;

  addEventListener(_type: 'abort', listener: () => void): void {
    (this.listeners ??= new Set()).add(listener);
  }

  removeEventListener(_type: 'abort', listener: () => void): void {
    this.listeners?.delete(listener);
  }

  throwIfAborted(): void {
    if (this.aborted) throw this.reason;
  }

  abort(reason: unknown): void {
    if (this.aborted) return;
    this.aborted = true;
    this.reason = reason;
    const listeners = this.listeners;
    this.listeners = undefined;
    for (const l of listeners ?? []) l(); // each once, as `{ once: true }` asks
  }
}
