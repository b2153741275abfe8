import { execFile } from 'node:child_process';
import { chmodSync, statSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { promisify } from 'node:util';
import { readMp4Info, type Mp4Info } from './mp4.js';

const run = promisify(execFile);

let ffmpegFound: Promise<string | undefined> | undefined;

/**
 * The ffmpeg to render with: the one on PATH, else the static build that the optional dependency
 * `@ffmpeg-installer/ffmpeg` ships inside its npm package (so a fresh machine renders video too);
 * undefined when neither answers. Asked once per process.
 */
export function ffmpegPath(): Promise<string | undefined> {
  ffmpegFound ??= (async () => {
    for (const candidate of ['ffmpeg', packagedFfmpeg()]) {
      if (!candidate) continue;
      const answers = await run(candidate, ['-hide_banner', '-version'], { timeout: 10_000 }).then(
        () => true,
        () => false,
      );
      if (answers) return candidate;
    }
    return undefined;
  })();
  return ffmpegFound;
}

function packagedFfmpeg(): string | undefined {
  let path: string | undefined;
  try {
    path = (createRequire(import.meta.url)('@ffmpeg-installer/ffmpeg') as { path?: string }).path;
  } catch {
    // The optional dependency did not install on this platform.
    return undefined;
  }
  if (path) makeExecutable(path);
  return path;
}

/**
 * The binary package's only install script is `chmod u+x ffmpeg`; an npm that does not run
 * dependencies' install scripts (npm's allow-list of scripts) leaves it as packed. Setting the bit
 * here makes the package work either way; where it cannot be set, ffmpeg is reported missing.
 */
function makeExecutable(path: string): void {
  try {
    if ((statSync(path).mode & 0o100) === 0) chmodSync(path, 0o755);
  } catch {
    // Not ours to change (a read-only install): the check in ffmpegPath reports it.
  }
}

/** Whether any ffmpeg can be had; see `ffmpegPath`. */
export async function hasFfmpeg(): Promise<boolean> {
  return (await ffmpegPath()) !== undefined;
}

export interface VideoRequest {
  resolution: '480p' | '720p';
  ratio: string;
  durationSeconds: number;
  /** Degrees of hue rotation: the visible trace of the prompt. */
  hueShift: number;
  withAudio: boolean;
}

export interface RenderedVideo {
  info: Mp4Info;
  /** `transcoded` honours duration and resolution; `passthrough` is the first input video as it came. */
  method: 'transcoded' | 'passthrough';
}

/** The output frame for a resolution and ratio; `adaptive` keeps the input's proportions. Sides are even, as H.264 wants. */
export function outputFrame(
  resolution: '480p' | '720p',
  ratio: string,
  input: { width: number; height: number },
): { width: number; height: number } {
  const shortSide = resolution === '480p' ? 480 : 720;
  let proportion: number;
  if (ratio === 'adaptive') proportion = input.width > 0 && input.height > 0 ? input.width / input.height : 16 / 9;
  else {
    const [w, h] = ratio.split(':').map(Number);
    proportion = (w ?? 16) / (h ?? 9);
  }
  const even = (n: number) => Math.max(2, Math.round(n / 2) * 2);
  return proportion >= 1
    ? { width: even(shortSide * proportion), height: shortSide }
    : { width: shortSide, height: even(shortSide / proportion) };
}

/**
 * Writes the output video to `outPath`. With ffmpeg the first input is looped or cut to
 * the duration, scaled and cropped to the frame, re-timed to 24 fps and hue-shifted; without it
 * the first input passes through unchanged.
 */
export async function renderVideo(
  inputPath: string,
  outPath: string,
  request: VideoRequest,
  useFfmpeg: boolean,
): Promise<RenderedVideo> {
  const input = readMp4Info(await readFile(inputPath));
  if (!input) throw new Error('the first reference video is not a readable MP4');
  const ffmpeg = useFfmpeg ? await ffmpegPath() : undefined;
  if (ffmpeg) {
    const frame = outputFrame(request.resolution, request.ratio, input);
    const filters = `scale=${frame.width}:${frame.height}:force_original_aspect_ratio=increase,crop=${frame.width}:${frame.height},setsar=1,fps=24,hue=h=${request.hueShift}`;
    const audio = request.withAudio
      ? [
          '-f',
          'lavfi',
          '-i',
          'sine=frequency=440:sample_rate=44100',
          '-map',
          '0:v',
          '-map',
          '1:a',
          '-c:a',
          'aac',
          '-b:a',
          '64k',
        ]
      : ['-an'];
    await run(
      ffmpeg,
      [
        '-hide_banner',
        '-loglevel',
        'error',
        '-y',
        '-stream_loop',
        '-1',
        '-i',
        inputPath,
        ...audio,
        '-t',
        String(request.durationSeconds),
        '-vf',
        filters,
        '-c:v',
        'libx264',
        '-preset',
        'ultrafast',
        '-pix_fmt',
        'yuv420p',
        '-movflags',
        '+faststart',
        outPath,
      ],
      { timeout: 120_000 },
    );
    const info = readMp4Info(await readFile(outPath));
    if (!info) throw new Error('ffmpeg wrote no readable MP4');
    return { info, method: 'transcoded' };
  }
  await writeFile(outPath, await readFile(inputPath));
  return { info: input, method: 'passthrough' };
}
