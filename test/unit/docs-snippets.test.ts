// Every configuration snippet in README.md and docs/*.md parses and validates with the project's own config schema.
import { readdirSync, readFileSync } from 'node:fs';
import { parse as parseYaml } from 'yaml';
import { describe, expect, it } from 'vitest';
import { validateConfig } from '../../src/config/load.js';
import { ConfigSchema } from '../../src/config/schema.js';
import { compilePolicy } from '../../src/access/policy.js';

/**
 * A snippet is a ```json / ```jsonc / ```yaml / ```yml fence. An HTML comment on the line before
 * the fence says what it is when it is not a gateway configuration:
 *   <!-- snippet: client -->   an MCP client's own file (Claude Desktop, VS Code, ...), not ours
 *   <!-- snippet: output -->   something the gateway prints or sends, not configuration
 *   <!-- snippet: partial -->  a deliberately incomplete configuration
 * Every other snippet must be a gateway configuration: a whole one (it has `servers` or
 * `mcpServers`), or a fragment whose top-level keys are all ours, which is validated on top of
 * one stub server. A snippet that is neither fails, so none escapes the check unmarked.
 */
const MARKERS = new Set(['client', 'output', 'partial']);

interface Snippet {
  where: string;
  lang: string;
  text: string;
  marker: string | undefined;
}

const ROOT = new URL('../../', import.meta.url);

function markdownFiles(): string[] {
  return [
    'README.md',
    ...readdirSync(new URL('docs/', ROOT))
      .filter((f) => f.endsWith('.md'))
      .map((f) => `docs/${f}`),
  ];
}

/** The json/yaml fences of one markdown text, with the marker comment before each. */
function snippetsOf(file: string, markdown: string): Snippet[] {
  const lines = markdown.split('\n');
  const out: Snippet[] = [];
  for (let i = 0; i < lines.length; i++) {
    const open = /^(`{3,}|~{3,})\s*(\S*)/.exec(lines[i]!);
    if (!open) continue;
    const fence = open[1]!;
    let end = i + 1;
    while (end < lines.length && lines[end]!.trim() !== fence) end++;
    const lang = open[2]!.toLowerCase();
    if (['json', 'jsonc', 'yaml', 'yml'].includes(lang)) {
      let before = i - 1;
      while (before >= 0 && lines[before]!.trim() === '') before--;
      const marker = before >= 0 ? /^<!--\s*snippet:\s*(\S+)\s*-->$/.exec(lines[before]!.trim())?.[1] : undefined;
      out.push({ where: `${file}:${i + 1}`, lang, text: lines.slice(i + 1, end).join('\n'), marker });
    }
    i = end;
  }
  return out;
}

/** Every `${VAR}` resolves to a value that is also a valid bearer token and secret. */
const anyEnv = new Proxy({}, { get: () => 'snippet-example-value-0123456789abcdef-0123456789abcdef' });

const OUR_KEYS = new Set(Object.keys(ConfigSchema.in.shape));
const STUB_SERVERS = { servers: { stub: { command: 'node', args: ['stub.js'] } } };

function parseSnippet(s: Snippet): unknown {
  if (s.lang === 'yaml' || s.lang === 'yml') return parseYaml(s.text);
  const text = s.lang === 'jsonc' ? s.text.replace(/^\s*\/\/.*$/gm, '') : s.text;
  return JSON.parse(text);
}

/** Validates one snippet as the gateway would load it; throws with the loader's own message. */
function validateSnippet(s: Snippet): void {
  const raw = parseSnippet(s);
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) throw new Error(`${s.where}: not an object`);
  const keys = Object.keys(raw);
  const whole = keys.includes('servers') || keys.includes('mcpServers');
  if (!whole && !keys.every((k) => OUR_KEYS.has(k))) {
    throw new Error(`${s.where}: neither a configuration nor a fragment of one (keys: ${keys.join(', ')}); mark it <!-- snippet: client|output|partial -->`);
  }
  const { config } = validateConfig(whole ? raw : { ...STUB_SERVERS, ...raw }, { env: anyEnv, file: s.where });
  compilePolicy(config.policy, new Set(Object.keys(config.servers)));
}

const all = markdownFiles().flatMap((f) => snippetsOf(f, readFileSync(new URL(f, ROOT), 'utf8')));
const checked = all.filter((s) => s.marker === undefined);

describe('configuration snippets in the docs', () => {
  it('finds the snippets, and every marker is a known one', () => {
    expect(checked.length).toBeGreaterThanOrEqual(6);
    expect(all.filter((s) => s.marker !== undefined && !MARKERS.has(s.marker)).map((s) => `${s.where}: ${s.marker}`)).toEqual([]);
  });

  it.each(checked.map((s) => [s.where, s] as const))('%s validates', (_where, s) => {
    expect(() => validateSnippet(s)).not.toThrow();
  });

  it('client and output snippets still parse', () => {
    for (const s of all.filter((x) => x.marker === 'client' || x.marker === 'output')) expect(() => parseSnippet(s), s.where).not.toThrow();
  });
});

describe('the snippet check itself', () => {
  const one = (md: string) => snippetsOf('t.md', md)[0]!;

  it('accepts a whole configuration, a fragment, and YAML', () => {
    expect(() => validateSnippet(one('```json\n{ "servers": { "a": { "command": "x" } } }\n```'))).not.toThrow();
    expect(() => validateSnippet(one('```json\n{ "limits": [{ "readsPerMinute": 60 }] }\n```'))).not.toThrow();
    expect(() => validateSnippet(one('```yaml\nservers:\n  a:\n    url: https://h.example/mcp\n```'))).not.toThrow();
  });

  it('fails on a misspelt field, a bad value, broken JSON, and an unmarked foreign shape', () => {
    expect(() => validateSnippet(one('```json\n{ "servers": { "a": { "comand": "x" } } }\n```'))).toThrow(/servers\.a/);
    expect(() => validateSnippet(one('```json\n{ "cahce": {}, "servers": { "a": { "command": "x" } } }\n```'))).toThrow(/did you mean "cache"/);
    expect(() => validateSnippet(one('```json\n{ "limits": [{ "readsPerMinute": -1 }] }\n```'))).toThrow(/readsPerMinute/);
    expect(() => validateSnippet(one('```json\n{ "servers": { "a": { "command": "x" } }\n```'))).toThrow(SyntaxError);
    expect(() => validateSnippet(one('```json\n{ "_meta": {} }\n```'))).toThrow(/mark it/);
  });

  it('fails on a policy rule naming a server that is not configured', () => {
    const md = '```json\n{ "servers": { "a": { "command": "x" } }, "policy": { "rules": [{ "id": "r", "effect": "allow", "servers": ["b"] }] } }\n```';
    expect(() => validateSnippet(one(md))).toThrow(/policy\.rules\[0\]\.servers\[0\]: "b" is not a configured server id/);
  });

  it('reads the marker on the line before the fence, blank lines allowed', () => {
    expect(one('<!-- snippet: client -->\n\n```json\n{}\n```').marker).toBe('client');
    expect(one('text\n```json\n{}\n```').marker).toBeUndefined();
  });
});
