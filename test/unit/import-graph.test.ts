// src/ imports form no cycle (type imports included), and nothing below the root reaches the composition root or the command line.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const SRC = fileURLToPath(new URL('../../src/', import.meta.url));

/** The relative modules `text` imports or re-exports, statically or with `import()`, as written. */
function specifiers(text: string): string[] {
  const file = ts.createSourceFile('f.ts', text, ts.ScriptTarget.Latest, true);
  const found: string[] = [];
  const visit = (node: ts.Node): void => {
    if ((ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) && node.moduleSpecifier && ts.isStringLiteral(node.moduleSpecifier)) {
      found.push(node.moduleSpecifier.text);
    } else if (
      ts.isCallExpression(node) &&
      node.expression.kind === ts.SyntaxKind.ImportKeyword &&
      node.arguments[0] &&
      ts.isStringLiteral(node.arguments[0])
    ) {
      found.push(node.arguments[0].text);
    }
    ts.forEachChild(node, visit);
  };
  visit(file);
  return found.filter((s) => s.startsWith('.'));
}

/** Every `.ts` file under `src/` and the `src/` files it imports, by path relative to `src/`. */
function importGraph(): Map<string, string[]> {
  const graph = new Map<string, string[]>();
  const walk = (dir: string): void => {
    for (const name of readdirSync(dir)) {
      const path = join(dir, name);
      if (statSync(path).isDirectory()) walk(path);
      else if (path.endsWith('.ts')) {
        const deps = specifiers(readFileSync(path, 'utf8')).map((s) => relative(SRC, resolve(dirname(path), s.replace(/\.js$/, '.ts'))));
        graph.set(relative(SRC, path), deps);
      }
    }
  };
  walk(SRC);
  return graph;
}

/** The cycles of `graph`, each as the path that closes it (`a → b → a`). */
function cyclesOf(graph: ReadonlyMap<string, readonly string[]>): string[] {
  const state = new Map<string, 'open' | 'done'>();
  const cycles: string[] = [];
  const stack: string[] = [];
  const visit = (node: string): void => {
    state.set(node, 'open');
    stack.push(node);
    for (const next of graph.get(node) ?? []) {
      if (state.get(next) === 'open') cycles.push([...stack.slice(stack.indexOf(next)), next].join(' → '));
      else if (!state.has(next)) visit(next);
    }
    stack.pop();
    state.set(node, 'done');
  };
  for (const node of graph.keys()) if (!state.has(node)) visit(node);
  return cycles;
}

const ROOT_ONLY = new Set(['proxy.ts', 'cli.ts', 'index.ts']);

describe('the import graph of src/', () => {
  const graph = importGraph();

  it('every relative import names a file that exists', () => {
    const missing = [...graph].flatMap(([file, deps]) => deps.filter((d) => !graph.has(d)).map((d) => `${file} → ${d}`));
    expect(missing).toEqual([]);
    expect(graph.size).toBeGreaterThan(100);
  });

  it('has no cycle, type imports included', () => {
    expect(cyclesOf(graph)).toEqual([]);
  });

  it('nothing below the root imports the composition root, the public index or the command line', () => {
    const up = [...graph].flatMap(([file, deps]) => (file.includes('/') ? deps.filter((d) => ROOT_ONLY.has(d)).map((d) => `${file} → ${d}`) : []));
    expect(up).toEqual([]);
  });

  it('the cycle check finds a cycle, and the import reader sees every kind of import', () => {
    expect(
      cyclesOf(
        new Map([
          ['a', ['b']],
          ['b', ['c']],
          ['c', ['a']],
          ['d', ['a']],
        ]),
      ),
    ).toEqual(['a → b → c → a']);
    expect(
      cyclesOf(
        new Map([
          ['a', ['b']],
          ['b', []],
        ]),
      ),
    ).toEqual([]);
    const text =
      "import a from './a.js';\nimport type { B } from '../b.js';\nexport { c } from './c.js';\nconst d = await import('./d.js');\nimport z from 'zod';";
    expect(specifiers(text)).toEqual(['./a.js', '../b.js', './c.js', './d.js']);
  });
});
