// Follows one file across every kind of save (in place, or rename over it) by watching its folder; debounced.
import { watch as fsWatch, type FSWatcher } from 'node:fs';
import path from 'node:path';

/** Options of {@link watchFile}. */
export interface WatchFileOptions {
  /** Quiet time after the last event before `onChange` runs, in milliseconds. Default: 150. */
  debounceMs?: number;
  /** The folder watch failed (e.g. the folder was removed); the watch is over. */
  onError?: (err: Error) => void;
}

/** A running file watch. */
export interface FileWatch {
  /** Stops watching and drops a pending change. Idempotent. */
  close(): void;
}

/** The quiet time {@link watchFile} waits for by default. */
export const DEFAULT_DEBOUNCE_MS = 150;

/**
 * Calls `onChange` once after each burst of changes to `file`. It watches the containing folder
 * and filters by file name, not the file's inode: an editor that writes a temporary file and
 * renames it over `file` (most do) replaces the inode, which a watch on the file itself stops
 * following after the first save. Events of other files in the folder are ignored; an event
 * without a file name (some platforms) counts as a change.
 */
export function watchFile(file: string, onChange: () => void, options: WatchFileOptions = {}): FileWatch {
  const folder = path.dirname(path.resolve(file));
  const name = path.basename(file);
  const debounceMs = options.debounceMs ?? DEFAULT_DEBOUNCE_MS;
  let timer: NodeJS.Timeout | undefined;
  let closed = false;
  const watcher: FSWatcher = fsWatch(folder, { persistent: false }, (_event, changed) => {
    if (closed || (changed !== null && changed !== name)) return;
    clearTimeout(timer);
    timer = setTimeout(() => {
      timer = undefined;
      if (!closed) onChange();
    }, debounceMs);
  });
  watcher.on('error', (err) => {
    if (closed) return;
    close();
    options.onError?.(err);
  });
  const close = () => {
    if (closed) return;
    closed = true;
    clearTimeout(timer);
    watcher.close();
  };
  return { close };
}
