import { spawnSync } from 'node:child_process';
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startLocalGateway, type LocalGateway, type LocalGatewayOptions } from '../../src/local-gateway/index.js';
import { download, http } from '../support/http.js';
import { ManualClock } from '../support/manual-clock.js';

const T2I = '/api/v1/vendor-a/vendor-a-v3-t2i';
const EDIT = '/api/v1/vendor-b/vendor-b-5.0-lite-edit';
const logo = new URL('../../recipes/assets/logo.png', import.meta.url);

let dataDir: string;
let clock: ManualClock;
const open: LocalGateway[] = [];

beforeEach(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'gateway-state-'));
  clock = new ManualClock();
});
afterEach(async () => {
  for (const gateway of open.splice(0)) await gateway.close();
  await rm(dataDir, { recursive: true, force: true });
});

/** A gateway on the test's data folder; every one has the same seed, so ids drawn would collide unless checked. */
async function start(options: LocalGatewayOptions = {}) {
  const gateway = await startLocalGateway({ seed: 11, latencyJitter: 0, clock, dataDir, ...options });
  open.push(gateway);
  return { gateway, api: http(gateway) };
}

/** Stops a gateway as a process exit would: whatever it was doing is left as it was. */
async function stop(gateway: LocalGateway) {
  open.splice(open.indexOf(gateway), 1);
  await gateway.close();
}

/** Lets the tasks of latency 0 end: their timers fire at once on the clock, their files take real I/O. */
async function ended(gateway: LocalGateway) {
  await clock.advance(0);
  await gateway.settle();
}

async function uploadLogo(api: ReturnType<typeof http>) {
  const form = new FormData();
  form.append('file', new Blob([await readFile(logo)], { type: 'image/png' }), 'logo.png');
  const answer = await api.send('POST', '/api/v1/media/files', { raw: { contentType: '', data: form } });
  expect(answer.status, answer.text).toBe(200);
  return answer.body.data;
}

