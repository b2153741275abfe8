import { readFile } from 'node:fs/promises';
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import jpeg from 'jpeg-js';
import { PNG } from 'pngjs';
import { afterEach, describe, expect, it } from 'vitest';
import { startLocalGateway, type LocalGateway, type LocalGatewayOptions } from '../../src/local-gateway/index.js';
import { readMp4Info } from '../../src/local-gateway/media/mp4.js';
import { hasFfmpeg } from '../../src/local-gateway/media/video.js';
import { download, http, pngSize } from '../support/http.js';
import { ManualClock } from '../support/manual-clock.js';

const T2I = '/api/v1/vendor-a/vendor-a-v3-t2i';
const EDIT = '/api/v1/vendor-b/vendor-b-5.0-lite-edit';
const V2V = '/api/v1/vendor-b/vendor-b-2.0-mini-v2v';
const assets = new URL('../../recipes/assets/', import.meta.url);
// The optional dependency ships an ffmpeg, so CI always renders; elsewhere a machine without one skips.
const ffmpegAvailable = (await hasFfmpeg()) || Boolean(process.env.CI);

let gateway: LocalGateway | undefined;
afterEach(async () => {
  await gateway?.close();
  gateway = undefined;
});

async function start(options: LocalGatewayOptions) {
  gateway = await startLocalGateway({ seed: 7, latencyJitter: 0, ...options });
  return { gateway, api: http(gateway) };
}

async function upload(api: ReturnType<typeof http>, file: string, type: string): Promise<string> {
  const form = new FormData();
  form.append('file', new Blob([await readFile(new URL(file, assets))], { type }), file);
  const answer = await api.send('POST', '/api/v1/media/files', { raw: { contentType: '', data: form } });
  expect(answer.status).toBe(200);
  return answer.body.data.download_url;
}

/** Submits and waits for the task to end (latency 0, real clock). */
async function run(api: ReturnType<typeof http>, gw: LocalGateway, path: string, body: unknown) {
  const submitted = await api.post(path, body);
  expect(submitted.status, submitted.text).toBe(200);
  await gw.settle();
  return (await api.get(`/api/v1/tasks/${submitted.body.data.task_id}`)).body;
}

