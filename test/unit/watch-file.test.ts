// watchFile: follows a file across in-place writes and rename-replace saves.
import { mkdtempSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { watchFile, type FileWatch } from '../../src/config/watch-file.js';

describe('watchFile', () => {
  let dir: string | undefined;
  let watch: FileWatch | undefined;
  afterEach(() => {
    watch?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('sees every save, in place or renamed over the file', async () => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'watch-file-'));
    const file = path.join(dir, 'config.json');
    writeFileSync(file, '1');
    let changes = 0;
    let next: (() => void) | undefined;
    watch = watchFile(
      file,
      () => {
        changes++;
        next?.();
      },
      { debounceMs: 50 },
    );
    const changed = () => new Promise<void>((resolve) => (next = resolve));
    for (let i = 0; i < 10; i++) {
      const seen = changed();
      if (i % 2 === 0) {
        writeFileSync(path.join(dir, 'config.json.tmp'), String(i));
        renameSync(path.join(dir, 'config.json.tmp'), file);
      } else {
        writeFileSync(file, String(i));
      }
      await seen;
    }
    expect(changes).toBeGreaterThanOrEqual(10); // each save above was seen before the next was made
  });

  it('close is idempotent and stops reporting', () => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'watch-file-'));
    const file = path.join(dir, 'config.json');
    writeFileSync(file, '1');
    watch = watchFile(file, () => expect.unreachable());
    watch.close();
    watch.close();
    writeFileSync(file, '2');
  });
});
