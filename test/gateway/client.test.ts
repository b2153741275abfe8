import { endpointsOf } from '../support/http.js';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { HttpGatewayClient, type GatewayClientOptions } from '../../src/gateway/client.js';
import { openGate, type RequestGate } from '../../src/gateway/gate.js';
import { startLocalGateway, type LocalGateway, type LocalGatewayOptions } from '../../src/local-gateway/index.js';
import { RateBudget } from '../../src/scheduler/budget.js';
import { ManualClock } from '../support/manual-clock.js';
import { requestsInFlight, runSkippingTime } from '../support/time-skipping.js';

const assets = new URL('../../recipes/assets/', import.meta.url);
const logoPath = new URL('logo.png', assets).pathname;
const videoPath = new URL('ride.mp4', assets).pathname;
const T2I = 'vendor-a/vendor-a-v3-t2i';
const SUBMIT_ROUTE = 'POST /api/v1/{provider}/{model_id}';

let gateway: LocalGateway | undefined;
let client: HttpGatewayClient | undefined;
let scratch: string;

beforeAll(async () => {
  scratch = await mkdtemp(join(tmpdir(), 'client-test-'));
});
afterAll(() => rm(scratch, { recursive: true, force: true }));
afterEach(async () => {
  await client?.close();
  await gateway?.close();
  client = undefined;
  gateway = undefined;
});

/** A gateway and a client pointed at it; quick retries on the real clock unless told otherwise. */
async function setup(gatewayOptions: LocalGatewayOptions = {}, clientOptions: Partial<GatewayClientOptions> = {}) {
  gateway = await startLocalGateway({ seed: 21, latencyScale: 0, ...gatewayOptions });
  client = new HttpGatewayClient({
    endpoints: endpointsOf(gateway),
    apiKey: gateway.apiKey,
    retry: { baseDelayMs: 1, maxDelayMs: 5 },
    ...clientOptions,
  });
  return { gateway, client };
}

const failureOf = <T>(result: { ok: true; value: T } | { ok: false; error: unknown }) => {
  if (result.ok) throw new Error(`expected a failure, got ${JSON.stringify(result.value).slice(0, 200)}`);
  return result.error as Record<string, unknown>;
};
const okValue = <T>(result: { ok: true; value: T } | { ok: false; error: { message: string } }): T => {
  if (!result.ok) throw new Error(`expected success, got ${result.error.message}`);
  return result.value;
};

