// Generates the config's JSON Schema and its reference page from the zod schema and the TSDoc on its fields.
// `node scripts/config-schema.mjs` (after `npm run build`) writes both; a test fails when they drift.
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import ts from 'typescript';
import { z } from 'zod';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
/** Where the generated files live, relative to the repository root. */
export const SCHEMA_FILE = 'schema/mcp-federate.schema.json';
export const REFERENCE_FILE = 'docs/configuration-reference.md';
/**
 * The schema's source files, in the order their blocks appear in the config (the assembly last):
 * their TSDoc is read as one text, so a spread (`...commonServerFields`) resolves across them.
 */
export const SCHEMA_SOURCES = ['fields', 'servers', 'core', 'http', 'auth', 'audit', 'policy', 'limits', 'tools', 'bridge', 'observe', 'redis']
  .map((block) => `src/config/schema/${block}.ts`)
  .concat('src/config/schema.ts');

/**
 * Every object literal in `source` (the schema's source files) with its keys (spreads of other literals
 * expanded) and the TSDoc of each key.
 * @returns {{ keys: string[], docs: Map<string, string> }[]}
 */
export function fieldDocs(source) {
  const file = ts.createSourceFile('schema.ts', source, ts.ScriptTarget.Latest, true);
  const named = new Map(); // const name -> object literal
  const literals = [];
  const visit = (node) => {
    if (ts.isVariableDeclaration(node) && node.initializer && ts.isObjectLiteralExpression(node.initializer) && ts.isIdentifier(node.name)) {
      named.set(node.name.text, node.initializer);
    }
    if (ts.isObjectLiteralExpression(node)) literals.push(node);
    ts.forEachChild(node, visit);
  };
  visit(file);
  const collect = (literal, docs) => {
    for (const p of literal.properties) {
      if (ts.isSpreadAssignment(p) && ts.isIdentifier(p.expression) && named.has(p.expression.text)) {
        collect(named.get(p.expression.text), docs);
      } else if ((ts.isPropertyAssignment(p) || ts.isShorthandPropertyAssignment(p)) && p.name && (ts.isIdentifier(p.name) || ts.isStringLiteral(p.name))) {
        const text = ts
          .getJSDocCommentsAndTags(p)
          .filter(ts.isJSDoc)
          .map((d) => ts.getTextOfJSDocComment(d.comment) ?? '')
          .join(' ');
        docs.set(p.name.text, tidy(text));
      }
    }
    return docs;
  };
  return literals.map((literal) => {
    const docs = collect(literal, new Map());
    return { keys: [...docs.keys()], docs };
  });
}

/** One line of prose: `{@link X}` becomes `X`, white space folded. */
function tidy(text) {
  return text
    .replace(/\{@link\s+([^}|\s]+)(?:\s*\|\s*([^}]+))?\}/g, (_m, target, label) => `\`${(label ?? target).trim()}\``)
    .replace(/\s+/g, ' ')
    .trim();
}

/**
 * The JSON Schema of a config file: the zod schema's input side, with each upstream's two shapes
 * spelled out and every property described by its TSDoc.
 */
export function buildJsonSchema({ ConfigSchema, StdioServerSchema, RemoteServerSchema, RateLimitSchema, CompletionLimitSchema, CallLimitSchema }, source) {
  const opts = { io: 'input', unrepresentable: 'any', target: 'draft-2020-12' };
  const schema = z.toJSONSchema(ConfigSchema, opts);
  const server = (s) => {
    const { $schema: _drop, ...rest } = z.toJSONSchema(s, opts);
    return rest;
  };
  const serverSchema = { anyOf: [server(StdioServerSchema), server(RemoteServerSchema)] };
  for (const key of ['servers', 'mcpServers']) schema.properties[key] = { ...schema.properties[key], additionalProperties: serverSchema };
  // Blocks that a preprocess lets be `false` (said explicitly off, for reloads): spell that out.
  const off = { const: false, description: 'Explicitly off (a reload may then drop the block in force).' };
  for (const key of ['auth', 'audit']) schema.properties[key] = { anyOf: [schema.properties[key], off] }; // described below
  const reads = { type: 'array', items: server(RateLimitSchema) };
  schema.properties.limits = {
    anyOf: [
      {
        type: 'object',
        properties: {
          reads,
          completions: { type: 'array', items: server(CompletionLimitSchema) },
          calls: { type: 'array', items: server(CallLimitSchema) },
        },
        additionalProperties: false,
      },
      reads,
      off,
    ],
  };
  // Client files' own keys, set aside by the loader (src/config/keys.ts): allowed, so editors do not flag them.
  schema.properties.$schema = { type: 'string', description: 'The JSON Schema this file follows (for editors); ignored.' };
  const literals = fieldDocs(source);
  const describe = (node) => {
    if (Array.isArray(node)) return node.forEach(describe);
    if (node === null || typeof node !== 'object') return;
    if (node.properties && typeof node.properties === 'object') {
      const keys = Object.keys(node.properties).filter((k) => k !== '$schema');
      const match = literals.find((l) => keys.length > 0 && keys.every((k) => l.docs.has(k)) && l.keys.length === keys.length);
      for (const key of keys) {
        const doc = match?.docs.get(key);
        if (doc) node.properties[key] = { description: doc, ...node.properties[key] };
      }
    }
    for (const value of Object.values(node)) describe(value);
  };
  describe(schema);
  schema.title = 'mcp-federate configuration';
  return schema;
}