describe('a gateway on a data folder of its own', () => {
  it('goes on with a task that was running when the previous gateway stopped, with links at its own address', async () => {
    const first = await start();
    const submitted = await first.api.post(T2I, { prompt: 'a kite' });
    const taskId: string = submitted.body.data.task_id;
    // 3.5 s of processing at scale 1; 1 s of it passes before the stop.
    await clock.advance(1000);
    expect((await first.api.get(`/api/v1/tasks/${taskId}`)).body.data.status).toBe('processing');
    await stop(first.gateway);

    const second = await start();
    expect(second.gateway.baseUrl).not.toBe(first.gateway.baseUrl);
    expect((await second.api.get(`/api/v1/tasks/${taskId}`)).body.data.status).toBe('processing');
    await clock.advance(2499);
    expect((await second.api.get(`/api/v1/tasks/${taskId}`)).body.data.status).toBe('processing');
    await clock.advance(1);
    await second.gateway.settle();
    const ended = (await second.api.get(`/api/v1/tasks/${taskId}`)).body.data;
    expect(ended.status).toBe('success');
    expect(ended.duration).toBe(3500);
    const [resource] = ended.result.resources;
    expect(resource.url.startsWith(second.gateway.schemaUrl)).toBe(true);
    const file = await download(resource.url);
    expect(file.status).toBe(200);
    expect(file.type).toBe('image/png');

    // A new task on the same seed draws the first task's id first; it gets another.
    const next = await second.api.post(T2I, { prompt: 'another kite' });
    expect(next.body.data.task_id).not.toBe(taskId);
    await clock.advance(3500);
    await second.gateway.settle();
  });

  it('ends a task whose time ran out while no gateway was up at its start plus its processing time, not at the restart', async () => {
    const first = await start();
    const submitted = await first.api.post(T2I, { prompt: 'a kite' });
    const taskId: string = submitted.body.data.task_id;
    await clock.advance(1000);
    await stop(first.gateway);
    // A minute with no gateway up: a hosted gateway's task would have ended 2.5 s into it.
    await clock.advance(60_000);

    const second = await start();
    await second.api.get(`/api/v1/tasks/${taskId}`);
    await clock.advance(0);
    await second.gateway.settle();
    const ended = (await second.api.get(`/api/v1/tasks/${taskId}`)).body.data;
    expect(ended.status).toBe('success');
    // The duration a client learns the model's time from: the processing time, not the downtime.
    expect(ended.duration).toBe(3500);
    const { start_time, end_time } = ended.result.extensions;
    expect(end_time - start_time).toBe(3500);
  });

  it('serves an ended task, its files and an upload given out at the old address, and takes them as inputs', async () => {
    const first = await start({ latencyScale: 0 });
    const upload = await uploadLogo(first.api);
    const submitted = await first.api.post(T2I, { prompt: 'a kite' });
    await ended(first.gateway);
    const taskId = submitted.body.data.task_id;
    const oldResult = (await first.api.get(`/api/v1/tasks/${taskId}`)).body.data.result.resources[0].url;
    const oldBytes = (await download(oldResult)).bytes;
    await stop(first.gateway);

    const second = await start({ latencyScale: 0 });
    const answer = (await second.api.get(`/api/v1/tasks/${taskId}`)).body.data;
    expect(answer.status).toBe('success');
    const newResult = answer.result.resources[0].url;
    expect(newResult).toBe(oldResult.replace(first.gateway.schemaUrl, second.gateway.schemaUrl));
    expect((await download(newResult)).bytes.equals(oldBytes)).toBe(true);

    const listed = (await second.api.get('/api/v1/media/files')).body.data;
    expect(listed.total).toBe(1);
    expect(listed.files[0]).toMatchObject({ file_id: upload.file_id, size: upload.size, filename: 'logo.png' });
    expect(listed.files[0].download_url).toBe(
      upload.download_url.replace(first.gateway.schemaUrl, second.gateway.schemaUrl),
    );

    // Links from before the stop point at a port nobody listens on now; the gateway knows them as its own.
    const edit = await second.api.post(EDIT, { prompt: 'frame it', image: [oldResult, upload.download_url] });
    expect(edit.status, edit.text).toBe(200);
    await ended(second.gateway);
    const edited = (await second.api.get(`/api/v1/tasks/${edit.body.data.task_id}`)).body.data;
    expect(edited.status, JSON.stringify(edited.error)).toBe('success');
  });

  it('forgets, at start, the tasks, results and uploads that expired while no gateway ran', async () => {
    const first = await start({ latencyScale: 0, resultTtlSeconds: 3600, fileTtlSeconds: 7200 });
    const upload = await uploadLogo(first.api);
    const submitted = await first.api.post(T2I, { prompt: 'a kite' });
    await ended(first.gateway);
    await stop(first.gateway);

    await clock.advance(3600_000);
    const second = await start({ latencyScale: 0, resultTtlSeconds: 3600, fileTtlSeconds: 7200 });
    const gone = await second.api.get(`/api/v1/tasks/${submitted.body.data.task_id}`);
    expect(gone.status).toBe(404);
    expect((await second.api.get('/api/v1/media/files')).body.data.files.map((f: any) => f.file_id)).toEqual([
      upload.file_id,
    ]);
    expect(await readdir(join(dataDir, 'results'))).toEqual([]);
    await stop(second.gateway);

    await clock.advance(3600_000);
    const third = await start({ latencyScale: 0, resultTtlSeconds: 3600, fileTtlSeconds: 7200 });
    expect((await third.api.get('/api/v1/media/files')).body.data.total).toBe(0);
    expect(await readdir(join(dataDir, 'files'))).toEqual([]);
    for (const kind of ['tasks', 'files', 'blobs'])
      expect(await readdir(join(dataDir, 'records', kind)).catch(() => [])).toEqual([]);
  });

  it('removes, at start, the half-written records a killed gateway left, and keeps whole ones', async () => {
    const first = await start({ latencyScale: 0 });
    const submitted = await first.api.post(T2I, { prompt: 'a kite' });
    await ended(first.gateway);
    await stop(first.gateway);
    const tasks = join(dataDir, 'records', 'tasks');
    const killed = spawnSync(process.execPath, ['-e', '']).pid!;
    const leftover = `${submitted.body.data.task_id}.json.${killed}.0123456789ab.tmp`;
    await writeFile(join(tasks, leftover), '{"id":"task_');
    await mkdir(join(dataDir, 'records', 'files'), { recursive: true });
    await writeFile(join(dataDir, 'records', 'files', `file_x.json.${killed}.0123456789ab.tmp`), '{');

    const second = await start({ latencyScale: 0 });
    expect(await readdir(tasks)).toEqual([`${submitted.body.data.task_id}.json`]);
    expect(await readdir(join(dataDir, 'records', 'files'))).toEqual([]);
    const task = await second.api.get(`/api/v1/tasks/${submitted.body.data.task_id}`);
    expect(task.body.data.status).toBe('success');
  });

  it('keeps nothing in a temporary folder of its own', async () => {
    const gateway = await startLocalGateway({ seed: 11, latencyScale: 0 });
    open.push(gateway);
    await uploadLogo(http(gateway));
    await stop(gateway);
    await expect(readdir(gateway.dataDir)).rejects.toMatchObject({ code: 'ENOENT' });
  });
});