describe('text to image', () => {
  it.each([
    ['1k', '16:9', 1024, 576],
    ['2k', '16:9', 2048, 1152],
    ['1k', '9:16', 576, 1024],
    ['1k', '1:1', 1024, 1024],
    ['1k', '21:9', 1024, 440],
    ['2k', '3:2', 2048, 1368],
  ])('writes PNGs at %s %s as %i x %i', async (resolution, aspect_ratio, width, height) => {
    const { gateway: gw, api } = await start({ latencyScale: 0 });
    const result = await run(api, gw, T2I, { prompt: 'a red kite over dunes', resolution, aspect_ratio, n: 2 });
    expect(result.data.status).toBe('success');
    expect(result.data.result.metadata).toEqual({ image_count: 2 });
    expect(result.data.result.resources).toHaveLength(2);
    for (const resource of result.data.result.resources) {
      expect(resource).toMatchObject({ type: 'image', width, height, format: 'png', role: 'primary' });
      const file = await download(resource.url);
      expect(file.status).toBe(200);
      expect(file.type).toBe('image/png');
      expect(pngSize(file.bytes)).toEqual({ width, height });
      PNG.sync.read(file.bytes); // decodes: a real PNG, not just a header
    }
  });

  it('moves pending → processing → success on the clock, with timestamps in milliseconds', async () => {
    const clock = new ManualClock();
    const { api, gateway: gw } = await start({ clock, maxConcurrent: 1 });
    const first = await api.post(T2I, { prompt: 'one' });
    const second = await api.post(`${T2I}/async`, { prompt: 'two' });
    expect(first.body).toMatchObject({
      code: 0,
      message: 'success',
      data: { status: 'processing', model_id: 'vendor-a/vendor-a-v3-t2i' },
    });
    expect(first.body.data.get_result).toEqual({
      method: 'GET',
      url: `${gw.baseUrl}/tasks/${first.body.data.task_id}`,
    });
    expect(second.body.data.status).toBe('pending');
    const state = async (answer: typeof first) =>
      (await api.get(`/api/v1/tasks/${answer.body.data.task_id}`)).body.data.status;

    // 1 image at 1k takes 3.5 s at latency scale 1 and no jitter.
    await clock.advance(3499);
    expect(await state(first)).toBe('processing');
    expect(await state(second)).toBe('pending');
    await clock.advance(1);
    // The timer has fired; the files are being written on real I/O, so wait for that, not for time.
    await expect.poll(() => state(first)).toBe('success');
    expect(await state(second)).toBe('processing');
    const done = (await api.get(`/api/v1/tasks/${first.body.data.task_id}`)).body.data;
    expect(done.duration).toBe(3500);
    expect(done.result.extensions.end_time - done.result.extensions.submit_time).toBe(3500);
    expect(done.result_expires_at).toBe(done.result.extensions.end_time + 86_400_000);
    expect(gw.stats().tasks.max_running).toEqual({ local: 1 });
  });

  it('runs at most --max-concurrent tasks of a team at once', async () => {
    const { api, gateway: gw } = await start({ latencyScale: 0.01, maxConcurrent: 3 });
    const answers = await Promise.all(Array.from({ length: 10 }, (_, i) => api.post(T2I, { prompt: `p${i}` })));
    expect(answers.filter((a) => a.body.data.status === 'processing')).toHaveLength(3);
    expect(answers.filter((a) => a.body.data.status === 'pending')).toHaveLength(7);
    await gw.settle();
    expect(gw.stats().tasks.max_running).toEqual({ local: 3 });
    expect(gw.stats().tasks.finished).toEqual({ success: 10, failed: 0 });
  });

  it('answers 404 for a result past --result-ttl, and its files are gone', async () => {
    const clock = new ManualClock();
    const { api, gateway: gw } = await start({ clock, latencyScale: 0, resultTtlSeconds: 60 });
    const submitted = await api.post(T2I, { prompt: 'ephemeral' });
    await clock.advance(0);
    await gw.settle();
    const id = submitted.body.data.task_id;
    const result = (await api.get(`/api/v1/tasks/${id}`)).body;
    const url = result.data.result.resources[0].url;
    expect((await download(url)).status).toBe(200);
    await clock.advance(60_000);
    const expired = await api.get(`/api/v1/tasks/${id}`);
    expect(expired.status).toBe(404);
    expect(expired.body.message).toBe(
      `Not found: the result of task ${id} expired at ${new Date(result.data.result_expires_at).toISOString()}`,
    );
    expect((await download(url)).status).toBe(404);
  });

  it('ends tasks failed at --fail-rate 1, with an error, and refunds them', async () => {
    const { api, gateway: gw } = await start({ latencyScale: 0, failRate: 1 });
    const result = await run(api, gw, T2I, { prompt: 'doomed', n: 3 });
    expect(result.data.status).toBe('failed');
    expect(result.data.error).toEqual({
      code: 500,
      message: 'Internal server error: the model could not generate an output for this input',
    });
    expect(result.data.result.resources).toEqual([]);
    expect(gw.stats().balances).toEqual({ local: 100 });
    expect(gw.stats().tasks.finished).toEqual({ success: 0, failed: 1 });
  });

  it('hides one team’s tasks from another', async () => {
    const { gateway: gw } = await start({ latencyScale: 0, keys: { a: 'team-a', b: 'team-b' } });
    const api = http(gw);
    const submitted = await api.post(T2I, { prompt: 'mine' }, { key: 'a' });
    const other = await api.get(`/api/v1/tasks/${submitted.body.data.task_id}`, { key: 'b' });
    expect(other.status).toBe(404);
    expect(other.body).toEqual({ code: 404, message: `Not found: task ${submitted.body.data.task_id} does not exist` });
  });
});

