// RFC 9728 metadata: the document, its paths, and its URL agreeing with the SDK's.
import { describe, expect, it } from 'vitest';
import { getOAuthProtectedResourceMetadataUrl } from '@modelcontextprotocol/server';
import { AuthSchema } from '../../src/config/schema.js';
import {
  PROTECTED_RESOURCE_WELL_KNOWN,
  protectedResourceMetadata,
  protectedResourceMetadataPaths,
  protectedResourceMetadataUrl,
} from '../../src/serve/auth/protected-resource.js';

const tokensOnly = AuthSchema.parse({ tokens: [{ principal: 'a', sha256: 'a'.repeat(64) }] });
const withIssuer = AuthSchema.parse({ jwt: { jwksUrl: 'https://idp.example.com/jwks', issuer: 'https://idp.example.com', audience: 'mcp' } });
const noIssuer = AuthSchema.parse({ jwt: { jwksUrl: 'https://idp.example.com/jwks', audience: 'mcp' } });

describe('protected resource metadata', () => {
  it('names the issuer as the authorization server when one is configured', () => {
    expect(protectedResourceMetadata('https://mcp.example.com/mcp', withIssuer)).toEqual({
      resource: 'https://mcp.example.com/mcp',
      authorization_servers: ['https://idp.example.com'],
      bearer_methods_supported: ['header'],
    });
  });

  it.each([
    ['static tokens only', tokensOnly],
    ['a JWT without issuer', noIssuer],
    ['no auth block', undefined],
  ])('has no authorization_servers with %s', (_what, auth) => {
    const doc = protectedResourceMetadata(new URL('http://127.0.0.1:7330/mcp'), auth);
    expect(doc).toEqual({ resource: 'http://127.0.0.1:7330/mcp', bearer_methods_supported: ['header'] });
    expect(JSON.parse(JSON.stringify(doc))).not.toHaveProperty('authorization_servers');
  });

  it('normalises the resource URL as a URL (host case, default port)', () => {
    expect(protectedResourceMetadata('HTTPS://MCP.Example.com:443/mcp', undefined).resource).toBe('https://mcp.example.com/mcp');
  });

  it.each([
    ['/mcp', [`${PROTECTED_RESOURCE_WELL_KNOWN}/mcp`, PROTECTED_RESOURCE_WELL_KNOWN]],
    ['/mcp/', [`${PROTECTED_RESOURCE_WELL_KNOWN}/mcp`, PROTECTED_RESOURCE_WELL_KNOWN]],
    ['/api/v1/mcp', [`${PROTECTED_RESOURCE_WELL_KNOWN}/api/v1/mcp`, PROTECTED_RESOURCE_WELL_KNOWN]],
    ['mcp', [`${PROTECTED_RESOURCE_WELL_KNOWN}/mcp`, PROTECTED_RESOURCE_WELL_KNOWN]],
    ['/', [PROTECTED_RESOURCE_WELL_KNOWN]],
    ['', [PROTECTED_RESOURCE_WELL_KNOWN]],
  ])('is served for MCP path %j at %j', (mcpPath, paths) => {
    expect(PROTECTED_RESOURCE_WELL_KNOWN).toBe('/.well-known/oauth-protected-resource');
    expect(protectedResourceMetadataPaths(mcpPath)).toEqual(paths);
  });

  it.each(['http://127.0.0.1:7330/mcp', 'https://mcp.example.com/mcp/', 'https://mcp.example.com/', 'http://[::1]:8080/a/b', 'https://h/mcp?x=1#f'])(
    'the metadata URL of %s is the path-suffixed one, as the SDK builds it',
    (resource) => {
      const ours = protectedResourceMetadataUrl(resource);
      expect(ours).toBe(getOAuthProtectedResourceMetadataUrl(new URL(resource)));
      expect(new URL(ours).pathname.startsWith(PROTECTED_RESOURCE_WELL_KNOWN)).toBe(true);
    },
  );

  it('the metadata URL of http://127.0.0.1:7330/mcp, spelt out', () => {
    expect(protectedResourceMetadataUrl('http://127.0.0.1:7330/mcp')).toBe('http://127.0.0.1:7330/.well-known/oauth-protected-resource/mcp');
  });
});
