// Era specifics have one home: no era literal ('2025-11-25', '2026-07-28', 'legacy', 'modern') and no SDK era type in src/ outside src/eras/ and src/protocol.ts.
import { readdirSync, readFileSync } from 'node:fs';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const SRC = new URL('../../src/', import.meta.url);
const HOME = (file: string) => file.startsWith('eras/') || file === 'protocol.ts';
const REVISION = /2025-11-25|2026-07-28/;
const ERA_NAMES = new Set(['legacy', 'modern']);

/** Era literals in code (strings, template parts, literal types) and imports of the SDK's era type; comments are prose, not code. */
function eraLiterals(text: string): string[] {
  const file = ts.createSourceFile('f.ts', text, ts.ScriptTarget.Latest, true);
  const found: string[] = [];
  const visit = (node: ts.Node): void => {
    if (
      ts.isStringLiteral(node) ||
      ts.isNoSubstitutionTemplateLiteral(node) ||
      ts.isTemplateHead(node) ||
      ts.isTemplateMiddle(node) ||
      ts.isTemplateTail(node)
    ) {
      if (REVISION.test(node.text) || ERA_NAMES.has(node.text)) found.push(node.getText(file));
    }
    if (ts.isImportSpecifier(node) && (node.propertyName ?? node.name).text === 'ProtocolEra') found.push('import ProtocolEra');
    ts.forEachChild(node, visit);
  };
  visit(file);
  return found;
}

describe('one home per era', () => {
  it('no era literal appears in src/ outside src/eras/ and src/protocol.ts', () => {
    const files = (readdirSync(SRC, { recursive: true }) as string[]).map((f) => f.split('\\').join('/')).filter((f) => f.endsWith('.ts') && !HOME(f));
    expect(files.length).toBeGreaterThan(50);
    const offenders = files.flatMap((f) => eraLiterals(readFileSync(new URL(f, SRC), 'utf8')).map((hit) => `${f}: ${hit}`));
    expect(offenders).toEqual([]);
  });

  it('the check finds era literals in code, not in comments or property names', () => {
    const code = [
      "// a 2025-11-25 client; 'legacy'",
      "const a = '2026-07-28'; const b = `x ${a} (2025-11-25)`;",
      "f('legacy'); const o = { legacy: 'reject' }; type E = 'modern' | 'auto';",
      "import { type ProtocolEra } from 'sdk';",
    ].join('\n');
    expect(eraLiterals(code)).toEqual(["'2026-07-28'", '} (2025-11-25)`', "'legacy'", "'modern'", 'import ProtocolEra']);
  });

  it('the home itself holds them (the check looks where they are)', () => {
    expect(eraLiterals(readFileSync(new URL('protocol.ts', SRC), 'utf8'))).toEqual(["'2025-11-25'", "'2026-07-28'"]);
  });
});
