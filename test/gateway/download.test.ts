import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HttpGatewayClient } from '../../src/gateway/client.js';

const logo = new URL('../../recipes/assets/logo.png', import.meta.url).pathname;
const HTML = '<!doctype html><html><body>Not found</body></html>';

let server: Server;
let origin: string;
let scratch: string;
let logoBytes: Buffer;
/** The answer of `/slow.png` while its second half is held back. */
let held: ServerResponse | undefined;

beforeAll(async () => {
  scratch = await mkdtemp(join(tmpdir(), 'download-'));
  logoBytes = await readFile(logo);
  server = createServer((request, response) => {
    response.setHeader('Content-Type', 'image/png');
    if (request.url === '/html.png') return response.end(HTML);
    if (request.url === '/logo.png') return response.end(logoBytes);
    response.setHeader('Content-Length', String(logoBytes.length));
    response.write(logoBytes.subarray(0, 100));
    held = response;
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  await rm(scratch, { recursive: true, force: true });
});

const client = () =>
  new HttpGatewayClient({
    endpoints: { baseUrl: `${origin}/api/v1`, toolUrl: origin, llmUrl: origin, schemaUrl: origin },
    apiKey: 'k',
    retry: { maxAttempts: 1 },
  });

describe('client.download checks the bytes', () => {
  it('refuses an HTML body served as image/png, and keeps nothing', async () => {
    const c = client();
    const destination = join(scratch, 'img-1.png');
    const outcome = await c.download(`${origin}/html.png`, destination, { expect: 'image' });
    expect(outcome).toMatchObject({
      ok: false,
      error: {
        reason: 'download-failed',
        message: 'expected image, the bytes are not a known image format though the server said image/png',
      },
    });
    expect(existsSync(destination)).toBe(false);
    expect(existsSync(`${destination}.part`)).toBe(false);
    await c.close();
  });

  it('saves such a body when no media type is expected', async () => {
    const c = client();
    const outcome = await c.download(`${origin}/html.png`, join(scratch, 'any.bin'));
    expect(outcome).toMatchObject({ ok: true, value: { bytes: HTML.length } });
    expect(outcome.ok && outcome.value.mime).toBeUndefined();
    await c.close();
  });

  it('accepts the bytes of a real image', async () => {
    const c = client();
    const outcome = await c.download(`${origin}/logo.png`, join(scratch, 'logo.png'), { expect: 'image' });
    expect(outcome).toMatchObject({ ok: true, value: { mime: 'image/png', bytes: logoBytes.length } });
    await c.close();
  });
});

describe('client.download writes NAME.part, then renames', () => {
  it('the final name appears only once the file is whole', async () => {
    const c = client();
    const destination = join(scratch, 'slow.png');
    const saving = c.download(`${origin}/slow.png`, destination, { expect: 'image' });
    for (let i = 0; i < 400 && !(held && existsSync(`${destination}.part`)); i++)
      await new Promise((resolve) => setTimeout(resolve, 10));
    expect(existsSync(`${destination}.part`)).toBe(true);
    expect(existsSync(destination)).toBe(false);
    held!.end(logoBytes.subarray(100));
    expect(await saving).toMatchObject({ ok: true, value: { path: destination } });
    expect((await readFile(destination)).equals(logoBytes)).toBe(true);
    expect(existsSync(`${destination}.part`)).toBe(false);
    await c.close();
  });
});
