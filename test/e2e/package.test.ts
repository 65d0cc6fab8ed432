// The npm package as a user gets it: packed, installed into an empty folder, its bin run.
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { assertBuilt, PACKAGE_VERSION, ROOT } from '../helpers/built-cli.js';

describe('the packed tarball', () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'mcp-federate-pack-'));
  const app = path.join(dir, 'app');
  let files: string[] = [];
  const bin = () => path.join(app, 'node_modules', '.bin', 'mcp-federate');

  beforeAll(async () => {
    assertBuilt();
    // --ignore-scripts: dist/ is already built (pretest); a rebuild would pull it from under the other suites.
    const packed = await execa('npm', ['pack', '--json', '--ignore-scripts', '--pack-destination', dir], { cwd: ROOT });
    const [info] = JSON.parse(packed.stdout) as { filename: string; files: { path: string }[] }[];
    files = info!.files.map((f) => f.path);
    await execa('npm', ['install', '--prefix', app, '--no-audit', '--no-fund', '--prefer-offline', '--ignore-scripts', path.join(dir, info!.filename)], {
      cwd: dir,
    });
  }, 180_000);
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('holds dist, the README, the LICENSE and package.json, and no sources, tests or logs', () => {
    expect(files).toContain('dist/cli.js');
    expect(files).toContain('LICENSE');
    expect(files).toContain('README.md');
    expect(files).toContain('package.json');
    expect(files).toContain('schema/mcp-federate.schema.json');
    expect(files.filter((f) => /^(src|test|bench|node_modules)\//.test(f) || f.endsWith('.log'))).toEqual([]);
  });

  it('installs a working bin: --version, and ls on an example federation', async () => {
    expect(readdirSync(path.join(app, 'node_modules', 'mcp-federate'))).toContain('dist');
    const version = await execa(bin(), ['--version']);
    expect(version.stdout.trim()).toBe(PACKAGE_VERSION);
    const ls = await execa(bin(), ['ls', '--config', path.join(ROOT, 'examples', 'mcp-federate.json')], { reject: false });
    expect(ls.exitCode).toBe(0);
    expect(ls.stdout).toMatch(/^everything\b/m);
    expect(ls.stdout).toMatch(/^memory\b/m);
  });
});
