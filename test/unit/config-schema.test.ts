// The shipped JSON Schema and the generated configuration reference match the zod schema and its TSDoc.
import { readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import * as schemaModule from '../../src/config/schema.js';
// @ts-expect-error: a plain .mjs script without types
import { generate, REFERENCE_FILE, SCHEMA_FILE } from '../../scripts/config-schema.mjs';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const generated = generate(schemaModule) as Record<string, string>;
const read = (file: string) => readFileSync(path.join(ROOT, file), 'utf8');

describe('generated config schema and reference', () => {
  it.each([SCHEMA_FILE, REFERENCE_FILE])('%s is up to date (regenerate: npm run build && node scripts/config-schema.mjs)', (file: string) => {
    expect(read(file)).toBe(generated[file]);
  });

  it('describes every property, so a field added without TSDoc fails here', () => {
    const missing: string[] = [];
    const walk = (node: unknown, at: string): void => {
      if (Array.isArray(node)) return node.forEach((n) => walk(n, at));
      if (node === null || typeof node !== 'object') return;
      const o = node as Record<string, unknown>;
      if (o.properties && typeof o.properties === 'object') {
        for (const [key, prop] of Object.entries(o.properties as Record<string, { description?: string }>)) if (!prop.description) missing.push(`${at}.${key}`);
      }
      for (const [key, value] of Object.entries(o)) walk(value, `${at}/${key}`);
    };
    walk(JSON.parse(generated[SCHEMA_FILE]!), '');
    expect(missing).toEqual([]);
  });

  it('forbids unknown keys in every block, as the loader does', () => {
    const schema = JSON.parse(generated[SCHEMA_FILE]!) as { properties: Record<string, { additionalProperties?: unknown; default?: unknown }> };
    for (const block of ['list', 'cache', 'subscriptions', 'wire', 'reconnect', 'listChanged', 'http', 'stdio']) {
      expect(schema.properties[block]!.additionalProperties, block).toBe(false);
    }
  });

  it("every example's $schema points at the shipped schema", () => {
    // Examples in a folder of their own (examples/cluster/) point one level further up.
    for (const [dir, up] of [
      [path.join(ROOT, 'examples'), '../'],
      [path.join(ROOT, 'examples', 'cluster'), '../../'],
    ] as const) {
      for (const name of readdirSync(dir, { withFileTypes: true })
        .filter((e) => e.isFile() && /\.(json|ya?ml)$/.test(e.name) && e.name !== 'docker-compose.yml')
        .map((e) => e.name)) {
        const text = readFileSync(path.join(dir, name), 'utf8');
        if (name.endsWith('.json') && name !== 'claude-desktop.json')
          expect((JSON.parse(text) as { $schema?: string }).$schema, name).toBe(`${up}${SCHEMA_FILE}`);
        if (/\.ya?ml$/.test(name)) expect(text, name).toContain(`# yaml-language-server: $schema=${up}${SCHEMA_FILE}`);
      }
    }
  });
});
