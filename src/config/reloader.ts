// Configuration reloads: read the whole file, validate, refuse weakenings, hand the rest to the appliers at once.
import { readFile } from 'node:fs/promises';
import { loadConfig, type LoadedConfig } from './load.js';
import type { FederateConfig } from './schema.js';
import { planReload, type ReloadContext, type ReloadPlan, type ReloadSide } from './reload-diff.js';
import { watchFile, type FileWatch } from './watch-file.js';
import type { Logger } from '../logger.js';

/** Configuration files loaded as modules (`mcp-federate.config.js` and the like). */
const SCRIPT_CONFIG = /\.(?:[cm]?js)$/i;

/** Applies an accepted reload; runs synchronously, all appliers in the same tick. Must not throw. */
export type ReloadApplier = (next: FederateConfig, plan: ReloadPlan) => void;

/** Options of {@link createReloader}. */
export interface ReloaderOptions {
  /** The configuration file (absolute). */
  file: string;
  /** What is running now: the configuration every reload is compared with. */
  running: ReloadSide;
  /** Facts a reload cannot change (see {@link ReloadContext}). */
  context: ReloadContext;
  logger: Logger;
  /** Follow the file's changes (`--watch`). Default: false (reload only when asked). */
  watch?: boolean;
  /** Quiet time after the file's last change before it is read. Default: 150 ms. */
  debounceMs?: number;
  /** Loads the file (tests). Default: {@link loadConfig}. */
  load?: (file: string) => Promise<LoadedConfig>;
}

/** The outcome of one reload. */
export type ReloadOutcome = 'applied' | 'unchanged' | 'refused' | 'invalid';

/** Reloads on request and (with `watch`) on change; one at a time, in order. */
export interface Reloader {
  /** Adds an applier; appliers run in the order added. */
  on(applier: ReloadApplier): void;
  /** Reads the file now (after any reload under way) and applies it unless it is refused. */
  reload(why: string): Promise<ReloadOutcome>;
  /** Stops watching and waits for a reload under way. Idempotent. */
  close(): Promise<void>;
}

/**
 * Reloads the configuration file. Each reload reads the whole file and validates it: a file that
 * does not load (half written, invalid JSON/YAML, schema errors) is logged and the running
 * configuration stays; a file that changed while it was read is read again. A file that would
 * weaken security without saying so (see `planReload`) is refused with an error naming the block.
 * Otherwise every applier runs in the same tick (no request sees half of a reload) and the log says
 * what changed (`configuration reloaded`, with `changed`).
 */
export function createReloader(options: ReloaderOptions): Reloader {
  const { file, logger } = options;
  const load = options.load ?? ((f: string) => loadConfig({ file: f }));
  const appliers: ReloadApplier[] = [];
  let running = options.running;
  let queue: Promise<unknown> = Promise.resolve();
  let watch: FileWatch | undefined;
  let closed = false;

  const attempt = async (why: string): Promise<ReloadOutcome> => {
    if (!options.load && SCRIPT_CONFIG.test(file)) {
      // Node caches an imported module for the life of the process: a reload would see the old one.
      logger.error({ why, config: file }, 'configuration not reloaded: a JavaScript configuration file is read once; restart to apply it');
      return 'invalid';
    }
    let next: LoadedConfig | undefined;
    for (let tries = 0; next === undefined; tries++) {
      try {
        const before = await readFile(file);
        const loaded = await load(file);
        const after = await readFile(file);
        if (before.equals(after) || tries >= 4) next = loaded;
        // else: the file changed while it was read; read the settled file again
      } catch (err) {
        logger.error({ why, config: file, err: (err as Error).message }, 'configuration not reloaded: keeping the running one');
        return 'invalid';
      }
    }
    const plan = planReload(running, next, options.context);
    if (plan.refused.length > 0) {
      logger.error(
        { why, config: file, refused: plan.refused.map((r) => r.block), reasons: plan.refused.map((r) => `${r.block}: ${r.reason}`) },
        'configuration reload refused: it would weaken security without saying so; keeping the running one',
      );
      return 'refused';
    }
    if (plan.changed.length === 0) {
      logger.info({ why, config: file }, 'configuration unchanged');
      running = next;
      return 'unchanged';
    }
    running = next;
    for (const apply of appliers) {
      try {
        apply(next.config, plan);
      } catch (err) {
        logger.error({ why, config: file, err: String(err) }, 'configuration reload: applying failed part-way');
      }
    }
    logger.info({ why, config: file, changed: plan.changed }, 'configuration reloaded');
    if (plan.restartNeeded.length > 0) {
      logger.warn({ blocks: plan.restartNeeded }, 'configuration reload: these blocks take effect at the next start');
    }
    return 'applied';
  };

  const reload = (why: string): Promise<ReloadOutcome> => {
    const run = queue.then(() => (closed ? ('unchanged' as const) : attempt(why)));
    queue = run.catch(() => undefined);
    return run;
  };

  if (options.watch) {
    watch = watchFile(file, () => void reload('file changed'), {
      ...(options.debounceMs === undefined ? {} : { debounceMs: options.debounceMs }),
      onError: (err) => logger.error({ config: file, err: err.message }, 'config watch failed: changes are no longer followed (SIGHUP still reloads)'),
    });
  }

  return {
    on: (applier) => void appliers.push(applier),
    reload,
    async close() {
      closed = true;
      watch?.close();
      await queue;
    },
  };
}
