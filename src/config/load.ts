// Finds, reads, interpolates and validates the configuration; every failure is one readable ProxyError.
import os from 'node:os';
import path from 'node:path';
import { readFile } from 'node:fs/promises';
import { parseEnv } from 'node:util';
import { lilconfig, type Loader } from 'lilconfig';
import type { z } from 'zod';
import { closest, sortTopLevelKeys, unknownKeyMessage } from './keys.js';
import { ConfigSchema, isRemote, RemoteServerSchema, StdioServerSchema, type FederateConfig, type ServerConfig } from './schema.js';
import { substituteVariables, workspaceFolderOf, type VariableContext } from './variables.js';
import { ErrorCodes, ProxyError } from '../errors.js';

export * from './schema.js';

/** The places searched (in each folder from cwd upwards) when no `--config` is given. */
export const CONFIG_SEARCH_PLACES = [
  'package.json',
  '.mcp-federaterc',
  '.mcp-federaterc.json',
  '.mcp-federaterc.yaml',
  '.mcp-federaterc.yml',
  'mcp-federate.json',
  'mcp-federate.yaml',
  'mcp-federate.yml',
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
  /** Our top-level keys the file writes out (`mcpServers` as `servers`), in file order: what a reload compares as "spelled out". */
  written: string[];
}

/** A validated configuration and the top-level keys set aside on the way. */
export interface ParsedConfig {
  config: FederateConfig;
  /** Top-level keys that are not ours (nor a typo of ours), in file order; not validated, not interpolated. */
  ignoredKeys: string[];
  /** Our top-level keys the input writes out (`mcpServers` as `servers`), in input order. */
  written: string[];
}

/** Options of {@link loadConfig}. */
export interface LoadConfigOptions {
  /** An explicit file (the CLI's `--config`). Default: search from `cwd`. */
  file?: string;
  /** Where the search starts and relative paths resolve from. Default: process.cwd(). */
  cwd?: string;
  /** Variables for `${VAR}` interpolation. Default: process.env. */
  env?: Readonly<Record<string, string | undefined>>;
  /** `${userHome}`. Default: the OS home folder. */
  userHome?: string;
  /**
   * Load for a command that uses no secret (`policy check`): the `auth` block is left out unread,
   * and a variable that is not set stays as written. Default: false.
   */
  withoutSecrets?: boolean;
}

/** Options of {@link parseConfig} and {@link validateConfig}. */
export interface ValidateOptions {
  /** Variables for `${VAR}`, `${env:VAR}` and `${input:id}`. */
  env: Readonly<Record<string, string | undefined>>;
  /** The file the config came from: prefixes errors, and gives `${workspaceFolder}`. */
  file?: string;
  /** `${userHome}`. Default: the OS home folder. */
  userHome?: string;
  /** See {@link LoadConfigOptions.withoutSecrets}. Default: false. */
  withoutSecrets?: boolean;
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

/** `.mcp-federaterc` (no extension): JSON when it opens with `{`, else YAML. */
// eslint-disable-next-line @typescript-eslint/no-unsafe-return -- lilconfig's Loader type returns any
const rcLoader: Loader = (filepath, content) => (content.trimStart().startsWith('{') ? jsonLoader(filepath, content) : yamlLoader(filepath, content));

/**
 * Loads and validates the configuration. Throws `ProxyError(CONFIG_INVALID)` whose message names
 * the file, the path and the problem (`servers.docs.url: Invalid URL`).
 */
export async function loadConfig(options: LoadConfigOptions = {}): Promise<LoadedConfig> {
  const cwd = options.cwd ?? process.cwd();
  const explorer = lilconfig('mcp-federate', {
    searchPlaces: CONFIG_SEARCH_PLACES,
    loaders: { '.json': jsonLoader, '.yaml': yamlLoader, '.yml': yamlLoader, noExt: rcLoader },
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
    throw new ProxyError(ErrorCodes.CONFIG_INVALID, `no configuration found from ${cwd} (looked for ${CONFIG_SEARCH_PLACES.join(', ')}); pass --config <file>`);
  }
  const { config, ignoredKeys, written } = validateConfig(found.config, {
    env: options.env ?? process.env,
    file: found.filepath,
    ...(options.userHome === undefined ? {} : { userHome: options.userHome }),
    ...(options.withoutSecrets ? { withoutSecrets: true } : {}),
  });
  const block = isObject(found.config) && found.config.servers === undefined && 'mcpServers' in found.config ? 'mcpServers' : 'servers';
  const resolved = await resolvePaths(config, path.dirname(found.filepath), `${found.filepath}: ${block}`);
  return { config: resolved, filepath: found.filepath, ignoredKeys, written };
}

/**
 * Interpolates `${…}` placeholders (see {@link substituteVariables}) and validates a raw config
 * object; client files' own top-level keys are set aside (see {@link validateConfig}). Pure apart
 * from reading `env`.
 */
export function parseConfig(raw: unknown, options: ValidateOptions): FederateConfig {
  return validateConfig(raw, options).config;
}

/**
 * Like {@link parseConfig}, and names the top-level keys it set aside. Top-level keys that are not
 * ours are ignored (a whole Claude Desktop or VS Code file loads), unless one is a near miss of ours
 * (`cahce`): that is an error suggesting the key it was meant to be.
 */
export function validateConfig(raw: unknown, options: ValidateOptions): ParsedConfig {
  const prefix = options.file ? `${options.file}: ` : '';
  let ours = raw;
  let ignoredKeys: string[] = [];
  if (isObject(raw)) {
    const keys = sortTopLevelKeys(raw, Object.keys(ConfigSchema.in.shape));
    if (keys.unknown.length > 0) {
      const lines = keys.unknown.map((u) => unknownKeyMessage(u.key, u.suggestion));
      throw new ProxyError(ErrorCodes.CONFIG_INVALID, prefix + lines.join('\n'));
    }
    ours = keys.ours;
    if (options.withoutSecrets) {
      const { auth: _unread, ...rest } = keys.ours;
      ours = rest;
    }
    ignoredKeys = keys.ignored;
  }
  const vars: VariableContext = {
    env: options.env,
    userHome: options.userHome ?? os.homedir(),
    keepUnset: options.withoutSecrets === true,
    workspaceFolder: options.file === undefined ? undefined : workspaceFolderOf(path.resolve(options.file).split(path.sep).join('/')),
  };
  const interpolated = interpolate(ours, vars, [], prefix);
  const result = ConfigSchema.safeParse(interpolated);
  if (!result.success) throw new ProxyError(ErrorCodes.CONFIG_INVALID, prefix + formatIssues(result.error.issues));
  const written = isObject(ours) ? [...new Set(Object.keys(ours).map((k) => (k === 'mcpServers' ? 'servers' : k)))] : [];
  return { config: result.data, ignoredKeys, written };
}

/** Replaces the placeholders in every string of `value` (see {@link substituteVariables}); errors name the config path. */
export function interpolate(value: unknown, vars: VariableContext, at: (string | number)[] = [], prefix = ''): unknown {
  if (typeof value === 'string') return value.includes('${') ? substituteVariables(value, vars, prefix + formatPath(at)) : value;
  if (Array.isArray(value)) return value.map((v, i) => interpolate(v, vars, [...at, i], prefix));
  if (typeof value === 'object' && value !== null) {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) out[k] = interpolate(v, vars, [...at, k], prefix);
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
        i.code === 'unrecognized_keys' ? unknownKeysMessage(i.keys, i.path) : i.code === 'invalid_key' ? (i.issues[0]?.message ?? i.message) : i.message;
      return p ? `${p}: ${message}` : message;
    })
    .join('\n');
}

