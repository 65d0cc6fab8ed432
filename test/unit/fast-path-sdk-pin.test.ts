// Pins what the upstream fast path relies on in the shipped SDK: the Client's response hook and the error codes translate() reads.
import { Client, ProtocolError, SdkError, SdkErrorCode, SdkHttpError } from '@modelcontextprotocol/client';
import { describe, expect, it } from 'vitest';

describe('the SDK surface the fast path and the lean HTTP client rely on', () => {
  it('the Client dispatches answers through an overridable _onresponse', () => {
    const client = new Client({ name: 'pin', version: '1.0.0' });
    expect(typeof (client as unknown as { _onresponse?: unknown })._onresponse).toBe('function');
  });

  it('error codes and shapes are those Upstream.translate and the version probe read', () => {
    expect(SdkErrorCode.RequestTimeout).toBe('REQUEST_TIMEOUT');
    expect(SdkErrorCode.ConnectionClosed).toBe('CONNECTION_CLOSED');
    expect(SdkErrorCode.NotConnected).toBe('NOT_CONNECTED');
    // The fast path builds JSON-RPC errors with the same factory as the SDK's _onresponse, not-found
    // mapping included (SDK 2.x: -32002 becomes ResourceNotFoundError with the 2026 code).
    expect(ProtocolError.fromError(-32603, 'boom', { a: 1 })).toMatchObject({ code: -32603, data: { a: 1 } });
    expect(ProtocolError.fromError(-32002, 'Resource not found', { uri: 'x' })).toMatchObject({ code: -32602, data: { uri: 'x' } });
    const http = new SdkHttpError(SdkErrorCode.ClientHttpNotImplemented, 'Error POSTing to endpoint: gone', {
      status: 404,
      statusText: 'Not Found',
      text: 'gone',
    });
    expect(http).toBeInstanceOf(SdkError);
    expect(http.status).toBe(404);
  });
});
