// The hot-path series (requests, durations, decisions, cache reads, upstream durations): a scripted run's counts as scraped, bucket by bucket, and promtool's parse of them.
import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { createPrometheusMetrics } from '../../src/observe/prometheus.js';
import type { RequestRecord } from '../../src/observe/metrics.js';
import { parseExposition, sample } from '../helpers/exposition.js';

const read = (over: Partial<RequestRecord>): RequestRecord => ({
  method: 'resources/read',
  server: 'docs',
  outcome: 'ok',
  effect: 'allow',
  rule: 'default',
  cache: 'miss',
  durationMs: 0.7,
  principal: 'alice',
  ...over,
});

describe('Prometheus hot-path series', () => {
  it('count what a scripted run did, per label set, with cumulative histogram buckets', async () => {
    const metrics = createPrometheusMetrics({ processMetrics: false });
    // 5 reads of docs: 3 misses (0.7 ms, 3 ms, 40 ms) and 2 hits; one denied; one rate limited (no server).
    metrics.request(read({ durationMs: 0.7 }));
    metrics.request(read({ durationMs: 3 }));
    metrics.request(read({ durationMs: 40 }));
    metrics.request(read({ cache: 'hit', durationMs: 0.2 }));
    metrics.request(read({ cache: 'hit', durationMs: 0.2 }));
    metrics.request(read({ outcome: 'denied', effect: 'deny', rule: 'no-secret', cache: undefined }));
    metrics.request(read({ server: undefined, outcome: 'rate_limited', effect: 'deny', rule: 'rate-limit', cache: undefined }));
    // Another method and server, to show series do not mix.
    metrics.request(read({ method: 'tools/call', server: 'git', cache: undefined, durationMs: 12 }));
    metrics.request(read({ server: 'git', outcome: 'error', cache: 'coalesced', durationMs: 1 }));
    // Upstream: the three misses, one timeout.
    for (const ms of [0.5, 2, 35]) metrics.upstreamRequest('docs', 'resources/read', 'ok', ms);
    metrics.upstreamRequest('docs', 'resources/read', 'timeout', 30_000);

    const text = await metrics.exposition();
    const m = parseExposition(text);
    const docsRead = { mcp_method_name: 'resources/read', server: 'docs' };
    expect(sample(m, 'mcp_federate_requests_total', { ...docsRead, outcome: 'ok' })).toBe(5);
    expect(sample(m, 'mcp_federate_requests_total', { ...docsRead, outcome: 'denied' })).toBe(1);
    expect(sample(m, 'mcp_federate_requests_total', { mcp_method_name: 'resources/read', server: '', outcome: 'rate_limited' })).toBe(1);
    expect(sample(m, 'mcp_federate_requests_total', { mcp_method_name: 'resources/read', server: 'git', outcome: 'error' })).toBe(1);
    expect(sample(m, 'mcp_federate_requests_total', { mcp_method_name: 'tools/call', server: 'git', outcome: 'ok' })).toBe(1);
    expect(m.filter((s) => s.name === 'mcp_federate_requests_total').reduce((n, s) => n + s.value, 0)).toBe(9);

    const ok = { ...docsRead, outcome: 'ok' };
    const bucket = (le: string) => sample(m, 'mcp_server_operation_duration_seconds_bucket', { ...ok, le });
    expect(bucket('0.0005')).toBe(2); // the two hits
    expect(bucket('0.001')).toBe(3); // + 0.7 ms
    expect(bucket('0.0025')).toBe(3);
    expect(bucket('0.005')).toBe(4); // + 3 ms
    expect(bucket('0.025')).toBe(4);
    expect(bucket('0.05')).toBe(5); // + 40 ms
    expect(bucket('+Inf')).toBe(5);
    expect(sample(m, 'mcp_server_operation_duration_seconds_count', ok)).toBe(5);
    expect(sample(m, 'mcp_server_operation_duration_seconds_sum', ok)).toBeCloseTo(0.0441, 6);

    expect(sample(m, 'mcp_federate_policy_decisions_total', { mcp_method_name: 'resources/read', effect: 'allow' })).toBe(6);
    expect(sample(m, 'mcp_federate_policy_decisions_total', { mcp_method_name: 'resources/read', effect: 'deny' })).toBe(2);
    expect(sample(m, 'mcp_federate_policy_decisions_total', { mcp_method_name: 'tools/call', effect: 'allow' })).toBe(1);
    expect(sample(m, 'mcp_federate_cache_reads_total', { server: 'docs', result: 'miss' })).toBe(3);
    expect(sample(m, 'mcp_federate_cache_reads_total', { server: 'docs', result: 'hit' })).toBe(2);
    expect(sample(m, 'mcp_federate_cache_reads_total', { server: 'git', result: 'coalesced' })).toBe(1);
    expect(sample(m, 'mcp_federate_rate_limited_total', { limit: 'reads' })).toBe(1);

    const up = { mcp_method_name: 'resources/read', server: 'docs' };
    expect(sample(m, 'mcp_client_operation_duration_seconds_count', { ...up, outcome: 'ok' })).toBe(3);
    expect(sample(m, 'mcp_client_operation_duration_seconds_bucket', { ...up, outcome: 'ok', le: '0.001' })).toBe(1);
    expect(sample(m, 'mcp_client_operation_duration_seconds_bucket', { ...up, outcome: 'ok', le: '0.0025' })).toBe(2);
    expect(sample(m, 'mcp_client_operation_duration_seconds_bucket', { ...up, outcome: 'ok', le: '0.05' })).toBe(3);
    expect(sample(m, 'mcp_client_operation_duration_seconds_bucket', { ...up, outcome: 'timeout', le: '10' })).toBe(0);
    expect(sample(m, 'mcp_client_operation_duration_seconds_bucket', { ...up, outcome: 'timeout', le: '30' })).toBe(1);

    // A second scrape reads the same counts (nothing is reset by reading).
    expect(await metrics.exposition()).toBe(text);
    const promtool = spawnSync('promtool', ['check', 'metrics'], { input: text, encoding: 'utf8' });
    if (promtool.error) throw promtool.error; // promtool is installed by .ci/run
    expect(promtool.stdout + promtool.stderr).toBe('');
    expect(promtool.status).toBe(0);
  });
});
