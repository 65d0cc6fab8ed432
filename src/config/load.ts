// Finds, reads, interpolates and validates the configuration; every failure is one readable ProxyError.
import path from 'node:path';
import { readFile } from 'node:fs/promises';
import { parseEnv } from 'node:util';
import { lilconfig, type Loader } from 'lilconfig';
import type { z } from 'zod';
import { sortTopLevelKeys } from './keys.js';
import { ConfigSchema, isRemote, type FederateConfig, type ServerConfig } from './schema.js';
import { ErrorCodes, ProxyError } from '../errors.js';

export * from './schema.js';

/** The places searched (in each folder from cwd upwards) when no `--config` is given. */
export const CONFIG_SEARCH_PLACES = [
  'package.json',
  '.mcp-federaterc',
  '.mcp-federaterc.json',
  '.mcp-federaterc.yaml',
  '.mcp-federaterc.yml',
  'mcp-federate.config.json',
  'mcp-federate.config.yaml',
  'mcp-federate.config.yml',
  'mcp-federate.config.js',
  'mcp-federate.config.mjs',
  'mcp-federate.config.cjs',
];

/** A loaded configuration and where it came from. */
export interface LoadedConfig {
  config: FederateConfig;
  /** Absolute path of the file it was read from. */
  filepath: string;
  /** Top-level keys of the file that are not ours and were ignored (another client's settings). */
  ignoredKeys: string[];
}

/** A validated configuration and the top-level keys set aside on the way. */
export interface ParsedConfig {
  config: FederateConfig;
  /** Top-level keys that are not ours (nor a typo of ours), in file order; not validated, not interpolated. */
  ignoredKeys: string[];
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

const yamlLoader: Loader = async (filepath, content) => {
  // Loaded only for a YAML file: a JSON config never pays for the parser.
  const { parse } = await import('yaml');
  try {
    return parse(content, { logLevel: 'error' }) as unknown; // warnings would go to stderr unformatted
  } catch (err) {
    const e = err as Error & { linePos?: { line: number; col: number }[] };
    const at = e.linePos?.[0] ? `line ${e.linePos[0].line}, column ${e.linePos[0].col}: ` : '';
    const reason = e.message.split('\n')[0]!.replace(/ at line \d+, column \d+:?$/, '');
    throw new ProxyError(ErrorCodes.CONFIG_INVALID, `${filepath}: not valid YAML (${at}${reason})`);
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
    loaders: { '.json': jsonLoader, '.yaml': yamlLoader, '.yml': yamlLoader, noExt: jsonLoader },
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
  const { config, ignoredKeys } = validateConfig(found.config, { env: options.env ?? process.env, file: found.filepath });
  const block = isObject(found.config) && found.config.servers === undefined && 'mcpServers' in found.config ? 'mcpServers' : 'servers';
  const resolved = await resolvePaths(config, path.dirname(found.filepath), `${found.filepath}: ${block}`);
  return { config: resolved, filepath: found.filepath, ignoredKeys };
}

/**
 * Interpolates `${VAR}` and validates a raw config object; top-level keys that are not ours are
 * ignored (see {@link validateConfig}). Pure apart from reading `env`.
 */
export function parseConfig(
  raw: unknown,
  options: { env: Readonly<Record<string, string | undefined>>; file?: string },
): FederateConfig {
  return validateConfig(raw, options).config;
}

/**
 * Like {@link parseConfig}, and names the top-level keys it set aside. Top-level keys that are not
 * ours are ignored (a whole Claude Desktop or VS Code file loads), unless one is a near miss of ours
 * (`cahce`): that is an error suggesting the key it was meant to be.
 */
export function validateConfig(
  raw: unknown,
  options: { env: Readonly<Record<string, string | undefined>>; file?: string },
): ParsedConfig {
  const prefix = options.file ? `${options.file}: ` : '';
  let ours = raw;
  let ignoredKeys: string[] = [];
  if (isObject(raw)) {
    const keys = sortTopLevelKeys(raw, Object.keys(ConfigSchema.in.shape));
    if (keys.typos.length > 0) {
      const lines = keys.typos.map((t) => `unknown field "${t.key}" (did you mean "${t.suggestion}"?)`);
      throw new ProxyError(ErrorCodes.CONFIG_INVALID, prefix + lines.join('\n'));
    }
    ours = keys.ours;
    ignoredKeys = keys.ignored;
  }
  const interpolated = interpolateEnv(ours, options.env, [], prefix);
  const result = ConfigSchema.safeParse(interpolated);
  if (!result.success) throw new ProxyError(ErrorCodes.CONFIG_INVALID, prefix + formatIssues(result.error.issues));
  return { config: result.data, ignoredKeys };
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

/**
 * Resolves `cwd`, `envFile`, `audit.file` and `audit.anchorFile` against the config file's folder and merges each
 * `envFile` under its server's `env` (which wins). A file that cannot be read is an error naming the server and the path.
 */
async function resolvePaths(config: FederateConfig, base: string, where: string): Promise<FederateConfig> {
  const resolve = async (s: ServerConfig): Promise<ServerConfig> => {
    if (isRemote(s)) return s;
    const out = s.cwd ? { ...s, cwd: path.resolve(base, s.cwd) } : { ...s };
    if (s.envFile === undefined) return out;
    const envFile = path.resolve(base, s.envFile);
    let content: string;
    try {
      content = await readFile(envFile, 'utf8');
    } catch (err) {
      const reason = (err as NodeJS.ErrnoException).code ?? (err as Error).message;
      throw new ProxyError(ErrorCodes.CONFIG_INVALID, `${where}.${s.name}.envFile: cannot read ${envFile} (${reason})`, { cause: err });
    }
    const fromFile = Object.fromEntries(Object.entries(parseEnv(content)).filter((e): e is [string, string] => e[1] !== undefined));
    return { ...out, envFile, env: { ...fromFile, ...s.env } };
  };
  const servers: Record<string, ServerConfig> = {};
  for (const [id, s] of Object.entries(config.servers)) servers[id] = await resolve(s); // in order: the first bad file is named
  const { audit } = config;
  if (audit) {
    const file = audit.file === 'stderr' ? audit.file : path.resolve(base, audit.file);
    const anchorFile = audit.anchorFile === undefined ? {} : { anchorFile: path.resolve(base, audit.anchorFile) };
    return { ...config, servers, audit: { ...audit, file, ...anchorFile } };
  }
  return { ...config, servers };
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
