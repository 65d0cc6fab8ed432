// OpenTelemetry through the real proxy core with the OTel Node SDK's in-memory exporter: the client's traceparent continues, reaches the upstream's _meta, spans link, denied URIs stay out.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { context, propagation, SpanKind, trace } from '@opentelemetry/api';
import { InMemorySpanExporter, NodeTracerProvider, SimpleSpanProcessor, type ReadableSpan } from '@opentelemetry/sdk-trace-node';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { ReadResourceRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { testEndpoint } from '../helpers/http-endpoint.js';
import { startHarness, type Harness } from '../helpers/harness.js';

const TRACE_ID = '4bf92f3577b34da6a3ce929d0e0e4736';
const CLIENT_SPAN = '00f067aa0ba902b7';
const TRACEPARENT = `00-${TRACE_ID}-${CLIENT_SPAN}-01`;

/** The parent span id of a finished span (SDK 2.x: `parentSpanContext`). */
const parentOf = (s: ReadableSpan): string | undefined =>
  (s as { parentSpanContext?: { spanId: string } }).parentSpanContext?.spanId ?? (s as { parentSpanId?: string }).parentSpanId;

describe('OpenTelemetry traces', () => {
  const exporter = new InMemorySpanExporter();
  const provider = new NodeTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
  /** `_meta` of every read the upstream received. */
  const metas: Record<string, unknown>[] = [];
  let h: Harness;

  beforeAll(async () => {
    provider.register();
    const upstream = () => {
      const server = new Server({ name: 'traced', version: '1.0.0' }, { capabilities: { resources: {} } });
      server.setRequestHandler(ReadResourceRequestSchema, (req) => {
        metas.push({ ...(req.params._meta ?? {}) });
        return { contents: [{ uri: req.params.uri, text: 'content' }] };
      });
      return server;
    };
    h = await startHarness({
      upstreams: { docs: upstream },
      config: { policy: { default: 'allow', rules: [{ id: 'no-secret', effect: 'deny', resources: ['file:///secret/**'] }] } },
    });
  });
  afterAll(async () => {
    await h?.[Symbol.asyncDispose]();
    await provider.shutdown();
    // The suite shares its process with others (test:fast): leave no global tracer behind.
    trace.disable();
    context.disable();
    propagation.disable();
  });

  it("continues the client's trace: a SERVER span per request, a CLIENT child per upstream request, traceparent in the upstream's _meta", async () => {
    const client = await h.client();
    exporter.reset();
    await client.readResource({ uri: 'docs+file:///a.md', _meta: { traceparent: TRACEPARENT, tracestate: 'vendor=1' } });
    const spans = exporter.getFinishedSpans();
    const server = spans.find((s) => s.name === 'resources/read' && s.kind === SpanKind.SERVER);
    const upstream = spans.find((s) => s.name === 'resources/read' && s.kind === SpanKind.CLIENT);
    expect(server).toBeDefined();
    expect(upstream).toBeDefined();
    expect(server!.spanContext().traceId).toBe(TRACE_ID);
    expect(parentOf(server!)).toBe(CLIENT_SPAN);
    expect(upstream!.spanContext().traceId).toBe(TRACE_ID);
    expect(parentOf(upstream!)).toBe(server!.spanContext().spanId);
    expect(server!.attributes).toMatchObject({
      'mcp.method.name': 'resources/read',
      'mcp.protocol.version': '2025-11-25',
      'mcp.resource.uri': 'docs+file:///a.md',
    });
    expect(typeof server!.attributes['mcp.session.id']).toBe('string');
    expect(server!.attributes['jsonrpc.request.id']).toBeDefined();
    // The upstream heard of the gateway's CLIENT span, in the client's trace, with its tracestate.
    const meta = metas.at(-1)!;
    expect(meta.traceparent).toBe(`00-${TRACE_ID}-${upstream!.spanContext().spanId}-01`);
    expect(meta.tracestate).toBe('vendor=1');
    await client.close();
  });

  it('a read without trace context starts a new trace, still linked gateway to upstream', async () => {
    const client = await h.client();
    exporter.reset();
    await client.readResource({ uri: 'docs+file:///b.md' });
    const spans = exporter.getFinishedSpans();
    const server = spans.find((s) => s.kind === SpanKind.SERVER)!;
    const upstream = spans.find((s) => s.kind === SpanKind.CLIENT)!;
    expect(parentOf(server)).toBeUndefined();
    expect(parentOf(upstream)).toBe(server.spanContext().spanId);
    expect(String(metas.at(-1)!.traceparent)).toContain(server.spanContext().traceId);
    await client.close();
  });

  it("honours a client's unsampled traceparent: no span is recorded, and the upstream gets the same trace, still unsampled", async () => {
    const client = await h.client();
    exporter.reset();
    await client.readResource({ uri: 'docs+file:///unsampled.md', _meta: { traceparent: `00-${TRACE_ID}-${CLIENT_SPAN}-00` } });
    expect(exporter.getFinishedSpans()).toEqual([]); // no orphan CLIENT span starting a trace of its own
    const sent = String(metas.at(-1)!.traceparent);
    expect(sent).toMatch(new RegExp(`^00-${TRACE_ID}-[0-9a-f]{16}-00$`));
    expect(sent).not.toContain(CLIENT_SPAN); // the gateway's own (unrecorded) span, a hop further
    await client.close();
  });

  it('over HTTP, a traceparent header is continued when the request carries none in _meta', async () => {
    const endpoint = testEndpoint(h.proxy);
    const url = await endpoint.listen();
    try {
      const client = new Client({ name: 'http-traced', version: '1' });
      await client.connect(new StreamableHTTPClientTransport(url, { requestInit: { headers: { traceparent: TRACEPARENT } } }));
      exporter.reset();
      await client.readResource({ uri: 'docs+file:///c.md' });
      const spans = exporter.getFinishedSpans();
      const server = spans.find((s) => s.kind === SpanKind.SERVER && s.name === 'resources/read')!;
      const upstream = spans.find((s) => s.kind === SpanKind.CLIENT)!;
      expect(server.spanContext().traceId).toBe(TRACE_ID);
      expect(parentOf(server)).toBe(CLIENT_SPAN);
      expect(parentOf(upstream)).toBe(server.spanContext().spanId);
      expect(metas.at(-1)!.traceparent).toBe(`00-${TRACE_ID}-${upstream.spanContext().spanId}-01`);
      await client.close();
    } finally {
      await endpoint.close();
    }
  });

  it('no attribute of any span carries a denied URI; the denied read fails as not found, with no upstream span', async () => {
    const client = await h.client();
    exporter.reset();
    await expect(client.readResource({ uri: 'docs+file:///secret/keys', _meta: { traceparent: TRACEPARENT } })).rejects.toThrow(/not found/i);
    const spans = exporter.getFinishedSpans();
    expect(spans.filter((s) => s.kind === SpanKind.CLIENT)).toEqual([]); // never sent upstream
    const server = spans.find((s) => s.kind === SpanKind.SERVER)!;
    expect(server.attributes['error.type']).toMatch(/^-320\d\d$/); // the JSON-RPC code the client got (OTel MCP: error.type)
    for (const s of spans) expect(JSON.stringify({ name: s.name, attributes: s.attributes, events: s.events })).not.toContain('secret');
    await client.close();
  });
});
