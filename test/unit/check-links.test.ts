// scripts/check-links.mjs: dead links, dead anchors and unclosed fences fail; GitHub-style anchors resolve.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { execa } from 'execa';
import { afterEach, describe, expect, it } from 'vitest';

const SCRIPT = fileURLToPath(new URL('../../scripts/check-links.mjs', import.meta.url));
const dirs: string[] = [];

/** A repository folder holding these files (path → content); README.md and docs/ are what is checked. */
function tree(files: Record<string, string>): string {
  const root = mkdtempSync(path.join(tmpdir(), 'check-links-'));
  dirs.push(root);
  for (const [name, content] of Object.entries(files)) {
    mkdirSync(path.dirname(path.join(root, name)), { recursive: true });
    writeFileSync(path.join(root, name), content);
  }
  return root;
}

const check = (root: string) => execa(process.execPath, [SCRIPT, root], { reject: false, stdin: 'ignore' });

afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

describe('check-links', () => {
  it('passes links to files, GitHub-style heading anchors (code stripped, repeats numbered) and explicit anchors', async () => {
    const root = tree({
      'README.md': [
        '# Title',
        '',
        'See [config](docs/configuration.md#the-http-block-httphost), [again](docs/configuration.md#notes-1),',
        '[here](#title), [anchor](docs/configuration.md#custom), [example](examples/a.json) and [web](https://example.com/x#y).',
        'Inline code is not a link: `[x](nowhere.md)`.',
        '',
        '```text',
        '[not](a-link.md)',
        '```',
      ].join('\n'),
      'docs/configuration.md': '# Configuration\n\n## The `http` block: `http.host`\n\n## Notes\n\n## Notes\n\n<a name="custom"></a>\n',
      'examples/a.json': '{}',
    });
    const r = await check(root);
    expect(r.stderr).toBe('');
    expect(r.exitCode).toBe(0);
    expect(r.stdout).toMatch(/5 relative links and anchors in 2 files resolve/);
  });

  it('fails on a missing file, a missing anchor and an anchor in another file, each named with its line', async () => {
    const root = tree({
      'README.md': '# Title\n\n[gone](docs/gone.md)\n[bad anchor](#nope)\n',
      'docs/a.md': '# A\n\n[other](../README.md#title-2)\n',
    });
    const r = await check(root);
    expect(r.exitCode).toBe(1);
    expect(r.stderr).toContain('README.md:3: docs/gone.md: no such file');
    expect(r.stderr).toContain('README.md:4: #nope: no heading "#nope" in README.md');
    expect(r.stderr).toContain(`docs${path.sep}a.md:3: ../README.md#title-2: no heading "#title-2" in README.md`);
  });

  it('fails on a fence that never closes, and on a fence that opens inside another one', async () => {
    const spliced = ['# T', '', '```json', '{ "auth": {', '## Access policy', '', '```json', '{}', '```', ''].join('\n');
    const unclosed = ['# U', '', '```sh', 'npm test', ''].join('\n');
    const r = await check(tree({ 'README.md': spliced, 'docs/u.md': unclosed }));
    expect(r.exitCode).toBe(1);
    expect(r.stderr).toContain('README.md:7: a fence with a language opens inside the fence opened at line 3');
    expect(r.stderr).toContain(`docs${path.sep}u.md:3: this fence is never closed`);
  });

  it('fails on a link that leaves the repository', async () => {
    const r = await check(tree({ 'README.md': '# T\n\n[up](../outside.md)\n' }));
    expect(r.exitCode).toBe(1);
    expect(r.stderr).toContain('points outside the repository');
  });
});
