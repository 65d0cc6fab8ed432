// Finds, reads, interpolates and validates the configuration; every failure is one readable ProxyError.
import path from 'node:path';
import { readFile } from 'node:fs/promises';
import { lilconfig, type Loader } from 'lilconfig';
import type { z } from 'zod';
import { ConfigSchema, type FederateConfig } from './config-schema.js';
import { ErrorCodes, ProxyError } from './errors.js';

export * from './config-schema.js';

/** The places searched (in each folder from cwd upwards) when no `--config` is given. */
export const CONFIG_SEARCH_PLACES = [
  'package.json',
  '.mcp-federaterc',
  '.mcp-federaterc.json',
  'mcp-federate.config.json',
  'mcp-federate.config.js',
  'mcp-federate.config.mjs',
  'mcp-federate.config.cjs',
];

/** A loaded configuration and where it came from. */
export interface LoadedConfig {
  config: FederateConfig;
  /** Absolute path of the file it was read from. */
  filepath: string;
}

/** Options of {@link loadConfig}. */
export interface LoadConfigOptions {
  /** An explicit file (the CLI's `--config`). Default: search from `cwd`. */
  file?: string;
  /** Where the search starts and relative paths resolve from. Default: process.cwd(). */
  cwd?: string;
  /** Variables for `${VAR}` interpolation. Default: process.env. */
  env?: Readonly<Record<string, string | undefined>>;
}

const jsonLoader: Loader = (filepath, content) => {
  try {
    return JSON.parse(content) as unknown;
  } catch (err) {
    throw new ProxyError(ErrorCodes.CONFIG_INVALID, `${filepath}: not valid JSON (${(err as Error).message})`);
  }
};

/**
 * Loads and validates the configuration. Throws `ProxyError(CONFIG_INVALID)` whose message names
 * the file, the path and the problem (`servers.docs.url: Invalid URL`).
 */
export async function loadConfig(options: LoadConfigOptions = {}): Promise<LoadedConfig> {
  const cwd = options.cwd ?? process.cwd();
  const explorer = lilconfig('mcp-federate', {
    searchPlaces: CONFIG_SEARCH_PLACES,
    loaders: { '.json': jsonLoader, noExt: jsonLoader },
  });
  let found: { filepath: string; config: unknown } | null;
  try {
    if (options.file !== undefined) {
      const filepath = path.resolve(cwd, options.file);
      await readFile(filepath); // a clear ENOENT before lilconfig's own message
      found = await explorer.load(filepath);
    } else {
      found = await explorer.search(cwd);
    }
  } catch (err) {
    if (err instanceof ProxyError) throw err;
    const where = options.file ?? cwd;
    throw new ProxyError(ErrorCodes.CONFIG_INVALID, `${where}: cannot read config (${(err as Error).message})`, { cause: err });
  }
  if (!found) {
    throw new ProxyError(
      ErrorCodes.CONFIG_INVALID,
      `no configuration found from ${cwd} (looked for ${CONFIG_SEARCH_PLACES.join(', ')}); pass --config <file>`,
    );
  }
  const config = parseConfig(found.config, { env: options.env ?? process.env, file: found.filepath });
  return { config: resolveCwds(config, path.dirname(found.filepath)), filepath: found.filepath };
}

/** Interpolates `${VAR}` and validates a raw config object. Pure apart from reading `env`. */
export function parseConfig(
  raw: unknown,
  options: { env: Readonly<Record<string, string | undefined>>; file?: string },
): FederateConfig {
  const prefix = options.file ? `${options.file}: ` : '';
  const interpolated = interpolateEnv(raw, options.env, [], prefix);
  const result = ConfigSchema.safeParse(interpolated);
  if (!result.success) throw new ProxyError(ErrorCodes.CONFIG_INVALID, prefix + formatIssues(result.error.issues));
  return result.data;
}

/** Replaces `${VAR}` (or `${VAR:-default}`) in every string; an unset variable is an error naming it. */
export function interpolateEnv(
  value: unknown,
  env: Readonly<Record<string, string | undefined>>,
  at: (string | number)[] = [],
  prefix = '',
): unknown {
  if (typeof value === 'string') {
    return value.replace(/\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}/g, (_m, name: string, fallback?: string) => {
      const v = env[name];
      if (v !== undefined) return v;
      if (fallback !== undefined) return fallback;
      throw new ProxyError(
        ErrorCodes.CONFIG_INVALID,
        `${prefix}${formatPath(at)}: environment variable ${name} is not set`,
      );
    });
  }
  if (Array.isArray(value)) return value.map((v, i) => interpolateEnv(v, env, [...at, i], prefix));
  if (typeof value === 'object' && value !== null) {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) out[k] = interpolateEnv(v, env, [...at, k], prefix);
    return out;
  }
  return value;
}

/** `servers.docs.url: Invalid URL`, one issue per line. */
export function formatIssues(issues: readonly z.core.$ZodIssue[]): string {
  return issues
    .slice(0, 10)
    .map((i) => {
      const p = formatPath(i.path);
      const message =
        i.code === 'unrecognized_keys'
          ? `unknown field(s) ${i.keys.map((k) => `"${k}"`).join(', ')}`
          : i.code === 'invalid_key'
            ? (i.issues[0]?.message ?? i.message)
            : i.message;
      return p ? `${p}: ${message}` : message;
    })
    .join('\n');
}

function formatPath(p: readonly PropertyKey[]): string {
  return p.map((s, i) => (typeof s === 'number' ? `[${s}]` : `${i === 0 ? '' : '.'}${String(s)}`)).join('');
}

function resolveCwds(config: FederateConfig, base: string): FederateConfig {
  const servers = Object.fromEntries(
    Object.entries(config.servers).map(([id, s]) => [id, 'cwd' in s && s.cwd ? { ...s, cwd: path.resolve(base, s.cwd) } : s]),
  );
  return { ...config, servers };
}
