import { decodeImage, encodeJpeg, encodePng } from '../media/codecs.js';
import { createRaster, drawCover, hsl, paintScene, tint, type Raster } from '../media/raster.js';
import { hashToInt } from '../random.js';
import { field, TaskInputError, type ModelBehaviour, type Resource } from './behaviour.js';

const MAX_INPUT_BYTES = 10 * 1024 * 1024;

/** Output size from the `size` field: `WxH`, `2K` or `3K`. */
export function editSize(size: string): { width: number; height: number } {
  if (size === '2K') return { width: 2048, height: 2048 };
  if (size === '3K') return { width: 3072, height: 3072 };
  const [width = 2048, height = 2048] = size.split('x').map(Number);
  return { width, height };
}

/** The formats the model accepts, by their first bytes. */
function isSupportedImage(bytes: Buffer): boolean {
  const head = bytes.subarray(0, 12);
  return (
    head.readUInt32BE(0) === 0x89504e47 || // PNG
    (head[0] === 0xff && head[1] === 0xd8) || // JPEG
    (head.toString('latin1', 0, 4) === 'RIFF' && head.toString('latin1', 8, 12) === 'WEBP') ||
    head.toString('latin1', 0, 2) === 'BM' ||
    head.toString('latin1', 0, 4) === 'II*\0' ||
    head.toString('latin1', 0, 4) === 'MM\0*' ||
    head.toString('latin1', 0, 3) === 'GIF'
  );
}

function batchSize(input: Record<string, unknown>, prompt: string): number {
  if (field(input, 'sequential_image_generation', 'disabled') !== 'auto') return 1;
  // "auto" lets the model decide; the maximum is an upper limit only.
  const max = field(input, 'sequential_image_generation_max_images', 15);
  return 1 + (hashToInt(prompt) % Math.min(max, 4));
}

export const imageEdit: ModelBehaviour = {
  // The batch maximum is frozen at submission; what the model does not use is refunded.
  baseProcessingMs: (input) => 6000 + 1500 * (input.image as unknown[]).length,
  async produce({ input, fetchInput, saveResult }) {
    const prompt = String(input.prompt);
    const urls = input.image as string[];
    const rasters: Raster[] = [];
    for (const [index, url] of urls.entries()) {
      const bytes = await fetchInput(`image[${index}]`, url, MAX_INPUT_BYTES);
      if (!isSupportedImage(bytes))
        throw new TaskInputError(`image[${index}] is not a JPEG, PNG, WEBP, BMP, TIFF or GIF image`);
      let raster: Raster | undefined;
      try {
        raster = decodeImage(bytes);
      } catch {
        throw new TaskInputError(`image[${index}] could not be decoded`);
      }
      if (!raster) {
        // A format this emulator cannot decode still yields a picture derived from its bytes.
        raster = createRaster(256, 256);
        paintScene(raster, hashToInt(bytes.subarray(0, 4096).toString('latin1')) % 64);
      }
      rasters.push(raster);
    }
    const { width, height } = editSize(field(input, 'size', '2048x2048'));
    const format = field(input, 'output_format', 'jpeg');
    const count = batchSize(input, prompt);
    const resources: Resource[] = [];
    const blobs = [];
    for (let index = 0; index < count; index++) {
      const output = createRaster(width, height);
      drawCover(output, rasters[0]!);
      tint(output, hsl(hashToInt(`${prompt}\n${index}`) % 360, 0.6, 0.5), 0.18);
      // Every further input goes into the lower right corner, a quarter of the width, as a logo would.
      for (const [k, extra] of rasters.slice(1).entries()) {
        const side = Math.round(Math.min(width, height) / 4);
        const margin = Math.round(side / 8);
        drawCover(output, extra, width - (side + margin) * (k + 1), height - side - margin, side, side);
      }
      const bytes = format === 'png' ? encodePng(output) : encodeJpeg(output);
      const { blob, url } = await saveResult(
        `edit-${index + 1}.${format === 'png' ? 'png' : 'jpeg'}`,
        bytes,
        format === 'png' ? 'image/png' : 'image/jpeg',
      );
      blobs.push(blob);
      resources.push({ url, type: 'image', width, height, format, role: 'primary', size: bytes.length });
    }
    return { resources, blobs, metadata: { image_count: count }, unitsUsed: count };
  },
};
