import { readFile } from 'node:fs/promises';
import { afterEach, describe, expect, it } from 'vitest';
import { startLocalGateway, type LocalGateway, type LocalGatewayOptions } from '../../src/local-gateway/index.js';
import { download, http } from '../support/http.js';
import { ManualClock } from '../support/manual-clock.js';

const assets = new URL('../../recipes/assets/', import.meta.url);
let gateway: LocalGateway | undefined;
afterEach(async () => {
  await gateway?.close();
  gateway = undefined;
});

async function start(options: LocalGatewayOptions = {}) {
  gateway = await startLocalGateway({ seed: 3, latencyScale: 0, keys: { a: 'team-a', b: 'team-b' }, ...options });
  return http(gateway);
}

function form(bytes: Buffer | Uint8Array, name: string, field = 'file'): FormData {
  const data = new FormData();
  data.append(field, new Blob([bytes]), name);
  return data;
}

const uploadAs = (
  api: ReturnType<typeof http>,
  key: string,
  bytes: Buffer | Uint8Array,
  name: string,
  field?: string,
) => api.send('POST', '/api/v1/media/files', { key, raw: { contentType: '', data: form(bytes, name, field) } });

describe('media files', () => {
  it('uploads, sniffs the type from the bytes, and serves them back with that type', async () => {
    const api = await start();
    const logo = await readFile(new URL('logo.png', assets));
    // The name says .mp4; the bytes say PNG, and the bytes win.
    const answer = await uploadAs(api, 'a', logo, 'logo.mp4');
    expect(answer.status).toBe(200);
    const file = answer.body.data;
    expect(file).toMatchObject({ type: 'image', filename: 'logo.mp4', size: logo.length, content_type: 'image/png' });
    expect(file.file_id).toMatch(/^file_[0-9a-f]{24}$/);
    expect(file.expires_at - file.created_at).toBe(7 * 86_400_000);
    const served = await download(file.download_url);
    expect(served.status).toBe(200);
    expect(served.type).toBe('image/png');
    expect(served.bytes.equals(logo)).toBe(true);

    const video = await uploadAs(api, 'a', await readFile(new URL('ride.mp4', assets)), 'ride.mp4');
    expect(video.body.data).toMatchObject({ type: 'video', content_type: 'video/mp4' });
  });

  it('refuses what is not media, and a missing or misnamed field', async () => {
    const api = await start();
    const text = await uploadAs(api, 'a', Buffer.from('just some text, not an image'), 'notes.png');
    expect(text.status).toBe(400);
    expect(text.body).toEqual({
      code: 400,
      message: 'Invalid parameters: the file is not an image, video or audio file',
    });
    const misnamed = await uploadAs(api, 'a', await readFile(new URL('logo.png', assets)), 'logo.png', 'upload');
    expect(misnamed.body).toEqual({
      code: 400,
      message: 'Invalid parameters: the file must be sent in the multipart field "file" (got "upload")',
    });
    const json = await api.post('/api/v1/media/files', { file: 'x' }, { key: 'a' });
    expect(json.body).toEqual({
      code: 400,
      message: 'Invalid parameters: Content-Type must be multipart/form-data with the file in the field "file"',
    });
  });

  it('answers 413 with the error body for a file over 16 MB, and keeps nothing', async () => {
    const api = await start();
    const big = Buffer.alloc(16 * 1024 * 1024 + 1);
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]).copy(big);
    const answer = await uploadAs(api, 'a', big, 'huge.png');
    expect(answer.status).toBe(413);
    expect(answer.body).toEqual({
      code: 413,
      message: 'Payload too large: the file is larger than the upload limit of 16777216 bytes',
    });
    expect((await api.get('/api/v1/media/files', { key: 'a' })).body.data.total).toBe(0);
  });

  it('answers 413 when the team quota is used up, until a delete frees it', async () => {
    const logo = await readFile(new URL('logo.png', assets));
    const api = await start({ teamQuotaBytes: logo.length * 2 });
    const first = await uploadAs(api, 'a', logo, 'one.png');
    await uploadAs(api, 'a', logo, 'two.png');
    const third = await uploadAs(api, 'a', logo, 'three.png');
    expect(third.status).toBe(413);
    expect(third.body.message).toBe(
      `Payload too large: the team's upload quota of ${logo.length * 2} bytes is used up (${logo.length * 2} bytes held); delete files to free it`,
    );
    expect((await api.delete(`/api/v1/media/files/${first.body.data.file_id}`, { key: 'a' })).status).toBe(204);
    expect((await uploadAs(api, 'a', logo, 'three.png')).status).toBe(200);
  });

  it('lists newest first with limit and offset, and checks them', async () => {
    const api = await start();
    const logo = await readFile(new URL('logo.png', assets));
    for (const name of ['1.png', '2.png', '3.png']) await uploadAs(api, 'a', logo, name);
    const page = await api.get('/api/v1/media/files?limit=2&offset=1', { key: 'a' });
    expect(page.body.data).toMatchObject({ total: 3, limit: 2, offset: 1 });
    expect(page.body.data.files.map((f: { filename: string }) => f.filename)).toEqual(['2.png', '1.png']);
    expect((await api.get('/api/v1/media/files?limit=101', { key: 'a' })).body).toEqual({
      code: 400,
      message: 'Invalid parameters: limit must be from 1 to 100 (got 101)',
    });
    expect((await api.get('/api/v1/media/files?offset=-1', { key: 'a' })).body).toEqual({
      code: 400,
      message: 'Invalid parameters: offset must be a whole number (got "-1")',
    });
  });

  it('keeps each team to its own files', async () => {
    const api = await start();
    const uploaded = await uploadAs(api, 'a', await readFile(new URL('logo.png', assets)), 'mine.png');
    const id = uploaded.body.data.file_id;
    expect((await api.get('/api/v1/media/files', { key: 'b' })).body.data.files).toEqual([]);
    const foreign = await api.delete(`/api/v1/media/files/${id}`, { key: 'b' });
    expect(foreign.status).toBe(404);
    expect(foreign.body).toEqual({ code: 404, message: `Not found: file ${id} does not exist` });
    expect((await api.delete(`/api/v1/media/files/${id}`, { key: 'a' })).status).toBe(204);
    expect((await download(uploaded.body.data.download_url)).status).toBe(404);
    expect((await api.delete(`/api/v1/media/files/${id}`, { key: 'a' })).status).toBe(404);
  });

  it('expires files after --file-ttl: gone from the list and the link', async () => {
    const clock = new ManualClock();
    const api = await start({ clock, fileTtlSeconds: 3600 });
    const uploaded = await uploadAs(api, 'a', await readFile(new URL('logo.png', assets)), 'short.png');
    await clock.advance(3_599_999);
    expect((await api.get('/api/v1/media/files', { key: 'a' })).body.data.total).toBe(1);
    await clock.advance(1);
    expect((await api.get('/api/v1/media/files', { key: 'a' })).body.data.total).toBe(0);
    const link = await download(uploaded.body.data.download_url);
    expect(link.status).toBe(404);
    expect(JSON.parse(link.bytes.toString())).toEqual({
      code: 404,
      message: 'Not found: this link expired or never existed',
    });
  });
});
