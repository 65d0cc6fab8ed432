// Functions stay short enough to read: none in src/ is longer than about 150 lines (issue 16).
import { readdirSync, readFileSync } from 'node:fs';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const SRC = new URL('../../src/', import.meta.url);
const MAX_LINES = 150;

/** Every function-like node (declarations, methods, accessors, constructors, arrows, function expressions) longer than `max` lines, as `name:lines`. */
function longFunctions(text: string, max: number): string[] {
  const file = ts.createSourceFile('f.ts', text, ts.ScriptTarget.Latest, true);
  const found: string[] = [];
  const visit = (node: ts.Node): void => {
    if (ts.isFunctionLike(node) && 'body' in node && node.body) {
      const start = file.getLineAndCharacterOfPosition(node.getStart(file)).line;
      const end = file.getLineAndCharacterOfPosition(node.getEnd()).line;
      const lines = end - start + 1;
      if (lines > max) found.push(`${nameOf(node, file)}:${lines}`);
    }
    ts.forEachChild(node, visit);
  };
  visit(file);
  return found;
}

/** A function's name, or where it is assigned, or `<anonymous>` with its line. */
function nameOf(node: ts.Node, file: ts.SourceFile): string {
  const named = node as { name?: ts.Node };
  if (named.name) return named.name.getText(file);
  const parent = node.parent;
  if (parent && (ts.isVariableDeclaration(parent) || ts.isPropertyAssignment(parent) || ts.isPropertyDeclaration(parent))) return parent.name.getText(file);
  return `<anonymous@${file.getLineAndCharacterOfPosition(node.getStart(file)).line + 1}>`;
}

describe('function length', () => {
  it(`no function in src/ is longer than ${MAX_LINES} lines`, () => {
    const files = (readdirSync(SRC, { recursive: true }) as string[]).filter((f) => f.endsWith('.ts'));
    expect(files.length).toBeGreaterThan(50);
    const offenders = files.flatMap((f) => longFunctions(readFileSync(new URL(f, SRC), 'utf8'), MAX_LINES).map((hit) => `${f}: ${hit}`));
    expect(offenders).toEqual([]);
  });

  it('the check measures every kind of function, by its lines', () => {
    const body = (n: number) => Array.from({ length: n - 2 }, () => '  x();').join('\n');
    const code = [
      `function a() {\n${body(5)}\n}`,
      `const b = () => {\n${body(4)}\n};`,
      `class C {\n  m() {\n${body(6)}\n  }\n  get g() {\n${body(3)}\n  }\n}`,
      `f(function () {\n${body(5)}\n});`,
    ].join('\n');
    expect(longFunctions(code, 4)).toEqual(['a:5', 'm:6', '<anonymous@21>:5']);
  });
});
