// Tracing with no OpenTelemetry SDK registered: requests pass straight through (same params, same promise), and a provider registered later is seen.
import { afterEach, describe, expect, it } from 'vitest';
import { context, propagation, trace } from '@opentelemetry/api';
import { InMemorySpanExporter, NodeTracerProvider, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-node';
import { activeContext, traceDownstream, traceUpstream, tracing } from '../../src/observe/tracing.js';

const request = {
  method: 'resources/read',
  params: { uri: 'docs+x://a', _meta: { traceparent: `00-${'1'.repeat(32)}-${'2'.repeat(16)}-01` } },
  id: 1,
  session: () => 's1',
  protocolVersion: '2025-11-25',
};

describe('tracing without an SDK', () => {
  afterEach(() => {
    trace.disable();
    context.disable();
    propagation.disable();
  });

  it('builds nothing: the upstream gets the very params object, and the request the very promise run() made', async () => {
    expect(tracing()).toBe(false);
    const params = { uri: 'x://a' };
    let got: unknown;
    await traceUpstream(activeContext(), 'docs', 'resources/read', params, async (p) => (got = p));
    expect(got).toBe(params); // no _meta added, no copy
    const work = Promise.resolve('answer');
    expect(traceDownstream(request, () => work)).toBe(work);
  });

  it('sees an SDK registered after the module loaded, and records again only while one is', async () => {
    const exporter = new InMemorySpanExporter();
    const provider = new NodeTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
    provider.register();
    expect(tracing()).toBe(true);
    let meta: unknown;
    await traceDownstream(request, () => traceUpstream(activeContext(), 'docs', 'resources/read', { uri: 'x://a' }, async (p) => (meta = p?._meta)));
    expect(exporter.getFinishedSpans().map((s) => s.name)).toEqual(['resources/read', 'resources/read']);
    expect((meta as { traceparent?: string }).traceparent).toMatch(new RegExp(`^00-${'1'.repeat(32)}-`)); // the client's trace continues upstream
    await provider.shutdown();
    trace.disable();
    expect(tracing()).toBe(false);
  });
});
