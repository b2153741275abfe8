import { endpointsOf } from '../support/http.js';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { HttpGatewayClient } from '../../src/gateway/client.js';
import { startLocalGateway, type Fault, type LocalGateway } from '../../src/local-gateway/index.js';

const T2I = 'vendor-a/vendor-a-v3-t2i';
const RESULT_ROUTE = 'GET /results/{token}/{name}';
const FILE_ROUTE = 'GET /files/{token}/{name}';
const logo = new URL('../../recipes/assets/logo.png', import.meta.url).pathname;

let gateway: LocalGateway;
let scratch: string;
let resultUrl: string;
let fileUrl: string;
let counter = 0;

/** A client that tries once: each fault's own failure is seen, not hidden behind a retry. */
const clientWith = (maxAttempts = 1, headersMs = 60_000) =>
  new HttpGatewayClient({
    endpoints: endpointsOf(gateway),
    apiKey: gateway.apiKey,
    retry: { maxAttempts, baseDelayMs: 1, maxDelayMs: 5 },
    timeouts: { headersMs },
  });

beforeAll(async () => {
  gateway = await startLocalGateway({ seed: 8, latencyScale: 0 });
  scratch = await mkdtemp(join(tmpdir(), 'download-faults-'));
  const client = clientWith(6);
  const submitted = await client.submit(T2I, { prompt: 'a kite' });
  if (!submitted.ok) throw new Error(submitted.error.message);
  await gateway.settle();
  const task = await client.task(submitted.value.taskId);
  if (!task.ok || !task.value.resources[0]) throw new Error('no result to download');
  resultUrl = task.value.resources[0].url;
  const uploaded = await client.upload(logo);
  if (!uploaded.ok) throw new Error(uploaded.error.message);
  fileUrl = uploaded.value.url;
  await client.close();
});
afterAll(async () => {
  await gateway.close();
  await rm(scratch, { recursive: true, force: true });
});
beforeEach(() => {
  counter++;
});

async function downloadUnder(
  fault: Omit<Fault, 'route'>,
  options: { route?: string; url?: string; maxAttempts?: number; headersMs?: number } = {},
) {
  gateway.injectFault({ ...fault, route: options.route ?? RESULT_ROUTE });
  const client = clientWith(options.maxAttempts, options.headersMs);
  const destination = join(scratch, `out-${counter}.png`);
  try {
    return { outcome: await client.download(options.url ?? resultUrl, destination, { expect: 'image' }), destination };
  } finally {
    await client.close();
  }
}

const failureOf = <T>(result: { ok: true; value: T } | { ok: false; error: unknown }) => {
  if (result.ok) throw new Error('expected a failure');
  return result.error as Record<string, unknown>;
};

/** A failed download leaves nothing behind, under its name or as a part file. */
const nothingLeft = (destination: string) => !existsSync(destination) && !existsSync(`${destination}.part`);

describe('faults on result links, through client.download', () => {
  it('status: the error status, as its reason', async () => {
    const { outcome, destination } = await downloadUnder({ kind: 'status', status: 404 });
    expect(failureOf(outcome)).toMatchObject({ reason: 'not-found', status: 404 });
    expect(nothingLeft(destination)).toBe(true);
    const server = await downloadUnder({ kind: 'status', status: 503 });
    expect(failureOf(server.outcome)).toMatchObject({ reason: 'unavailable', status: 503, retryable: true });
  });

  it('status: a 503 once is retried, and the second attempt saves the file', async () => {
    const routeRequests = () => gateway.stats().requests.by_route[RESULT_ROUTE] ?? 0;
    const before = routeRequests();
    const { outcome, destination } = await downloadUnder({ kind: 'status', status: 503 }, { maxAttempts: 3 });
    expect(outcome).toMatchObject({ ok: true, value: { path: destination, mime: 'image/png' } });
    expect(existsSync(`${destination}.part`)).toBe(false);
    // The gateway counts a request once its answer has gone (Fastify's onResponse), which can come
    // just after the client has read the whole body.
    await vi.waitFor(() => expect(routeRequests() - before).toBe(2));
  });

  it('drop-before: the connection closes with no answer', async () => {
    const { outcome, destination } = await downloadUnder({ kind: 'drop-before' });
    expect(failureOf(outcome)).toMatchObject({ reason: 'connection-dropped', retryable: true });
    expect(nothingLeft(destination)).toBe(true);
  });

  it('drop-after: the body stops halfway; neither a half file nor a part file stays', async () => {
    const { outcome, destination } = await downloadUnder({ kind: 'drop-after' });
    expect(failureOf(outcome)).toMatchObject({
      reason: 'connection-dropped',
      message: expect.stringMatching(/the download broke off/),
    });
    expect(nothingLeft(destination)).toBe(true);
  });

  it('delay: an answer held past the timeout', async () => {
    const { outcome, destination } = await downloadUnder({ kind: 'delay', delay_ms: 1500 }, { headersMs: 100 });
    expect(failureOf(outcome)).toMatchObject({ reason: 'timeout', phase: 'headers' });
    expect(nothingLeft(destination)).toBe(true);
  });

  it('malformed: HTML under the image type is not saved as an image', async () => {
    const { outcome, destination } = await downloadUnder({ kind: 'malformed-json' });
    expect(failureOf(outcome)).toMatchObject({
      reason: 'download-failed',
      message: expect.stringMatching(
        /expected image, the bytes are not a known image format though the server said image\/png/,
      ),
    });
    expect(nothingLeft(destination)).toBe(true);
  });

  it('a fault for result links leaves file links alone, and file links take their own', async () => {
    gateway.injectFault({ kind: 'status', status: 500, route: RESULT_ROUTE });
    const client = clientWith();
    const saved = await client.download(fileUrl, join(scratch, `logo-${counter}.png`), { expect: 'image' });
    expect(saved.ok).toBe(true);
    expect((await readFile(join(scratch, `logo-${counter}.png`))).equals(await readFile(logo))).toBe(true);
    await client.close();
    await fetch(`${gateway.schemaUrl}/__emulator/faults`, { method: 'DELETE' });
    const { outcome } = await downloadUnder({ kind: 'malformed-json' }, { route: FILE_ROUTE, url: fileUrl });
    expect(failureOf(outcome)).toMatchObject({ reason: 'download-failed' });
  });
});
