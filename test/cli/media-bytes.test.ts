import { copyFile, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startLocalGateway, type LocalGateway } from '../../src/local-gateway/index.js';
import { pipelineInProcess } from '../support/cli.js';
import { ManualClock } from '../support/manual-clock.js';

/**
 * A local file's bytes, not only its name, are checked before anything is sent: a text file called
 * `notes.png` was caught only by the upload, after the recipe's earlier steps had been paid for.
 */
let gateway: LocalGateway;
const clock = new ManualClock();
let home: string;

const pipeline = (args: string[]) =>
  pipelineInProcess(args, {
    clock,
    gateway,
    cwd: home,
    env: { PIPELINE_API_KEY: gateway.apiKey, PIPELINE_BASE_URL: gateway.baseUrl, PIPELINE_HOME: home },
  });

/** The gateway's routes that take a key's check, an upload or a paid submission. */
async function sent(): Promise<number> {
  const stats = (await fetch(`${gateway.schemaUrl}/__emulator/stats`).then((r) => r.json())) as {
    requests: { by_route: Record<string, number> };
  };
  const routes = stats.requests.by_route;
  return Object.entries(routes)
    .filter(([route]) => route.startsWith('POST '))
    .reduce((sum, [, count]) => sum + count, 0);
}

// A paid step first: the edit's file was rejected only after the background had been paid for.
const RECIPE = (file: string) => `version: 1
name: bytes
steps:
  background: { uses: vendor-a/vendor-a-v3-t2i, with: { prompt: a sky }, cache: false }
  icon:
    uses: vendor-b/vendor-b-5.0-lite-edit
    needs: background
    with:
      prompt: make it an icon
      image: ["${file}"]
`;

beforeAll(async () => {
  gateway = await startLocalGateway({ clock, latencyScale: 0 });
  home = await mkdtemp(join(tmpdir(), 'pipeline-bytes-'));
  await writeFile(join(home, 'notes.png'), 'Remember: the logo goes top left.\n');
  // The first bytes of an MP4 (an `ftyp` box), named as an image.
  await writeFile(
    join(home, 'clip.png'),
    Buffer.concat([Buffer.from('\0\0\0\x18ftypmp42\0\0\0\0mp42isom'), Buffer.alloc(64)]),
  );
  await copyFile(new URL('../../recipes/assets/logo.png', import.meta.url), join(home, 'logo.png'));
});
afterAll(async () => {
  await gateway.close();
  await rm(home, { recursive: true, force: true });
});

describe("a media field's local file, by its bytes", () => {
  it('validate names the line of a text file named as an image, and of a video named as one', async () => {
    await writeFile(join(home, 'text.yaml'), RECIPE('notes.png'));
    const text = await pipeline(['validate', 'text.yaml']);
    expect(text.exitCode).toBe(2);
    expect(text.stderr).toContain(
      'text.yaml:10:15: error: file notes.png is not an image, video or audio file (its bytes are of no known media type); this field takes an image',
    );
    await writeFile(join(home, 'video.yaml'), RECIPE('clip.png'));
    const video = await pipeline(['validate', 'video.yaml']);
    expect(video.exitCode).toBe(2);
    expect(video.stderr).toContain(
      'video.yaml:10:15: error: file clip.png is a video (its bytes are video/mp4); this field takes an image',
    );
  });

  it('run refuses the recipe before its first paid step, and sends nothing', async () => {
    const before = await sent();
    const run = await pipeline(['run', 'text.yaml']);
    expect(run.exitCode).toBe(2);
    expect(run.stderr).toContain('nothing was run');
    expect(await sent()).toBe(before);
  });

  it('a real image passes, and the run uploads and edits it', async () => {
    await writeFile(join(home, 'good.yaml'), RECIPE('logo.png'));
    expect((await pipeline(['validate', 'good.yaml'])).exitCode).toBe(0);
    const run = await pipeline(['run', 'good.yaml']);
    expect(run.exitCode, run.stderr).toBe(0);
  });
});