describe('every endpoint', () => {
  it('reads the account, the models and a model schema', async () => {
    const { client: c } = await setup();
    expect(okValue(await c.account())).toEqual({ isValid: true, team: 'local', balanceUsd: 100 });
    const models = okValue(await c.models());
    expect(models.map((m) => [m.slug, m.type])).toEqual([
      ['vendor-a/vendor-a-v3-t2i', 'text-to-image'],
      ['vendor-b/vendor-b-2.0-mini-v2v', 'video-to-video'],
      ['vendor-b/vendor-b-5.0-lite-edit', 'image-to-image'],
    ]);
    const schema = okValue(await c.modelSchema(T2I));
    expect(schema.required).toEqual(['prompt']);
  });

  it('submits, reads the task until it ends, and downloads its outputs', async () => {
    const { client: c, gateway: gw } = await setup();
    const submission = okValue(await c.submit(T2I, { prompt: 'a kite', n: 2 }));
    expect(submission).toMatchObject({ modelId: T2I, status: 'processing' });
    await gw.settle();
    const task = okValue(await c.task(submission.taskId));
    expect(task).toMatchObject({
      taskId: submission.taskId,
      status: 'success',
      state: 'succeeded',
      metadata: { image_count: 2 },
    });
    expect(task.resources).toHaveLength(2);
    expect(task.resultExpiresAt! - task.endTime!).toBe(86_400_000);
    const saved = okValue(await c.download(task.resources[0]!.url, join(scratch, 'one.png'), { expect: 'image' }));
    expect(saved).toMatchObject({ bytes: expect.any(Number), mime: 'image/png' });
    expect((await readFile(saved.path)).subarray(1, 4).toString()).toBe('PNG');
  });

  it('reports a failed task as a successful read of a failed state', async () => {
    const { client: c, gateway: gw } = await setup({ failRate: 1 });
    const submission = okValue(await c.submit(T2I, { prompt: 'x' }));
    await gw.settle();
    const task = okValue(await c.task(submission.taskId));
    expect(task).toMatchObject({
      state: 'failed',
      error: { code: 500, message: 'Internal server error: the model could not generate an output for this input' },
    });
  });

  it('uploads, lists and deletes files', async () => {
    const { client: c } = await setup();
    const image = okValue(await c.upload(logoPath));
    const video = okValue(await c.upload(videoPath));
    expect(image).toMatchObject({ type: 'image', filename: 'logo.png', url: expect.stringMatching(/\/files\//) });
    expect(video.type).toBe('video');
    const list = okValue(await c.files({ limit: 1 }));
    expect(list).toMatchObject({ total: 2, limit: 1, offset: 0 });
    expect(list.files.map((f) => f.fileId)).toEqual([video.fileId]);
    okValue(await c.deleteFile(image.fileId));
    expect(okValue(await c.files()).files.map((f) => f.fileId)).toEqual([video.fileId]);
  });

  it('searches, fetches more than 20 URLs in batches, and reads the tool log', async () => {
    const { client: c, gateway: gw } = await setup({ rpm: 1000 });
    const search = okValue(await c.webSearch({ query: 'cargo bike design', max_results: 3 }));
    expect(search.results).toHaveLength(3);
    const urls = Array.from({ length: 23 }, (_, i) =>
      i % 2 ? `${gw.schemaUrl}/web/nope/${i}.html` : search.results[i % 3]!.url,
    );
    const fetched = okValue(await c.webFetch(urls));
    expect(fetched.results).toHaveLength(12);
    expect(fetched.failed).toHaveLength(11);
    expect(fetched.failed[0]).toEqual({ url: urls[1], error: 'HTTP 404' });
    expect(gw.stats().requests.by_route['POST /tools/v1/web-fetch']).toBe(2);
    const logs = okValue(await c.toolLogs({ limit: 10 }));
    expect((logs.logs as unknown[]).length).toBe(3);
  });

  it('speaks the three text protocols', async () => {
    const { client: c } = await setup();
    const chat = okValue(await c.llm('chat', { model: 'a/b', messages: [{ role: 'user', content: 'hello' }] }));
    expect(chat.object).toBe('chat.completion');
    const responses = okValue(await c.llm('responses', { model: 'a/b', input: 'hello' }));
    expect(responses.object).toBe('response');
    const messages = okValue(
      await c.llm('messages', { model: 'a/b', max_tokens: 20, messages: [{ role: 'user', content: 'hello' }] }),
    );
    expect(messages.type).toBe('message');
  });

  it("reads the text protocols' own error shapes: category, detail and status as on every other route", async () => {
    const { client: c } = await setup();
    const detail = 'model "gpt-4o" is not available; text model ids have the form provider/name';
    const asks = {
      chat: { model: 'gpt-4o', messages: [{ role: 'user', content: 'x' }] },
      responses: { model: 'gpt-4o', input: 'x' },
      messages: { model: 'gpt-4o', max_tokens: 20, messages: [{ role: 'user', content: 'x' }] },
    } as const;
    for (const [protocol, body] of Object.entries(asks)) {
      expect(failureOf(await c.llm(protocol as keyof typeof asks, body)), protocol).toMatchObject({
        reason: 'not-found',
        status: 404,
        category: 'Not found',
        detail,
        message: `HTTP 404: Not found: ${detail}`,
      });
    }
  });
});

describe('every failure class', () => {
  it('400: a refusal with category and detail, not retried, nothing created', async () => {
    const { client: c, gateway: gw } = await setup();
    const failure = failureOf(await c.submit(T2I, { prompt: 'x', n: 12 }));
    expect(failure).toMatchObject({
      reason: 'invalid-parameters',
      status: 400,
      category: 'Invalid parameters',
      detail: 'n must be at most 9 (got 12)',
      retryable: false,
      outcomeUnknown: false,
    });
    expect(gw.stats().requests.by_route[SUBMIT_ROUTE]).toBe(1);
  });

  it('401: a wrong key', async () => {
    const { gateway: gw } = await setup();
    client = new HttpGatewayClient({
      endpoints: { baseUrl: gw.baseUrl, toolUrl: gw.toolUrl, llmUrl: gw.llmUrl, schemaUrl: gw.schemaUrl },
      apiKey: 'wrong-key',
    });
    expect(failureOf(await client.models())).toMatchObject({
      reason: 'unauthorized',
      status: 401,
      category: 'Authentication failed',
    });
  });

  it('402: insufficient balance on a submission is a certain refusal', async () => {
    const { client: c } = await setup({ balanceUsd: 0.01 });
    expect(failureOf(await c.submit(T2I, { prompt: 'x' }))).toMatchObject({
      reason: 'insufficient-balance',
      status: 402,
      outcomeUnknown: false,
    });
  });

  it('404: an unknown task', async () => {
    const { client: c } = await setup();
    expect(failureOf(await c.task('task_000000000000000000000000'))).toMatchObject({
      reason: 'not-found',
      status: 404,
      retryable: false,
    });
  });

  it('413: the gateway refusing an upload over the team quota; and a file over the limit is refused before sending', async () => {
    const { client: c, gateway: gw } = await setup({ teamQuotaBytes: 100 });
    expect(failureOf(await c.upload(logoPath))).toMatchObject({ reason: 'payload-too-large', status: 413 });
    const big = join(scratch, 'big.png');
    const bytes = Buffer.alloc(16 * 1024 * 1024 + 1);
    (await readFile(logoPath)).copy(bytes);
    await writeFile(big, bytes);
    expect(failureOf(await c.upload(big))).toMatchObject({
      reason: 'local-file',
      message: `${big} is 16.0 MB; the upload limit is 16.0 MB`,
    });
    const notMedia = join(scratch, 'notes.png');
    await writeFile(notMedia, 'plain text');
    expect(failureOf(await c.upload(notMedia))).toMatchObject({
      reason: 'local-file',
      message: `${notMedia} is not an image, video or audio file`,
    });
    expect(failureOf(await c.upload(join(scratch, 'missing.png')))).toMatchObject({ reason: 'local-file' });
    expect(gw.stats().requests.by_route['POST /api/v1/media/files']).toBe(1);
  });

  it('429: reported with the wait, and a read retried after the reset succeeds', async () => {
    const clock = new ManualClock(Date.UTC(2026, 10, 21, 12, 0, 0));
    const { client: c, gateway: gw } = await setup(
      { rpm: 1, windowSeconds: 10, clock },
      { clock, gate: openGate, retry: { maxAttempts: 1 } },
    );
    okValue(await c.models());
    expect(failureOf(await c.models())).toMatchObject({
      reason: 'rate-limited',
      status: 429,
      retryAfterMs: 10_000,
      retryable: true,
    });
    // A gate that paces nothing but counts the requests sent and not yet answered, so that the
    // clock moves only while the client waits out the 429, never while a request is in flight.
    let unanswered = 0;
    const counting: RequestGate = {
      acquire: async () => {
        unanswered++;
        return () => unanswered--;
      },
    };
    client = new HttpGatewayClient({
      endpoints: { baseUrl: gw.baseUrl, toolUrl: gw.toolUrl, llmUrl: gw.llmUrl, schemaUrl: gw.schemaUrl },
      apiKey: gw.apiKey,
      clock,
      gate: counting,
      random: () => 0,
    });
    const start = clock.now();
    okValue(
      await runSkippingTime(clock, client.models(), {
        busy: requestsInFlight({ budget: { snapshot: () => ({ unanswered }) }, gateway: gw }),
      }),
    );
    expect(clock.now() - start).toBe(10_000);
    expect(gw.stats().rate_limited).toBe(2);
  });

  it('500: a read is retried; a submission is outcome-unknown and sent once', async () => {
    const { client: c, gateway: gw } = await setup();
    gw.injectFault({ kind: 'status', status: 500, route: 'GET /api/v1/models' });
    okValue(await c.models());
    expect(gw.stats().requests.by_route['GET /api/v1/models']).toBe(2);
    gw.injectFault({ kind: 'status', status: 500, route: SUBMIT_ROUTE });
    const failure = failureOf(await c.submit(T2I, { prompt: 'x' }));
    expect(failure).toMatchObject({
      reason: 'outcome-unknown',
      outcomeUnknown: true,
      retryable: false,
      cause: { reason: 'server-error', status: 500 },
    });
    expect(gw.stats().requests.by_route[SUBMIT_ROUTE]).toBe(1);
  });

  it('503: tool calls are retried; a submission is outcome-unknown', async () => {
    const { client: c, gateway: gw } = await setup();
    gw.injectFault({ kind: 'status', status: 503, route: 'POST /tools/v1/web-search', times: 2 });
    okValue(await c.webSearch({ query: 'solar' }));
    expect(gw.stats().requests.by_route['POST /tools/v1/web-search']).toBe(3);
    gw.injectFault({ kind: 'status', status: 503, route: SUBMIT_ROUTE });
    expect(failureOf(await c.submit(T2I, { prompt: 'x' }))).toMatchObject({
      reason: 'outcome-unknown',
      cause: { reason: 'unavailable', status: 503 },
    });
  });

  it('a 500 on a text call is not retried: it may be billed', async () => {
    const { client: c, gateway: gw } = await setup();
    gw.injectFault({ kind: 'status', status: 500, route: 'POST /llm/v1/chat/completions' });
    // Not retried by the step either: the failure says its outcome is unknown.
    expect(failureOf(await c.llm('chat', { model: 'a/b', messages: [{ role: 'user', content: 'x' }] }))).toMatchObject({
      reason: 'outcome-unknown',
      outcomeUnknown: true,
      cause: { reason: 'server-error' },
    });
    expect(gw.stats().requests.by_route['POST /llm/v1/chat/completions']).toBe(1);
  });

  it('a dropped connection after a submission was sent: outcome-unknown, exactly one submission', async () => {
    const { client: c, gateway: gw } = await setup();
    gw.injectFault({ kind: 'drop-after', route: SUBMIT_ROUTE });
    const failure = failureOf(await c.submit(T2I, { prompt: 'lost' }));
    expect(failure).toMatchObject({
      reason: 'outcome-unknown',
      outcomeUnknown: true,
      cause: { reason: 'connection-dropped' },
    });
    expect(failure.message).toMatch(
      /^the submission may or may not have been accepted \(the connection closed before the answer was complete/,
    );
    await gw.settle();
    expect(gw.stats().tasks.submitted).toEqual({ [T2I]: 1 });
    expect(gw.stats().requests.by_route[SUBMIT_ROUTE]).toBe(1);
  });

  it('a dropped connection on a read is retried', async () => {
    const { client: c, gateway: gw } = await setup();
    gw.injectFault({ kind: 'drop-before', route: 'GET /api/v1/models' });
    okValue(await c.models());
    expect(gw.stats().requests.by_route['GET /api/v1/models']).toBe(2);
  });

  // undici enforces timeouts with a resolution of about a second, so the gateway holds its answers longer.
  it('a timeout: reads retry, submissions become outcome-unknown', async () => {
    const { client: c, gateway: gw } = await setup({}, { timeouts: { headersMs: 500 } });
    gw.injectFault({ kind: 'delay', delay_ms: 2500, route: 'GET /api/v1/models' });
    okValue(await c.models());
    expect(gw.stats().faults_injected).toEqual({ delay: 1 });
    gw.injectFault({ kind: 'delay', delay_ms: 2500, route: SUBMIT_ROUTE });
    const failure = failureOf(await c.submit(T2I, { prompt: 'slow' }));
    expect(failure).toMatchObject({
      reason: 'outcome-unknown',
      cause: { reason: 'timeout', phase: 'headers', message: 'no answer within 500 ms' },
    });
    await gw.settle();
    expect(gw.stats().tasks.submitted).toEqual({ [T2I]: 1 });
  });

  it('malformed JSON: reads retry, a submission is outcome-unknown', async () => {
    const { client: c, gateway: gw } = await setup();
    gw.injectFault({ kind: 'malformed-json', route: 'GET /api/v1/models' });
    okValue(await c.models());
    gw.injectFault({ kind: 'malformed-json', route: SUBMIT_ROUTE });
    expect(failureOf(await c.submit(T2I, { prompt: 'x' }))).toMatchObject({
      reason: 'outcome-unknown',
      cause: { reason: 'malformed-response', status: 200 },
    });
    expect(gw.stats().requests.by_route[SUBMIT_ROUTE]).toBe(1);
  });

  it('a connection that never opened: a submission is retried, since nothing was sent', async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    const base = `http://127.0.0.1:${port}`;
    client = new HttpGatewayClient({
      endpoints: { baseUrl: `${base}/api/v1`, toolUrl: `${base}/tools`, llmUrl: `${base}/llm`, schemaUrl: base },
      apiKey: 'k',
      retry: { maxAttempts: 3, baseDelayMs: 1, maxDelayMs: 2 },
    });
    expect(failureOf(await client.submit(T2I, { prompt: 'x' }))).toMatchObject({
      reason: 'connection-failed',
      retryable: true,
      outcomeUnknown: false,
      message: 'could not connect (ECONNREFUSED)',
    });
  });

  it('a cancelled request ends with aborted', async () => {
    const { client: c } = await setup();
    const controller = new AbortController();
    controller.abort();
    expect(failureOf(await c.models(controller.signal))).toMatchObject({ reason: 'aborted' });
  });
});

describe('downloads', () => {
  it('stream to disk with a size cap, check the type, and never send the key', async () => {
    const seen: IncomingHttpHeaders[] = [];
    const server = createServer((request, response) => {
      seen.push(request.headers);
      if (request.url === '/big.png') {
        response.setHeader('Content-Type', 'image/png');
        response.end(Buffer.alloc(5000));
      } else if (request.url === '/liar.png') {
        response.setHeader('Content-Type', 'image/png');
        response.end(Buffer.concat([Buffer.from('%PDF-1.4\n'), Buffer.alloc(100)]));
      } else {
        response.setHeader('Content-Type', 'text/html');
        response.end('<html></html>');
      }
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const { client: c } = await setup();
    expect(
      failureOf(await c.download(`${origin}/big.png`, join(scratch, 'big.bin'), { maxBytes: 1000 })),
    ).toMatchObject({ reason: 'download-failed', message: 'the file is larger than 1000 bytes' });
    expect(failureOf(await c.download(`${origin}/page`, join(scratch, 'page.bin'), { expect: 'image' }))).toMatchObject(
      { reason: 'download-failed', message: 'expected image, the server sent text/html' },
    );
    expect(
      failureOf(await c.download(`${origin}/liar.png`, join(scratch, 'liar.png'), { expect: 'image' })),
    ).toMatchObject({ reason: 'download-failed', message: 'expected image, the bytes are application/pdf' });
    expect(seen.every((headers) => headers.authorization === undefined)).toBe(true);
    await expect(readFile(join(scratch, 'big.bin'))).rejects.toThrow();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });
});

describe('rate limits through the shared budget', () => {
  it('30 reads against 5 requests per 2-second window: no 429 after the first, none lost', async () => {
    const clock = new ManualClock(Date.UTC(2026, 10, 21, 12, 0, 0, 500));
    const budget = new RateBudget({ clock, random: () => 0.5 });
    const { client: c, gateway: gw } = await setup(
      { rpm: 5, windowSeconds: 2, clock },
      { clock, gate: budget, onRateLimit: budget.observe },
    );
    const start = clock.now();
    const reads = Promise.all(Array.from({ length: 30 }, () => c.models()));
    const results = await runSkippingTime(clock, reads, { busy: requestsInFlight({ budget, gateway: gw }) });
    expect(results.every((r) => r.ok)).toBe(true);
    expect(gw.stats().requests.by_route['GET /api/v1/models']).toBeLessThanOrEqual(31);
    expect(gw.stats().rate_limited).toBeLessThanOrEqual(1);
    expect(budget.rateLimitedCount).toBe(gw.stats().rate_limited);
    // 30 reads at 5 per window need 6 windows: done early in the sixth, 10 to 12 s after the start.
    expect(clock.now() - start).toBeGreaterThanOrEqual(9_500);
    expect(clock.now() - start).toBeLessThan(12_000);
  });
});
