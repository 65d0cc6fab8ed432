// The operator examples checked by real tools: promtool (alert rules, scrape config), systemd-analyze (the unit), the compose file and Dockerfile read as data, every dashboard and alert metric exported by the built CLI.
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { execa } from 'execa';
import { parse as parseYaml } from 'yaml';
import { upstreams } from '../helpers/built-cli.js';
import { within } from '../helpers/gate.js';
import { HttpGatewayProcess } from '../helpers/http-gateway.js';
import { TempDir } from '../helpers/temp-dir.js';

const ROOT = path.resolve(import.meta.dirname, '../..');
const EXAMPLES = path.join(ROOT, 'examples');
const read = (file: string) => readFileSync(path.join(EXAMPLES, file), 'utf8');
const onPath = async (tool: string) => (await execa('sh', ['-c', `command -v ${tool}`], { reject: false })).exitCode === 0;

/** Metric names a PromQL expression uses (identifiers followed by `{`, `[` or standing alone before an operator). */
function metricNames(expr: string): string[] {
  const bare = expr.replace(/\{[^}]*\}/g, '{}').replace(/\b(by|without|on|ignoring)\s*\([^)]*\)/g, ''); // label names out
  const names = bare.match(/\b[a-z_:][a-z0-9_:]*(?=\s*[{[])|\b(?:mcp|process|nodejs)_[a-z0-9_]+\b/g) ?? [];
  return [...new Set(names.filter((n) => !['by', 'rate', 'increase', 'sum', 'histogram_quantile', 'label_values', 'on', 'and'].includes(n)))];
}

describe('operator examples', () => {
  let exported: Set<string>;
  let g: HttpGatewayProcess;
  const dir = new TempDir();

  beforeAll(async () => {
    // The names the built CLI really exports, histograms' series included.
    g = await HttpGatewayProcess.serve(dir.writeConfig({ servers: { fx: upstreams.fixture('--resources', '1') } }));
    await within(g.started, 'the upstream to start');
    const text = await (await fetch(new URL('/metrics', g.url))).text();
    exported = new Set(text.split('\n').flatMap((l) => (l.startsWith('# TYPE ') ? [l.split(' ')[2]!] : [])));
    for (const name of [...exported]) for (const suffix of ['_bucket', '_count', '_sum']) exported.add(name + suffix);
  });
  afterAll(async () => {
    await g?.[Symbol.asyncDispose]();
    dir[Symbol.dispose]();
  });

  it('alerts.yml passes promtool check rules, and the scrape config promtool check config', async () => {
    const rules = await execa('promtool', ['check', 'rules', path.join(EXAMPLES, 'prometheus/alerts.yml')], { reject: false });
    expect(rules.exitCode, rules.stderr).toBe(0);
    expect(rules.stdout).toMatch(/SUCCESS: 6 rules found/);
    // The compose paths (/etc/prometheus/…) pointed at copies, as the container would mount them.
    const config = read('prometheus/prometheus.yml')
      .replace('/etc/prometheus/alerts.yml', path.join(EXAMPLES, 'prometheus/alerts.yml'))
      .replace('/etc/prometheus/metrics-token', dir.file('token'));
    writeFileSync(dir.file('token'), 'scrape-example-token-0123\n');
    writeFileSync(dir.file('prometheus.yml'), config);
    const checked = await execa('promtool', ['check', 'config', dir.file('prometheus.yml')], { reject: false });
    expect(checked.exitCode, checked.stdout + checked.stderr).toBe(0);
  });

  it('every alert and dashboard expression uses only metrics the gateway exports', () => {
    const alerts = parseYaml(read('prometheus/alerts.yml')) as { groups: { rules: { alert: string; expr: string }[] }[] };
    const exprs = alerts.groups.flatMap((group) => group.rules.map((r) => r.expr));
    expect(alerts.groups[0]!.rules.map((r) => r.alert)).toEqual(
      expect.arrayContaining(['McpFederateUpstreamDown', 'McpFederateErrorRatio', 'McpFederateAuditWriteFailures', 'McpFederateLatencyHigh']),
    );
    const dashboard = JSON.parse(read('grafana/mcp-federate.json')) as { panels: { title: string; targets: { expr: string }[] }[] };
    expect(dashboard.panels.length).toBeGreaterThan(10);
    exprs.push(...dashboard.panels.flatMap((p) => p.targets.map((t) => t.expr)));
    const used = new Set(exprs.flatMap(metricNames).filter((n) => n !== 'up'));
    expect(used.size).toBeGreaterThan(15);
    expect([...used].filter((n) => !exported.has(n))).toEqual([]);
  });

  it.skipIf(!existsSync('/usr/bin/systemd-analyze'))('the systemd unit passes systemd-analyze verify', async () => {
    const verified = await execa('systemd-analyze', ['verify', path.join(EXAMPLES, 'systemd/mcp-federate.service')], { reject: false });
    expect(verified.stderr).toBe('');
    expect(verified.exitCode).toBe(0);
    const unit = read('systemd/mcp-federate.service');
    for (const hardening of ['NoNewPrivileges=yes', 'ProtectSystem=strict', 'DynamicUser=yes', 'CapabilityBoundingSet=']) expect(unit).toContain(hardening);
  });

  it('the Dockerfile runs as a non-root user and the compose file runs it on a read-only root file system (no Docker engine here: read as data)', async () => {
    const dockerfile = read('Dockerfile');
    const lastStage = dockerfile.slice(dockerfile.lastIndexOf('\nFROM '));
    expect(lastStage).toMatch(/^USER node$/m);
    for (const [, from] of dockerfile.matchAll(/^COPY (?!--from)(\S+)/gm)) expect(existsSync(path.join(ROOT, from!)), from).toBe(true);
    const compose = parseYaml(read('docker-compose.yml')) as { services: Record<string, { read_only?: boolean; user?: string; volumes?: string[] }> };
    expect(Object.keys(compose.services)).toEqual(['gateway', 'prometheus', 'grafana']);
    expect(compose.services.gateway!.read_only).toBe(true);
    expect(compose.services.gateway!.user).toBe('node');
    for (const service of Object.values(compose.services)) {
      for (const volume of service.volumes ?? []) {
        const source = volume.split(':')[0]!;
        if (source.startsWith('./') && source !== './metrics-token') expect(existsSync(path.join(EXAMPLES, source)), source).toBe(true);
      }
    }
    expect(await onPath('promtool')).toBe(true);
  });
});
