// The environment a stdio upstream inherits by default: the SDK's list of safe variables, without loading the SDK.

/**
 * Variables a child inherits from the proxy when its config does not set them: the list of SDK
 * 2.x's `DEFAULT_INHERITED_ENV_VARS` (`@modelcontextprotocol/client/stdio`), copied so that
 * spawning the upstreams at startup does not wait for the SDK to load. A unit test pins it to the
 * shipped SDK's.
 */
export const INHERITED_ENV_VARS: readonly string[] =
  process.platform === 'win32'
    ? [
        'APPDATA',
        'COMSPEC',
        'HOMEDRIVE',
        'HOMEPATH',
        'LOCALAPPDATA',
        'PATH',
        'PATHEXT',
        'PROCESSOR_ARCHITECTURE',
        'PROGRAMDATA',
        'PROGRAMFILES',
        'PROGRAMFILES(X86)',
        'PROGRAMW6432',
        'SYSTEMDRIVE',
        'SYSTEMROOT',
        'TEMP',
        'USERNAME',
        'USERPROFILE',
        'WINDIR',
      ]
    : ['HOME', 'LOGNAME', 'PATH', 'SHELL', 'TERM', 'USER'];

/**
 * The proxy's values of {@link INHERITED_ENV_VARS}, skipping unset ones and those that start with
 * `()` (exported shell functions), as the SDK's `getDefaultEnvironment()` does: the proxy's own
 * secrets never reach a child unless its config passes them.
 */
export function safeEnvironment(env: NodeJS.ProcessEnv = process.env): Record<string, string> {
  const out: Record<string, string> = {};
  for (const key of INHERITED_ENV_VARS) {
    const value = env[key];
    if (value === undefined || value.startsWith('()')) continue;
    out[key] = value;
  }
  return out;
}
