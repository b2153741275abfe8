import { execFile } from 'node:child_process';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { encodePng } from '../media/codecs.js';
import { readMp4Info } from '../media/mp4.js';
import { createRaster, paintScene } from '../media/raster.js';
import { ffmpegPath, outputFrame, renderVideo } from '../media/video.js';
import { hashToInt } from '../random.js';
import { field, TaskInputError, type ModelBehaviour, type Resource } from './behaviour.js';

const MAX_VIDEO_BYTES = 64 * 1024 * 1024;
const MAX_IMAGE_BYTES = 10 * 1024 * 1024;
const MAX_AUDIO_BYTES = 16 * 1024 * 1024;

export const videoToVideo: ModelBehaviour = {
  baseProcessingMs: (input) =>
    20_000 + field(input, 'duration', 5) * (field(input, 'resolution', '720p') === '480p' ? 1800 : 3000),
  async produce({ input, fetchInput, saveResult, scratchDir, useFfmpeg }) {
    const videos = input.video_urls as string[];
    const firstVideo = await fetchInput('video_urls[0]', videos[0]!, MAX_VIDEO_BYTES);
    if (!readMp4Info(firstVideo)) throw new TaskInputError('video_urls[0] is not a readable MP4 video');
    // The other references are fetched too, so that a broken link fails the task as it would upstream.
    for (const [index, url] of videos.slice(1).entries())
      await fetchInput(`video_urls[${index + 1}]`, url, MAX_VIDEO_BYTES);
    for (const [index, url] of ((input.reference_images as string[] | undefined) ?? []).entries())
      await fetchInput(`reference_images[${index}]`, url, MAX_IMAGE_BYTES);
    for (const [index, url] of ((input.audio_urls as string[] | undefined) ?? []).entries())
      await fetchInput(`audio_urls[${index}]`, url, MAX_AUDIO_BYTES);

    const inputPath = join(scratchDir, 'input.mp4');
    const outputPath = join(scratchDir, 'output.mp4');
    await writeFile(inputPath, firstVideo);
    const prompt = String(input.prompt ?? '');
    const rendered = await renderVideo(
      inputPath,
      outputPath,
      {
        resolution: field(input, 'resolution', '720p') as '480p' | '720p',
        ratio: field(input, 'ratio', 'adaptive'),
        durationSeconds: field(input, 'duration', 5),
        hueShift: hashToInt(`${prompt}\n${String(input.seed ?? -1)}`) % 360,
        withAudio: field(input, 'generate_audio', true),
      },
      useFfmpeg,
    );
    const videoBytes = await readFile(outputPath);
    const { blob, url } = await saveResult('video.mp4', videoBytes, 'video/mp4');
    const blobs = [blob];
    const { info } = rendered;
    const resources: Resource[] = [
      {
        url,
        type: 'video',
        width: info.width,
        height: info.height,
        format: 'mp4',
        role: 'primary',
        duration: info.durationSeconds,
        size: videoBytes.length,
      },
    ];
    if (field(input, 'return_last_frame', false)) {
      const frame = await lastFrame(outputPath, join(scratchDir, 'last-frame.png'), info, prompt, useFfmpeg);
      const saved = await saveResult('last-frame.png', frame, 'image/png');
      blobs.push(saved.blob);
      resources.push({
        url: saved.url,
        type: 'image',
        width: info.width,
        height: info.height,
        format: 'png',
        role: 'cover',
        size: frame.length,
      });
    }
    return {
      resources,
      blobs,
      metadata: {
        video_count: 1,
        duration: info.durationSeconds,
        fps: 24,
        resolution: field(input, 'resolution', '720p') as '480p' | '720p',
        ratio: field(input, 'ratio', 'adaptive'),
        has_audio: info.hasAudio,
        render: rendered.method,
      },
    };
  },
};

async function lastFrame(
  videoPath: string,
  framePath: string,
  info: { width: number; height: number },
  prompt: string,
  useFfmpeg: boolean,
): Promise<Buffer> {
  const ffmpeg = useFfmpeg ? await ffmpegPath() : undefined;
  if (ffmpeg) {
    await promisify(execFile)(
      ffmpeg,
      [
        '-hide_banner',
        '-loglevel',
        'error',
        '-y',
        '-sseof',
        '-0.5',
        '-i',
        videoPath,
        '-update',
        '1',
        '-frames:v',
        '1',
        framePath,
      ],
      { timeout: 60_000 },
    );
    return readFile(framePath);
  }
  const frame = outputFrame('480p', 'adaptive', info);
  const raster = createRaster(info.width || frame.width, info.height || frame.height);
  paintScene(raster, hashToInt(prompt) % 64);
  return encodePng(raster);
}