describe('image editing', () => {
  it('derives the output from its inputs: the second image lands in the lower right corner', async () => {
    const { api, gateway: gw } = await start({ latencyScale: 0 });
    const hero = await run(api, gw, T2I, { prompt: 'hero', aspect_ratio: '1:1' });
    const logo = await upload(api, 'logo.png', 'image/png');
    const result = await run(api, gw, EDIT, {
      prompt: 'Place the logo',
      image: [hero.data.result.resources[0].url, logo],
      size: '1024x1024',
      output_format: 'png',
    });
    expect(result.data.status).toBe('success');
    const [resource] = result.data.result.resources;
    expect(resource).toMatchObject({ type: 'image', width: 1024, height: 1024, format: 'png' });
    const output = PNG.sync.read((await download(resource.url)).bytes);
    const logoPng = PNG.sync.read(await readFile(new URL('logo.png', assets)));
    const pixel = (png: PNG, x: number, y: number) => [
      ...png.data.subarray((y * png.width + x) * 4, (y * png.width + x) * 4 + 3),
    ];
    const logoCentre = pixel(logoPng, 128, 128);
    // The lower-right inset is a quarter of the side (256 px) with a margin of an eighth of that (32 px).
    const insetCentre = 1024 - 32 - 128;
    expect(pixel(output, insetCentre, insetCentre)).toEqual(logoCentre);
    expect(pixel(output, insetCentre - 100, insetCentre - 100)).toEqual(pixel(logoPng, 28, 28));
    expect(pixel(output, 100, 100)).not.toEqual(logoCentre);
  });

  it('writes JPEG by default at the default size, and 3K when asked', async () => {
    const { api, gateway: gw } = await start({ latencyScale: 0 });
    const logo = await upload(api, 'logo.png', 'image/png');
    const byDefault = await run(api, gw, EDIT, { prompt: 'warmer', image: [logo] });
    const jpegFile = await download(byDefault.data.result.resources[0].url);
    expect(jpegFile.type).toBe('image/jpeg');
    const decoded = jpeg.decode(jpegFile.bytes);
    expect([decoded.width, decoded.height]).toEqual([2048, 2048]);
    const big = await run(api, gw, EDIT, { prompt: 'warmer', image: [logo], size: '3K', output_format: 'png' });
    expect(big.data.result.resources[0]).toMatchObject({ width: 3072, height: 3072 });
  });

  it('fails the task when an input image cannot be downloaded, and refunds it', async () => {
    const { api, gateway: gw } = await start({ latencyScale: 0 });
    const result = await run(api, gw, EDIT, {
      prompt: 'x',
      image: [`${gw.schemaUrl}/files/00000000000000000000000000000000/gone.png`],
    });
    expect(result.data.status).toBe('failed');
    expect(result.data.error).toEqual({
      code: 400,
      message: 'Invalid parameters: image[0] could not be downloaded: 404 (the link expired or never existed)',
    });
    expect(gw.stats().balances.local).toBe(100);
  });

  it('returns a batch in auto mode and refunds the images it did not make', async () => {
    const { api, gateway: gw } = await start({ latencyScale: 0 });
    const logo = await upload(api, 'logo.png', 'image/png');
    const result = await run(api, gw, EDIT, {
      prompt: 'a series of four seasons',
      image: [logo],
      size: '1024x1024',
      sequential_image_generation: 'auto',
      sequential_image_generation_max_images: 4,
    });
    const count = result.data.result.metadata.image_count;
    expect(count).toBeGreaterThanOrEqual(1);
    expect(count).toBeLessThanOrEqual(4);
    expect(result.data.result.resources).toHaveLength(count);
    expect(gw.stats().balances.local).toBeCloseTo(100 - 0.04 * count, 4);
  });
});

