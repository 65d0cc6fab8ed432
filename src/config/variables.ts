// `${…}` placeholders in config strings: ours (`${VAR}`, `${VAR:-default}`) and the ones client files use (VS Code's). Pure.
import { ErrorCodes, ProxyError } from '../errors.js';

/** What placeholders are resolved from. */
export interface VariableContext {
  /** Environment variables (`${VAR}`, `${env:VAR}`, and `${input:id}` supplied as a variable). */
  readonly env: Readonly<Record<string, string | undefined>>;
  /** `${userHome}`. Absent: the placeholder is an error naming it. */
  readonly userHome?: string | undefined;
  /** `${workspaceFolder}` (see {@link workspaceFolderOf}). Absent: the placeholder is an error naming it. */
  readonly workspaceFolder?: string | undefined;
  /**
   * Leave a variable that is not set (and an `${input:id}` with none to supply it) as written
   * instead of failing: for commands that never use the values (`policy check`). Default: false.
   */
  readonly keepUnset?: boolean | undefined;
}

/** `${NAME}`, `${NAME:-default}`, or `${kind:arg}` / `${word}` (VS Code's forms). */
const PLACEHOLDER = /\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*)|:([^}]*))?\}/g;

/**
 * The folder VS Code means by `${workspaceFolder}` for a config file: the folder that holds
 * `.vscode/` when the file is `.vscode/<name>`, else the file's own folder. `/` separated.
 *
 * @example workspaceFolderOf('/home/a/proj/.vscode/mcp.json') // '/home/a/proj'
 */
export function workspaceFolderOf(file: string): string {
  const parts = file.split('/');
  parts.pop(); // the file name
  if (parts.length > 1 && parts[parts.length - 1] === '.vscode') parts.pop();
  return parts.join('/') || '/';
}

/**
 * The environment variable names that supply VS Code's `${input:id}` here, in the order they are
 * tried: `id` as written, then upper-cased with every other character turned into `_`
 * (`api-token` → `API_TOKEN`).
 */
export function inputVariableNames(id: string): string[] {
  const upper = id.toUpperCase().replace(/[^A-Z0-9_]/g, '_');
  return upper === id ? [id] : [id, upper];
}

/**
 * Replaces every placeholder in `text`; `where` names the config path for errors.
 *
 * - `${VAR}`, `${env:VAR}`: the environment variable; unset is an error naming it.
 * - `${VAR:-default}`: the variable, or `default` when it is unset.
 * - `${userHome}`, `${workspaceFolder}`, `${pathSeparator}` (`/`): as VS Code reads them.
 * - `${input:id}`: VS Code would prompt for it; a gateway runs unattended, so it is taken from the
 *   environment (see {@link inputVariableNames}) or is an error that says how to supply it. It is
 *   never passed on as written.
 * - Any other `${kind:…}` or `${word}` VS Code knows (`${command:…}`, `${config:…}`, `${cwd}`): an error naming it.
 *
 * @example substituteVariables('${userHome}/notes', { env: {}, userHome: '/home/a' }, 'servers.n.args[0]') // '/home/a/notes'
 */
export function substituteVariables(text: string, ctx: VariableContext, where: string): string {
  return text.replace(PLACEHOLDER, (whole, name: string, fallback: string | undefined, arg: string | undefined) => {
    const fail = (problem: string): never => {
      throw new ProxyError(ErrorCodes.CONFIG_INVALID, `${where}: ${problem}`);
    };
    if (arg !== undefined) {
      if (name === 'env') {
        const v = ctx.env[arg];
        return v ?? (ctx.keepUnset ? whole : fail(`environment variable ${arg} is not set (${whole})`));
      }
      if (name === 'input') {
        const names = inputVariableNames(arg);
        for (const n of names) {
          const v = ctx.env[n];
          if (v !== undefined) return v;
        }
        if (ctx.keepUnset) return whole;
        return fail(
          `${whole} is a VS Code input, which mcp-federate cannot prompt for: set the environment variable ${names.join(' or ')}, or write \${env:NAME} instead`,
        );
      }
      return fail(
        `${whole} is not supported (supported: \${VAR}, \${VAR:-default}, \${env:VAR}, \${input:id}, \${userHome}, \${workspaceFolder}, \${pathSeparator})`,
      );
    }
    if (fallback !== undefined) return ctx.env[name] ?? fallback;
    switch (name) {
      case 'userHome':
        return ctx.userHome ?? fail(`${whole}: the home folder is not known`);
      case 'workspaceFolder':
        return ctx.workspaceFolder ?? fail(`${whole}: there is no config file to take the folder from`);
      case 'pathSeparator':
        return '/';
    }
    const v = ctx.env[name];
    if (v !== undefined) return v;
    if (ctx.keepUnset) return whole;
    if (VSCODE_WORDS.has(name))
      return fail(
        `${whole} is not supported (supported: \${VAR}, \${VAR:-default}, \${env:VAR}, \${input:id}, \${userHome}, \${workspaceFolder}, \${pathSeparator})`,
      );
    return fail(`environment variable ${name} is not set`);
  });
}

/** VS Code's other predefined variables: named in an error rather than read as an unset environment variable. */
const VSCODE_WORDS = new Set([
  'workspaceFolderBasename',
  'file',
  'fileWorkspaceFolder',
  'relativeFile',
  'relativeFileDirname',
  'fileBasename',
  'fileBasenameNoExtension',
  'fileExtname',
  'fileDirname',
  'fileDirnameBasename',
  'cwd',
  'lineNumber',
  'selectedText',
  'execPath',
  'defaultBuildTask',
]);
