import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startLocalGateway, type LocalGateway } from '../../src/local-gateway/index.js';
import { http } from '../support/http.js';
import { ManualClock } from '../support/manual-clock.js';

const T2I = '/api/v1/vendor-a/vendor-a-v3-t2i';
const EDIT = '/api/v1/vendor-b/vendor-b-5.0-lite-edit';
const V2V = '/api/v1/vendor-b/vendor-b-2.0-mini-v2v';

describe('auth, account endpoints and error bodies', () => {
  let gateway: LocalGateway;
  let api: ReturnType<typeof http>;

  beforeAll(async () => {
    // The clock never moves here: tasks stay in flight, so no refund races the balance checks.
    gateway = await startLocalGateway({
      keys: { 'key-a': 'alpha', 'key-b': 'beta', 'key-poor': 'poor' },
      rpm: 1000,
      seed: 1,
      balanceUsd: 1,
      clock: new ManualClock(),
    });
    api = http(gateway);
  });
  afterAll(() => gateway.close());

  it('validates a key and reports its team', async () => {
    const answer = await api.get('/api/v1/apikey/validate', { key: 'key-a' });
    expect(answer.status).toBe(200);
    expect(answer.body).toEqual({ code: 0, message: 'success', data: { is_valid: true, team: 'alpha' } });
  });

  it.each([
    ['no Authorization header', null, 'Authentication failed: send the header "Authorization: Bearer <API key>"'],
    ['an unknown key', 'nope', 'Authentication failed: the API key is not valid or not active'],
  ])('answers 401 for %s on every authenticated endpoint', async (_what, key, message) => {
    for (const [method, path] of [
      ['GET', '/api/v1/apikey/validate'],
      ['GET', '/api/v1/team/balance'],
      ['GET', '/api/v1/models'],
      ['POST', T2I],
      ['GET', '/api/v1/tasks/task_000000000000000000000000'],
      ['GET', '/api/v1/media/files'],
      ['POST', '/api/v1/media/files'],
      ['DELETE', '/api/v1/media/files/file_x'],
      ['POST', '/tools/v1/web-search'],
      ['POST', '/tools/v1/web-fetch'],
      ['GET', '/tools/v1/logs'],
      ['POST', '/llm/v1/chat/completions'],
      ['POST', '/llm/v1/responses'],
      ['POST', '/llm/v1/messages'],
    ] as const) {
      const answer = await api.send(method, path, { key, body: method === 'POST' ? {} : undefined });
      expect(answer.status, `${method} ${path}`).toBe(401);
      // The text endpoints answer in their protocol's own public error shape, which the official SDKs read.
      const body = path.endsWith('/messages')
        ? { type: 'error', error: { type: 'authentication_error', message } }
        : path.startsWith('/llm/')
          ? { error: { message, type: 'invalid_request_error', param: null, code: 'invalid_api_key' } }
          : { code: 401, message };
      expect(answer.body, `${method} ${path}`).toEqual(body);
      expect(answer.headers.get('x-ratelimit-limit')).toBeNull();
    }
  });

  it('accepts x-api-key on the messages endpoint, as messages-style clients send it', async () => {
    const answer = await api.post(
      '/llm/v1/messages',
      { model: 'a/b', max_tokens: 50, messages: [{ role: 'user', content: 'hi' }] },
      { key: null, headers: { 'x-api-key': 'key-a' } },
    );
    expect(answer.status).toBe(200);
  });

  it('reads the team balance with 4 decimals and charges each task', async () => {
    const before = await api.get('/api/v1/team/balance', { key: 'key-b' });
    expect(before.body).toEqual({ code: 0, message: 'success', data: { balance: 1, currency: 'USD' } });
    const submitted = await api.post(T2I, { prompt: 'a lighthouse', n: 2 }, { key: 'key-b' });
    expect(submitted.status).toBe(200);
    const after = await api.get('/api/v1/team/balance', { key: 'key-b' });
    expect(after.body.data.balance).toBe(0.94);
    // Another team's balance is untouched.
    expect((await api.get('/api/v1/team/balance', { key: 'key-a' })).body.data.balance).toBe(1);
  });

  it('answers 402 when a task would take the balance below zero, and charges nothing', async () => {
    const video = { video_urls: ['https://example.com/a.mp4'], duration: 15 };
    expect((await api.post(V2V, video, { key: 'key-poor' })).status).toBe(200);
    const answer = await api.post(V2V, video, { key: 'key-poor' });
    expect(answer.status).toBe(402);
    expect(answer.body).toEqual({
      code: 402,
      message: 'Insufficient balance: this task costs $0.9000 and the team balance is $0.1000',
    });
    expect((await api.get('/api/v1/team/balance', { key: 'key-poor' })).body.data.balance).toBe(0.1);
    expect(gateway.stats().tasks.submitted['vendor-b/vendor-b-2.0-mini-v2v']).toBe(1);
  });

  it('lists the active models under "models"', async () => {
    const answer = await api.get('/api/v1/models', { key: 'key-a' });
    expect(answer.status).toBe(200);
    expect(answer.body.models).toEqual([
      {
        slug: 'vendor-a/vendor-a-v3-t2i',
        type: 'text-to-image',
        docs_url: expect.stringMatching(/^https:\/\//),
        description: expect.any(String),
      },
      {
        slug: 'vendor-b/vendor-b-2.0-mini-v2v',
        type: 'video-to-video',
        docs_url: expect.stringMatching(/^https:\/\//),
        description: expect.any(String),
      },
      {
        slug: 'vendor-b/vendor-b-5.0-lite-edit',
        type: 'image-to-image',
        docs_url: expect.stringMatching(/^https:\/\//),
        description: expect.any(String),
      },
    ]);
  });

  it('serves each model schema without a key, in the decided envelope', async () => {
    const answer = await api.get('/models/vendor-b/vendor-b-5.0-lite-edit/api_schema', { key: null });
    expect(answer.status).toBe(200);
    const content = answer.body.post.requestBody.content['application/json'];
    expect(answer.body.post.summary).toBe('Image editing (reasoning-enhanced)');
    expect(content.schema.required).toEqual(['prompt', 'image']);
    expect(content.schema.properties.sequential_image_generation_max_images).toMatchObject({
      minimum: 1,
      maximum: 15,
      default: 15,
    });
    expect(content.examples.example1.value.output_format).toBe('png');
    expect((await api.get('/models/vendor-z/nothing/api_schema', { key: null })).body).toEqual({
      code: 404,
      message: 'Not found: model vendor-z/nothing has no published schema',
    });
  });

  describe('400 names the field and the bound it broke', () => {
    it.each([
      [T2I, { prompt: '' }, 'prompt must be at least 1 characters long (got 0)'],
      [T2I, { prompt: 'x'.repeat(2501) }, 'prompt must be at most 2500 characters long (got 2501)'],
      [T2I, {}, 'prompt is required'],
      [T2I, { prompt: 'a', n: 10 }, 'n must be at most 9 (got 10)'],
      [T2I, { prompt: 'a', n: 0 }, 'n must be at least 1 (got 0)'],
      [T2I, { prompt: 'a', n: 1.5 }, 'n must be of type integer (got 1.5)'],
      [
        T2I,
        { prompt: 'a', aspect_ratio: '5:4' },
        'aspect_ratio must be one of 16:9, 9:16, 1:1, 4:3, 3:4, 3:2, 2:3, 21:9 (got "5:4")',
      ],
      [T2I, { prompt: 'a', resolution: '4k' }, 'resolution must be one of 1k, 2k (got "4k")'],
      [T2I, { prompt: 'a', aspect: '1:1' }, 'aspect is not a field of this model'],
      [EDIT, { prompt: 'a' }, 'image is required'],
      [EDIT, { prompt: 'a', image: [] }, 'image must have at least 1 items (got 0)'],
      [
        EDIT,
        { prompt: 'a', image: Array(15).fill('https://x.test/a.png') },
        'image must have at most 14 items (got 15)',
      ],
      [EDIT, { prompt: 'a', image: ['not a url'] }, 'image[0] must be a URL (got "not a url")'],
      [
        EDIT,
        { prompt: 'a', image: ['https://x.test/a.png'], size: '5000x5000' },
        'size must be WIDTHxHEIGHT with each side 1024 to 4096, or 2K (2048x2048) or 3K (3072x3072). (got "5000x5000")',
      ],
      [
        EDIT,
        { prompt: 'a', image: ['https://x.test/a.png'], sequential_image_generation_max_images: 16 },
        'sequential_image_generation_max_images must be at most 15 (got 16)',
      ],
      [
        EDIT,
        { prompt: 'a', image: ['https://x.test/a.png'], output_format: 'webp' },
        'output_format must be one of jpeg, png (got "webp")',
      ],
      [V2V, { video_urls: ['https://x.test/a.mp4'], duration: 16 }, 'duration must be at most 15 (got 16)'],
      [
        V2V,
        { video_urls: ['https://x.test/a.mp4'], seed: 4294967296 },
        'seed must be at most 4294967295 (got 4294967296)',
      ],
      [
        V2V,
        { video_urls: ['https://x.test/a.mp4'], execution_expires_after: 60 },
        'execution_expires_after must be at least 3600 (got 60)',
      ],
      [
        V2V,
        {
          video_urls: ['https://x.test/a.mp4', 'https://x.test/b.mp4', 'https://x.test/c.mp4', 'https://x.test/d.mp4'],
        },
        'video_urls must have at most 3 items (got 4)',
      ],
      [
        V2V,
        { video_urls: ['https://x.test/a.mp4'], resolution: '1080p' },
        'resolution must be one of 480p, 720p (got "1080p")',
      ],
    ])('%s %j', async (path, body, detail) => {
      const answer = await api.post(path, body, { key: 'key-a' });
      expect(answer.status).toBe(400);
      expect(answer.body).toEqual({ code: 400, message: `Invalid parameters: ${detail}` });
    });

    it('names every problem at once', async () => {
      const answer = await api.post(T2I, { n: 12, resolution: '8k' }, { key: 'key-a' });
      expect(answer.body.message).toBe(
        'Invalid parameters: prompt is required; resolution must be one of 1k, 2k (got "8k"); n must be at most 9 (got 12)',
      );
    });
  });

  describe('bad input never crashes it', () => {
    it('answers malformed JSON with 400', async () => {
      const answer = await api.send('POST', T2I, {
        key: 'key-a',
        raw: { contentType: 'application/json', data: '{"prompt": "a",' },
      });
      expect(answer.status).toBe(400);
      expect(answer.body.code).toBe(400);
      expect(answer.body.message).toMatch(/^Invalid parameters: the body is not valid JSON/);
    });

    it('answers a wrong content type with 400', async () => {
      const answer = await api.send('POST', T2I, {
        key: 'key-a',
        raw: { contentType: 'text/plain', data: 'prompt=a' },
      });
      expect(answer.status).toBe(400);
      expect(answer.body).toEqual({
        code: 400,
        message: 'Invalid parameters: Content-Type must be application/json (got text/plain)',
      });
    });

    it('answers a JSON body that is not an object with 400', async () => {
      const answer = await api.send('POST', T2I, {
        key: 'key-a',
        raw: { contentType: 'application/json', data: '[1,2]' },
      });
      expect(answer.body).toEqual({
        code: 400,
        message: 'Invalid parameters: the body must be of type object (got [1,2])',
      });
    });

    it('answers a body over 32 MiB with 413', async () => {
      const answer = await api.send('POST', T2I, {
        key: 'key-a',
        raw: { contentType: 'application/json', data: `{"prompt":"${'x'.repeat(33 * 1024 * 1024)}"}` },
      });
      expect(answer.status).toBe(413);
      expect(answer.body).toEqual({ code: 413, message: 'Payload too large: the body is larger than 33554432 bytes' });
    });

    it('rejects prototype keys in JSON', async () => {
      const answer = await api.send('POST', T2I, {
        key: 'key-a',
        raw: { contentType: 'application/json', data: '{"prompt":"a","__proto__":{"n":99}}' },
      });
      expect(answer.status).toBe(400);
      expect(answer.body.code).toBe(400);
    });

    it.each([
      '../../etc/passwd',
      '%2e%2e%2fetc',
      `task_${'f'.repeat(300)}`,
      "task_'; DROP TABLE",
      '%00',
      'task_ZZZZ',
      '🙂',
    ])('answers odd task id %s with 404', async (id) => {
      const answer = await api.get(`/api/v1/tasks/${encodeURIComponent(id)}`, { key: 'key-a' });
      expect(answer.status).toBe(404);
      expect(answer.body.code).toBe(404);
      expect(answer.body.message).toMatch(/^Not found: /);
    });

    it('answers an unknown model and an unknown route with 404', async () => {
      expect((await api.post('/api/v1/vendor-z/model-x', { prompt: 'a' }, { key: 'key-a' })).body).toEqual({
        code: 404,
        message: 'Not found: model vendor-z/model-x is not available; GET /api/v1/models lists the active models',
      });
      expect((await api.get('/api/v1/nothing/here/at/all', { key: 'key-a' })).body).toEqual({
        code: 404,
        message: 'Not found: no endpoint GET /api/v1/nothing/here/at/all',
      });
    });

    it('answers an unknown text route in the shape its protocol reads: Messages under /messages/, else Chat Completions', async () => {
      // An Anthropic SDK calls count_tokens and batches under the Messages path; the gateway has neither.
      expect((await api.post('/llm/v1/messages/count_tokens', {}, { key: 'key-a' })).body).toEqual({
        type: 'error',
        error: { type: 'not_found_error', message: 'Not found: no endpoint POST /llm/v1/messages/count_tokens' },
      });
      expect((await api.post('/llm/v1/embeddings', {}, { key: 'key-a' })).body).toEqual({
        error: {
          message: 'Not found: no endpoint POST /llm/v1/embeddings',
          type: 'invalid_request_error',
          param: null,
          code: 'not_found',
        },
      });
    });

    it('answers a bad X-Webhook-URL with 400 before charging', async () => {
      const answer = await api.post(
        T2I,
        { prompt: 'a' },
        { key: 'key-a', headers: { 'X-Webhook-URL': 'ftp://example.com/hook' } },
      );
      expect(answer.body).toEqual({
        code: 400,
        message: 'Invalid parameters: X-Webhook-URL must be an absolute http or https URL of at most 2048 characters',
      });
    });

    it('keeps serving after all of the above', async () => {
      expect((await api.get('/api/v1/apikey/validate', { key: 'key-a' })).status).toBe(200);
    });
  });
});