describe('video to video', () => {
  it('passes the first input through as a playable MP4 without ffmpeg', async () => {
    const { api, gateway: gw } = await start({ latencyScale: 0, useFfmpeg: false });
    const video = await upload(api, 'ride.mp4', 'video/mp4');
    const result = await run(api, gw, V2V, {
      video_urls: [video],
      prompt: 'watercolour',
      duration: 5,
      return_last_frame: true,
    });
    expect(result.data.status).toBe('success');
    const [clip, frame] = result.data.result.resources;
    expect(clip).toMatchObject({ type: 'video', format: 'mp4', role: 'primary', width: 320, height: 180, duration: 4 });
    expect(frame).toMatchObject({ type: 'image', format: 'png', role: 'cover', width: 320, height: 180 });
    expect(result.data.result.metadata).toMatchObject({ video_count: 1, render: 'passthrough' });
    const file = await download(clip.url);
    expect(file.type).toBe('video/mp4');
    expect(file.bytes.equals(await readFile(new URL('ride.mp4', assets)))).toBe(true);
    expect(pngSize((await download(frame.url)).bytes)).toEqual({ width: 320, height: 180 });
  });

  it.runIf(ffmpegAvailable)('honours duration, resolution and ratio with ffmpeg', async () => {
    const { api, gateway: gw } = await start({ latencyScale: 0 });
    const video = await upload(api, 'ride.mp4', 'video/mp4');
    const result = await run(api, gw, V2V, {
      video_urls: [video],
      duration: 6,
      resolution: '480p',
      ratio: '1:1',
      generate_audio: false,
    });
    const [clip] = result.data.result.resources;
    expect(clip).toMatchObject({ width: 480, height: 480, duration: 6 });
    const info = readMp4Info((await download(clip.url)).bytes);
    expect(info).toEqual({ durationSeconds: 6, width: 480, height: 480, hasAudio: false });
    expect(result.data.result.metadata.render).toBe('transcoded');
  });

  it('fails the task when the first video is not an MP4', async () => {
    const { api, gateway: gw } = await start({ latencyScale: 0 });
    const notVideo = await upload(api, 'logo.png', 'image/png');
    const result = await run(api, gw, V2V, { video_urls: [notVideo] });
    expect(result.data.error).toEqual({
      code: 400,
      message: 'Invalid parameters: video_urls[0] is not a readable MP4 video',
    });
  });
});

describe('webhooks', () => {
  async function receiver(statuses: number[]) {
    const calls: Array<{ headers: IncomingMessage['headers']; body: any }> = [];
    const server = createServer((request, response) => {
      let data = '';
      request.on('data', (chunk) => (data += chunk));
      request.on('end', () => {
        calls.push({ headers: request.headers, body: JSON.parse(data) });
        response.statusCode = statuses[calls.length - 1] ?? 200;
        response.end();
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook/secret-token`;
    return { calls, url, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
  }

  it('POSTs the result body with X-Webhook-Task-Id when the task ends', async () => {
    const hook = await receiver([]);
    const { api, gateway: gw } = await start({ latencyScale: 0 });
    const submitted = await api.post(T2I, { prompt: 'hooked' }, { headers: { 'X-Webhook-URL': hook.url } });
    await gw.settle();
    await expect.poll(() => gw.stats().webhooks.delivered).toBe(1);
    const id = submitted.body.data.task_id;
    expect(hook.calls).toHaveLength(1);
    expect(hook.calls[0]!.headers['x-webhook-task-id']).toBe(id);
    expect(hook.calls[0]!.headers['content-type']).toBe('application/json');
    expect(hook.calls[0]!.body).toEqual((await api.get(`/api/v1/tasks/${id}`)).body);
    await hook.close();
  });

  it('retries a non-2xx answer 3 times with backoff, then gives up', async () => {
    const hook = await receiver([500, 502, 404, 500]);
    const clock = new ManualClock();
    const { api, gateway: gw } = await start({ clock, latencyScale: 0 });
    await api.post(T2I, { prompt: 'hooked' }, { headers: { 'X-Webhook-URL': hook.url } });
    await clock.advance(0);
    await gw.settle();
    await expect.poll(() => hook.calls.length).toBe(1);
    for (const [wait, calls] of [
      [1000, 2],
      [4000, 3],
      [16000, 4],
    ] as const) {
      // Two timers wait: the result's expiry and the next webhook attempt.
      await expect.poll(() => clock.pending()).toBe(2);
      await clock.advance(wait - 1);
      expect(clock.pending()).toBe(2);
      await clock.advance(1);
      await expect.poll(() => hook.calls.length).toBe(calls);
    }
    await expect.poll(() => gw.stats().webhooks).toEqual({ delivered: 0, failed: 1, attempts: 4 });
    await hook.close();
  });
});
