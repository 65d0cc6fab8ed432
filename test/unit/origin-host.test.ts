// Origin and Host checks: a corpus of DNS-rebinding hosts, origins, IPv6 spellings, duplicates, and a real socket.
import { createServer } from 'node:http';
import { connect, type AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { createOriginHostCheck, isLoopback, type OriginHostOptions } from '../../src/serve/origin-host.js';

const LOOP: OriginHostOptions = { host: '127.0.0.1', port: 7330 };
const ANY: OriginHostOptions = { host: '0.0.0.0', port: 7330 };
const H = 'localhost:7330';

type Verdict = 'ok' | 'host' | 'origin';
type Case = [what: string, options: OriginHostOptions, host: string | string[] | undefined, origin: string | string[] | undefined, expected: Verdict];

const corpus: Case[] = [
  // Host, bound to loopback: the three names with the bound port.
  ['localhost with the port', LOOP, 'localhost:7330', undefined, 'ok'],
  ['127.0.0.1 with the port', LOOP, '127.0.0.1:7330', undefined, 'ok'],
  ['[::1] with the port', LOOP, '[::1]:7330', undefined, 'ok'],
  ['upper-case LOCALHOST', LOOP, 'LOCALHOST:7330', undefined, 'ok'],
  ['mixed-case LocalHost', LOOP, 'LocalHost:7330', undefined, 'ok'],
  ['::1 spelt out in full', LOOP, '[0:0:0:0:0:0:0:1]:7330', undefined, 'ok'],
  ['::1 with leading zeros', LOOP, '[::0001]:7330', undefined, 'ok'],
  ['bound to ::1', { host: '::1', port: 7330 }, '[::1]:7330', undefined, 'ok'],
  ['bound to [::1]', { host: '[::1]', port: 7330 }, 'localhost:7330', undefined, 'ok'],
  ['bound to localhost', { host: 'localhost', port: 7330 }, '127.0.0.1:7330', undefined, 'ok'],
  ['bound to 127.0.0.2', { host: '127.0.0.2', port: 7330 }, 'localhost:7330', undefined, 'ok'],
  ['no port when bound to 80', { host: '127.0.0.1', port: 80 }, 'localhost', undefined, 'ok'],
  ['port 80 when bound to 80', { host: '127.0.0.1', port: 80 }, 'localhost:80', undefined, 'ok'],
  // DNS rebinding and other names.
  ['evil.com with the port', LOOP, 'evil.com:7330', undefined, 'host'],
  ['evil.com without port', LOOP, 'evil.com', undefined, 'host'],
  ['127.0.0.1.evil.com', LOOP, '127.0.0.1.evil.com:7330', undefined, 'host'],
  ['localhost.evil.com', LOOP, 'localhost.evil.com:7330', undefined, 'host'],
  ['a subdomain of localhost', LOOP, 'evil.localhost:7330', undefined, 'host'],
  ['localhost. (trailing dot: another name)', LOOP, 'localhost.:7330', undefined, 'host'],
  ['another loopback address than 127.0.0.1', LOOP, '127.0.0.2:7330', undefined, 'host'],
  ['IPv4-mapped loopback', LOOP, '[::ffff:127.0.0.1]:7330', undefined, 'host'],
  ['0.0.0.0', LOOP, '0.0.0.0:7330', undefined, 'host'],
  ['a decimal IP', LOOP, '2130706433:7330', undefined, 'host'],
  ['127.1 (short form)', LOOP, '127.1:7330', undefined, 'host'],
  ['another IPv6 address', LOOP, '[::2]:7330', undefined, 'host'],
  // Port mismatch.
  ['another port', LOOP, 'localhost:7331', undefined, 'host'],
  ['no port (80) when bound elsewhere', LOOP, 'localhost', undefined, 'host'],
  ['[::1] on another port', LOOP, '[::1]:80', undefined, 'host'],
  // Malformed, missing, duplicated.
  ['no Host', LOOP, undefined, undefined, 'host'],
  ['an empty Host', LOOP, '', undefined, 'host'],
  ['userinfo', LOOP, 'localhost:7330@evil.com', undefined, 'host'],
  ['evil.com@localhost', LOOP, 'evil.com@localhost:7330', undefined, 'host'],
  ['a path', LOOP, 'localhost:7330/x', undefined, 'host'],
  ['a non-numeric port', LOOP, 'localhost:abc', undefined, 'host'],
  ['an empty port', LOOP, 'localhost:', undefined, 'host'],
  ['a port out of range', LOOP, 'localhost:97330', undefined, 'host'],
  ['a port with a leading zero', LOOP, 'localhost:07330', undefined, 'host'],
  ['an unclosed bracket', LOOP, '[::1:7330', undefined, 'host'],
  ['bare IPv6 without brackets', LOOP, '::1:7330', undefined, 'host'],
  ['IPv4 in brackets', LOOP, '[127.0.0.1]:7330', undefined, 'host'],
  ['a space', LOOP, 'local host:7330', undefined, 'host'],
  ['two dots', LOOP, 'localhost..:7330', undefined, 'host'],
  ['duplicate Host headers, both allowed', LOOP, [H, H], undefined, 'host'],
  ['duplicate Host headers, second evil', LOOP, [H, 'evil.com:7330'], undefined, 'host'],
  // allowedHosts.
  ['an allowed host name with the bound port', { ...LOOP, allowedHosts: ['mcp.internal'] }, 'mcp.internal:7330', undefined, 'ok'],
  ['an allowed host name without port', { ...LOOP, allowedHosts: ['mcp.internal'] }, 'mcp.internal', undefined, 'ok'],
  ['an allowed host name, upper-case', { ...LOOP, allowedHosts: ['Mcp.Internal'] }, 'MCP.internal:7330', undefined, 'ok'],
  ['an allowed host name on another port', { ...LOOP, allowedHosts: ['mcp.internal'] }, 'mcp.internal:8080', undefined, 'host'],
  ['an allowed host:port', { ...LOOP, allowedHosts: ['mcp.internal:8443'] }, 'mcp.internal:8443', undefined, 'ok'],
  ['an allowed host:port without its port', { ...LOOP, allowedHosts: ['mcp.internal:8443'] }, 'mcp.internal', undefined, 'host'],
  ['an allowed host:port on the bound port', { ...LOOP, allowedHosts: ['mcp.internal:8443'] }, 'mcp.internal:7330', undefined, 'host'],
  ['allowedHosts keeps the loopback names', { ...LOOP, allowedHosts: ['mcp.internal'] }, H, undefined, 'ok'],
  ['an allowed IPv6 host', { ...LOOP, allowedHosts: ['[fd00::1]'] }, '[FD00:0::1]:7330', undefined, 'ok'],
  // Not bound to loopback.
  ['any Host when bound to 0.0.0.0 without allowedHosts', ANY, 'evil.com:7330', undefined, 'ok'],
  ['no Host when bound to 0.0.0.0 without allowedHosts', ANY, undefined, undefined, 'ok'],
  ['duplicate Host when bound to 0.0.0.0', ANY, ['a', 'b'], undefined, 'host'],
  ['an allowed Host when bound to 0.0.0.0', { ...ANY, allowedHosts: ['mcp.example.com'] }, 'MCP.example.com', undefined, 'ok'],
  ['another Host when bound to 0.0.0.0 with allowedHosts', { ...ANY, allowedHosts: ['mcp.example.com'] }, 'evil.com', undefined, 'host'],
  ['localhost is no default when bound to 0.0.0.0 with allowedHosts', { ...ANY, allowedHosts: ['mcp.example.com'] }, H, undefined, 'host'],
  ['no Host when bound to 0.0.0.0 with allowedHosts', { ...ANY, allowedHosts: ['mcp.example.com'] }, undefined, undefined, 'host'],
  // Origin, bound to loopback.
  ['same-host origin localhost', LOOP, H, 'http://localhost:7330', 'ok'],
  ['same-host origin 127.0.0.1', LOOP, H, 'http://127.0.0.1:7330', 'ok'],
  ['same-host origin [::1]', LOOP, H, 'http://[::1]:7330', 'ok'],
  ['same-host origin upper-case', LOOP, H, 'HTTP://LOCALHOST:7330', 'ok'],
  ['same-host origin without port when bound to 80', { host: '127.0.0.1', port: 80 }, 'localhost', 'http://localhost', 'ok'],
  ['Origin: null', LOOP, H, 'null', 'origin'],
  ['an empty Origin', LOOP, H, '', 'origin'],
  ['a file:// origin', LOOP, H, 'file://', 'origin'],
  ['a file:// URL', LOOP, H, 'file:///home/u/page.html', 'origin'],
  ['another port', LOOP, H, 'http://localhost:7331', 'origin'],
  ['https on the bound port', LOOP, H, 'https://localhost:7330', 'origin'],
  ['localhost without port', LOOP, H, 'http://localhost', 'origin'],
  ['a trailing slash (not a serialised origin)', LOOP, H, 'http://localhost:7330/', 'origin'],
  ['a cross-site origin', LOOP, H, 'http://evil.com', 'origin'],
  ['a rebinding origin', LOOP, H, 'http://127.0.0.1.evil.com:7330', 'origin'],
  ['localhost. origin', LOOP, H, 'http://localhost.:7330', 'origin'],
  ['duplicate Origin headers, both allowed', LOOP, H, ['http://localhost:7330', 'http://localhost:7330'], 'origin'],
  ['duplicate Origin headers, one evil', LOOP, H, ['http://localhost:7330', 'http://evil.com'], 'origin'],
  // allowedOrigins.
  ['an allowed origin', { ...LOOP, allowedOrigins: ['https://app.example.com'] }, H, 'https://app.example.com', 'ok'],
  [
    'an allowed origin written with case, default port and slash',
    { ...LOOP, allowedOrigins: ['HTTPS://App.Example.com:443/'] },
    H,
    'https://app.example.com',
    'ok',
  ],
  ['an allowed origin with a port', { ...LOOP, allowedOrigins: ['http://app.example.com:8080'] }, H, 'http://app.example.com:8080', 'ok'],
  ['an allowed extension origin', { ...LOOP, allowedOrigins: ['chrome-extension://abcdefgh'] }, H, 'chrome-extension://abcdefgh', 'ok'],
  ['an allowed origin on another port', { ...LOOP, allowedOrigins: ['https://app.example.com'] }, H, 'https://app.example.com:8443', 'origin'],
  ['an allowed origin in http', { ...LOOP, allowedOrigins: ['https://app.example.com'] }, H, 'http://app.example.com', 'origin'],
  ['a subdomain of an allowed origin', { ...LOOP, allowedOrigins: ['https://app.example.com'] }, H, 'https://evil.app.example.com', 'origin'],
  ['allowedOrigins keeps the same-host ones', { ...LOOP, allowedOrigins: ['https://app.example.com'] }, H, 'http://127.0.0.1:7330', 'ok'],
  // Origin, not bound to loopback.
  ['no Origin when bound to 0.0.0.0', ANY, 'h', undefined, 'ok'],
  ['a localhost origin is no default when bound to 0.0.0.0', ANY, 'h', 'http://localhost:7330', 'origin'],
  ['an allowed origin when bound to 0.0.0.0', { ...ANY, allowedOrigins: ['https://app.example.com'] }, 'h', 'https://app.example.com', 'ok'],
  // Both wrong: Host is decided first.
  ['a rebinding Host with a cross-site Origin', LOOP, 'evil.com:7330', 'http://evil.com:7330', 'host'],
];

const list = (v: string | string[] | undefined): string[] => (v === undefined ? [] : typeof v === 'string' ? [v] : v);

/** The same headers as Node's `rawHeaders` (names in assorted case) and as `headersDistinct`. */
function forms(host: string | string[] | undefined, origin: string | string[] | undefined) {
  const raw = [
    ...list(host).flatMap((v, i) => [i % 2 ? 'host' : 'Host', v]),
    'Accept',
    '*/*',
    ...list(origin).flatMap((v, i) => [i % 2 ? 'ORIGIN' : 'Origin', v]),
  ];
  const distinct: Record<string, string[] | undefined> = { accept: ['*/*'] };
  if (host !== undefined) distinct.host = list(host);
  if (origin !== undefined) distinct.origin = list(origin);
  return { raw, distinct };
}

describe('Origin and Host corpus', () => {
  it.each(corpus)('%s', (_what, options, host, origin, expected) => {
    const check = createOriginHostCheck(options);
    const { raw, distinct } = forms(host, origin);
    for (const headers of [raw, distinct]) {
      const verdict = check(headers);
      expect(verdict.ok ? 'ok' : verdict.reason).toBe(expected);
      if (!verdict.ok) expect(verdict.status).toBe(403);
    }
  });

  it('the refusal message quotes no header value', () => {
    const verdict = createOriginHostCheck(LOOP)(['Host', 'evil.com:7330<script>']);
    expect(verdict).toEqual({ ok: false, status: 403, reason: 'host', message: 'Host not allowed' });
  });

  it.each([
    [{ allowedOrigins: ['https://app.example.com/path'] }, 'allowedOrigins: "https://app.example.com/path" is not an origin'],
    [{ allowedOrigins: ['app.example.com'] }, 'allowedOrigins: "app.example.com" is not an origin'],
    [{ allowedOrigins: ['https://user@app.example.com'] }, 'allowedOrigins: "https://user@app.example.com" is not an origin'],
    [{ allowedHosts: ['a b'] }, 'allowedHosts: "a b" is not a host name or host:port'],
    [{ allowedHosts: ['h:99999'] }, 'allowedHosts: "h:99999" is not a host name or host:port'],
  ])('refuses to compile %j', (extra, message) => {
    expect(() => createOriginHostCheck({ ...LOOP, ...extra })).toThrow(message);
  });
});

describe('isLoopback', () => {
  it.each([
    'localhost',
    'LocalHost',
    '127.0.0.1',
    '127.0.0.2',
    '127.255.255.254',
    '::1',
    '[::1]',
    '0:0:0:0:0:0:0:1',
    '[0::1]',
    '::ffff:127.0.0.1',
    '[::ffff:7f00:1]',
  ])('%s is loopback', (host) => expect(isLoopback(host)).toBe(true));

  it.each([
    '0.0.0.0',
    '::',
    '[::]',
    '10.0.0.1',
    '128.0.0.1',
    '126.255.255.255',
    'localhost.',
    'foo.localhost',
    '127.0.0.1.evil.com',
    'evil.com',
    '',
    '::2',
    '::ffff:10.0.0.1',
    '127.1',
    '[127.0.0.1]',
    '[localhost]',
    'localhost:80',
  ])('%j is not loopback', (host) => expect(isLoopback(host)).toBe(false));
});

describe('with a real Node server', () => {
  it('sees the duplicate and rebinding headers Node passes through, in rawHeaders and headersDistinct', async () => {
    const server = createServer((req, res) => {
      const check = createOriginHostCheck({ host: '127.0.0.1', port: (server.address() as AddressInfo).port });
      const a = check(req.rawHeaders);
      const b = check(req.headersDistinct);
      res.writeHead(a.ok ? 200 : a.status, { 'x-reason': a.ok ? 'ok' : a.reason, 'x-same': String(JSON.stringify(a) === JSON.stringify(b)) }).end();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as AddressInfo).port;
    const send = (head: string) =>
      new Promise<string>((resolve, reject) => {
        const socket = connect(port, '127.0.0.1', () => socket.write(`GET /mcp HTTP/1.1\r\n${head}Connection: close\r\n\r\n`));
        let text = '';
        socket.on('data', (d) => (text += String(d)));
        socket.on('end', () => resolve(text));
        socket.on('error', reject);
      });
    try {
      const status = (text: string) => [text.split('\r\n')[0], /x-reason: (\w+)/.exec(text)?.[1], /x-same: (\w+)/.exec(text)?.[1]];
      expect(status(await send(`Host: localhost:${port}\r\n`))).toEqual(['HTTP/1.1 200 OK', 'ok', 'true']);
      expect(status(await send(`Host: localhost:${port}\r\nOrigin: http://127.0.0.1:${port}\r\n`))).toEqual(['HTTP/1.1 200 OK', 'ok', 'true']);
      expect(status(await send(`Host: evil.com:${port}\r\n`))).toEqual(['HTTP/1.1 403 Forbidden', 'host', 'true']);
      expect(status(await send(`Host: localhost:${port}\r\nHost: evil.com:${port}\r\n`))).toEqual(['HTTP/1.1 403 Forbidden', 'host', 'true']);
      expect(status(await send(`Host: localhost:${port}\r\nOrigin: http://localhost:${port}\r\nOrigin: http://evil.com\r\n`))).toEqual([
        'HTTP/1.1 403 Forbidden',
        'origin',
        'true',
      ]);
      expect(status(await send(`Host: localhost:${port}\r\nOrigin: null\r\n`))).toEqual(['HTTP/1.1 403 Forbidden', 'origin', 'true']);
    } finally {
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });
});