/** The configuration reference page: one table per block, from the JSON Schema. */
export function buildReference(schema) {
  const out = [
    '# Configuration reference',
    '',
    '<!-- Generated by `node scripts/config-schema.mjs` from src/config/schema.ts: do not edit by hand. -->',
    '',
    `Every field a config file may hold, with its type, its default and what it does. The same text is in the JSON Schema [\`${SCHEMA_FILE}\`](../${SCHEMA_FILE}), which editors use to complete and check keys (point \`$schema\` at it). An unknown key is an error naming its path.`,
    '',
  ];
  const sections = [];
  const walk = (node, at) => {
    if (!node || typeof node !== 'object') return;
    if (node.anyOf) {
      const forms = node.anyOf.filter((alt) => alt.const === undefined); // `false` has no fields
      const label = (alt) => (alt.properties?.command ? 'stdio' : alt.properties?.url ? 'remote' : alt.type === 'array' ? 'as a list' : 'as an object');
      return forms.forEach((alt) => walk(alt, at.length && forms.length > 1 ? `${at} (${label(alt)})` : at));
    }
    if (node.type === 'array' && node.items) return walk(node.items, `${at}[]`);
    if (node.additionalProperties && typeof node.additionalProperties === 'object' && !node.properties) return walk(node.additionalProperties, `${at}.<name>`);
    if (!node.properties) return;
    const rows = [];
    for (const [key, prop] of Object.entries(node.properties)) {
      if (at === '' && key === '$schema') continue;
      rows.push(`| \`${key}\` | ${typeOf(prop)} | ${defaultOf(prop)} | ${cell(prop.description ?? '')} |`);
    }
    sections.push({ at, rows });
    for (const [key, prop] of Object.entries(node.properties)) {
      if (key === 'mcpServers') continue; // the same as servers
      walk(prop, at === '' ? key : `${at}.${key}`);
    }
  };
  walk(schema, '');
  for (const { at, rows } of sections) {
    out.push(`## ${at === '' ? 'Top level' : `\`${at}\``}`, '', '| field | type | default | meaning |', '| --- | --- | --- | --- |', ...rows, '');
  }
  return out.join('\n');
}

function typeOf(prop) {
  if (prop.enum) return prop.enum.map((v) => `\`${JSON.stringify(v)}\``).join(' \\| ');
  if (prop.const !== undefined) return `\`${JSON.stringify(prop.const)}\``;
  if (prop.anyOf) return prop.anyOf.map(typeOf).join(' \\| ');
  if (prop.type === 'array') return `${prop.items ? typeOf(prop.items) : 'any'}[]`;
  if (prop.type === 'object') return prop.properties ? 'object' : 'map';
  return prop.type ?? 'any';
}

function defaultOf(prop) {
  if (!('default' in prop)) return '';
  const text = JSON.stringify(prop.default);
  const whole = typeof prop.default !== 'object' || prop.default === null || text.length <= 2; // [] and {} are shown
  return whole && text.length <= 40 ? `\`${text}\`` : 'see below';
}

function cell(text) {
  return text.replace(/\|/g, '\\|');
}

/** The schema's source files as one text. */
function schemaSource() {
  return SCHEMA_SOURCES.map((file) => readFileSync(path.join(ROOT, file), 'utf8')).join('\n');
}

/** Both files' contents, from the given schema module and the schema source. */
export function generate(schemaModule, source = schemaSource()) {
  const schema = buildJsonSchema(schemaModule, source);
  return { [SCHEMA_FILE]: `${JSON.stringify(schema, null, 2)}\n`, [REFERENCE_FILE]: buildReference(schema) };
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const schemaModule = await import(pathToFileURL(path.join(ROOT, 'dist', 'config', 'schema.js')).href);
  for (const [file, text] of Object.entries(generate(schemaModule))) {
    writeFileSync(path.join(ROOT, file), text);
    process.stdout.write(`wrote ${file}\n`);
  }
}
