import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { CachedSchemaSource } from '../../src/gateway/schema-source.js';
import { readBundledSchema } from '../../src/model-schemas/bundled.js';
import { mediaFields, validateModelInput } from '../../src/model-schemas/validate.js';
import { err, ok } from '../../src/result.js';
import { ManualClock } from '../support/manual-clock.js';

const edit = readBundledSchema('vendor-b/vendor-b-5.0-lite-edit')!;
const video = readBundledSchema('vendor-b/vendor-b-2.0-mini-v2v')!;

describe('validateModelInput', () => {
  it('gives one problem per field, with its path', () => {
    const problems = validateModelInput(edit, {
      prompt: '',
      image: ['https://x.test/a.png', 7],
      size: '999x999',
      output_format: 'gif',
      colour: 'red',
      output_fromat: 'png',
    });
    // An input the model does not have is a problem of its key; the others of their values.
    expect(problems).toEqual([
      { path: ['colour'], field: 'colour', message: 'is not an input of this model', at: 'key' },
      // A slip of the keyboard gets the field it was meant to be.
      {
        path: ['output_fromat'],
        field: 'output_fromat',
        message: 'is not an input of this model',
        at: 'key',
        meant: 'output_format',
      },
      { path: ['prompt'], field: 'prompt', message: 'must be at least 1 characters, got 0', at: 'value' },
      { path: ['image', 1], field: 'image[1]', message: 'must be a string, got 7', at: 'value' },
      {
        path: ['size'],
        field: 'size',
        message: 'must be WIDTHxHEIGHT with each side 1024 to 4096, or 2K (2048x2048) or 3K (3072x3072); got "999x999"',
        at: 'value',
      },
      { path: ['output_format'], field: 'output_format', message: 'must be one of jpeg, png; got "gif"', at: 'value' },
    ]);
  });

  it('accepts a valid input', () => {
    expect(validateModelInput(video, { video_urls: ['https://x.test/a.mp4'], duration: 15, seed: -1 })).toEqual([]);
  });

  it('names the URL fields that take local files, with their media', () => {
    expect(mediaFields(video)).toEqual([
      { field: 'video_urls', media: 'video', list: true },
      { field: 'reference_images', media: 'image', list: true },
      { field: 'audio_urls', media: 'audio', list: true },
    ]);
  });
});

describe('CachedSchemaSource', () => {
  let dir: string | undefined;
  afterEach(async () => dir && rm(dir, { recursive: true, force: true }));

  it('takes the live schema first, caches it, and serves the cache while fresh', async () => {
    dir = await mkdtemp(join(tmpdir(), 'schemas-'));
    const clock = new ManualClock();
    const live = { type: 'object', properties: { prompt: { type: 'string' } }, 'x-live': true };
    let calls = 0;
    const fetcher = {
      modelSchema: async () => {
        calls++;
        return ok(live);
      },
    };
    const first = await new CachedSchemaSource(fetcher, dir, clock, 60_000).get('vendor-a/vendor-a-v3-t2i');
    expect(first).toEqual({ schema: live, origin: 'live' });
    expect(await readdir(dir)).toEqual(['vendor-a--vendor-a-v3-t2i.json']);
    const second = await new CachedSchemaSource(fetcher, dir, clock, 60_000).get('vendor-a/vendor-a-v3-t2i');
    expect(second).toEqual({ schema: live, origin: 'cache' });
    expect(calls).toBe(1);
    await clock.advance(60_000);
    expect((await new CachedSchemaSource(fetcher, dir, clock, 60_000).get('vendor-a/vendor-a-v3-t2i'))?.origin).toBe(
      'live',
    );
  });

  it('falls back to a stale cache, then to the bundled copy, when the gateway cannot answer', async () => {
    dir = await mkdtemp(join(tmpdir(), 'schemas-'));
    const clock = new ManualClock();
    const down = {
      modelSchema: async () =>
        err({ reason: 'connection-failed' as const, message: 'down', retryable: true, outcomeUnknown: false }),
    };
    const bundled = await new CachedSchemaSource(down, dir, clock).get('vendor-a/vendor-a-v3-t2i');
    expect(bundled?.origin).toBe('bundled');
    expect(bundled?.schema).toEqual(readBundledSchema('vendor-a/vendor-a-v3-t2i'));
    expect(await new CachedSchemaSource(down, dir, clock).get('vendor-z/unknown')).toBeUndefined();
  });
});