/** `unknown field "maxBytess" (did you mean "maxBytes"?)`, for each key zod found unknown at `at`. */
function unknownKeysMessage(keys: readonly string[], at: readonly PropertyKey[]): string {
  // A server entry is parsed by whichever of the two server shapes fits it: suggest from both.
  const server = at.length === 2 && (at[0] === 'servers' || at[0] === 'mcpServers');
  const known = server ? [...new Set([...Object.keys(StdioServerSchema.shape), ...Object.keys(RemoteServerSchema.shape)])] : knownKeysAt(ConfigSchema, at);
  return keys.map((k) => unknownKeyMessage(k, known && closest(k, known))).join('; ');
}

/** The keys an object schema at `at` inside `schema` accepts, or undefined where the path leaves the known shape. */
export function knownKeysAt(schema: z.core.$ZodType, at: readonly PropertyKey[]): string[] | undefined {
  let s: z.core.$ZodType | undefined = schema;
  let i = 0;
  while (s) {
    const def = s._zod.def as unknown as Record<string, unknown> & { type: string };
    switch (def.type) {
      case 'optional':
      case 'default':
      case 'prefault':
      case 'nullable':
      case 'readonly':
        s = def.innerType as z.core.$ZodType;
        continue;
      case 'pipe': {
        // A preprocess is a pipe from a transform into the schema: the keys are the schema's.
        const input = def.in as z.core.$ZodType;
        s = (input._zod.def as { type: string }).type === 'transform' ? (def.out as z.core.$ZodType) : input;
        continue;
      }
      case 'object':
        if (i === at.length) return Object.keys(def.shape as object);
        s = (def.shape as Record<string, z.core.$ZodType>)[String(at[i++])];
        continue;
      case 'array':
        if (i === at.length) return undefined;
        i++;
        s = def.element as z.core.$ZodType;
        continue;
      case 'record':
        if (i === at.length) return undefined;
        i++;
        s = def.valueType as z.core.$ZodType;
        continue;
      default:
        return undefined;
    }
  }
  return undefined;
}

function formatPath(p: readonly PropertyKey[]): string {
  return p.map((s, i) => (typeof s === 'number' ? `[${s}]` : `${i === 0 ? '' : '.'}${String(s)}`)).join('');
}

/**
 * Resolves `cwd`, `envFile`, `audit.file`, `audit.anchorFile` and `redis.caFile` against the config file's folder and merges each
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
  const { audit, redis } = config;
  const withRedis = redis?.caFile === undefined ? {} : { redis: { ...redis, caFile: path.resolve(base, redis.caFile) } };
  if (audit) {
    const file = audit.file === 'stderr' ? audit.file : path.resolve(base, audit.file);
    const anchorFile = audit.anchorFile === undefined ? {} : { anchorFile: path.resolve(base, audit.anchorFile) };
    return { ...config, servers, audit: { ...audit, file, ...anchorFile }, ...withRedis };
  }
  return { ...config, servers, ...withRedis };
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
