import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { DEFAULT_TIMEOUTS, Transport } from '../../src/gateway/transport.js';

// A server that declares a body's length, sends the first bytes of it, and drops the connection:
// what a gateway behind a failing proxy can do, and what the local gateway never does.
let server: Server | undefined;
let transport: Transport | undefined;
afterEach(async () => {
  await transport?.close();
  await new Promise((resolve) => (server ? server.close(resolve) : resolve(undefined)));
});

async function cutShort(declared: number, sent: string): Promise<string> {
  server = createServer((_request, response) => {
    response.writeHead(200, { 'content-length': String(declared), 'content-type': 'application/json' });
    response.write(sent, () => setImmediate(() => response.socket?.destroy()));
  });
  await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
}

describe('Transport.readText', () => {
  it('answers a body cut short of its declared length as a dropped connection, not a short text', async () => {
    const url = await cutShort(100, '{"status":');
    transport = new Transport(DEFAULT_TIMEOUTS);
    const sent = await transport.send({ method: 'GET', url, headers: {} });
    if (!sent.ok) throw new Error(sent.error.message);
    const text = await transport.readText(sent.value, 1024);
    expect(text.ok).toBe(false);
    expect(!text.ok && text.error.reason).toBe('connection-dropped');
  });

  it('refuses a body declared larger than the limit, read as a stream up to the limit', async () => {
    const url = await cutShort(4096, 'x'.repeat(4096));
    transport = new Transport(DEFAULT_TIMEOUTS);
    const sent = await transport.send({ method: 'GET', url, headers: {} });
    if (!sent.ok) throw new Error(sent.error.message);
    const text = await transport.readText(sent.value, 1024);
    expect(!text.ok && text.error.message).toBe('the answer was larger than 1024 bytes');
  });
});
