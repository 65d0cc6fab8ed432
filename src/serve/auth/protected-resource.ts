// RFC 9728 Protected Resource Metadata: the document a 401 points clients at, and where it is served.
import type { AuthConfig } from '../../config/schema.js';

/** The well-known path of RFC 9728 (§3), before any path suffix. */
export const PROTECTED_RESOURCE_WELL_KNOWN = '/.well-known/oauth-protected-resource';

/** The metadata document (RFC 9728 §2), with the members this gateway states. */
export interface ProtectedResourceMetadata {
  /** The protected resource's identifier: the MCP endpoint's URL. */
  resource: string;
  /** Issuers whose tokens are accepted; present only when `auth.jwt.issuer` is set. */
  authorization_servers?: string[];
  /** Tokens travel in the `Authorization` header only. */
  bearer_methods_supported: ['header'];
}

/**
 * The metadata document for the MCP endpoint at `resource`. The SDK's
 * `buildOAuthProtectedResourceMetadata` does not fit: it requires an authorization server (none
 * exists with static tokens only), requires https for it, and leaves out `bearer_methods_supported`.
 *
 * @example
 * protectedResourceMetadata('https://mcp.example.com/mcp', { tokens: [], jwt: { issuer: 'https://idp.example.com', ... } })
 * // { resource: 'https://mcp.example.com/mcp', authorization_servers: ['https://idp.example.com'], bearer_methods_supported: ['header'] }
 */
export function protectedResourceMetadata(resource: string | URL, auth: AuthConfig | undefined): ProtectedResourceMetadata {
  const issuer = auth?.jwt?.issuer;
  return {
    resource: new URL(resource).href,
    ...(issuer === undefined ? {} : { authorization_servers: [issuer] }),
    bearer_methods_supported: ['header'],
  };
}

/**
 * The paths the document is served at: the path-suffixed one of RFC 9728 §3.1 for the MCP path
 * (`/.well-known/oauth-protected-resource/mcp`), first, and the bare well-known path for clients
 * that probe only that. One path when the MCP endpoint is at `/`.
 *
 * @example protectedResourceMetadataPaths('/mcp') // ['/.well-known/oauth-protected-resource/mcp', '/.well-known/oauth-protected-resource']
 */
export function protectedResourceMetadataPaths(mcpPath: string): string[] {
  const suffixed = `${PROTECTED_RESOURCE_WELL_KNOWN}${withoutTrailingSlash(mcpPath)}`;
  return suffixed === PROTECTED_RESOURCE_WELL_KNOWN ? [suffixed] : [suffixed, PROTECTED_RESOURCE_WELL_KNOWN];
}

/**
 * The metadata URL for `resource` (the MCP endpoint's URL): the well-known path inserted between
 * the host and the resource's path (a query, if any, kept; RFC 9728 §3.1); what `WWW-Authenticate: Bearer resource_metadata="..."` names.
 *
 * @example protectedResourceMetadataUrl('http://127.0.0.1:7330/mcp') // 'http://127.0.0.1:7330/.well-known/oauth-protected-resource/mcp'
 */
export function protectedResourceMetadataUrl(resource: string | URL): string {
  const url = new URL(resource);
  url.pathname = protectedResourceMetadataPaths(url.pathname)[0]!;
  url.hash = '';
  return url.href;
}

function withoutTrailingSlash(path: string): string {
  const trimmed = path.replace(/\/+$/, '');
  return trimmed === '' ? '' : trimmed.startsWith('/') ? trimmed : `/${trimmed}`;
}
