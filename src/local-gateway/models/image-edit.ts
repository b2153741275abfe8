import sharp from 'sharp';
import { encodePng } from '../media/codecs.js';
import { createRaster, hsl, paintScene } from '../media/raster.js';
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

/** Pictures larger than this many pixels are not decoded: a guard against decompression bombs. */
const MAX_DECODE_PIXELS = 40_000_000;

/**
 * An input as the edit draws it: its bytes when libvips can decode them, else a picture derived
 * from them (a format it cannot read is accepted, as by the real model, and still gives an output).
 */
async function drawable(bytes: Buffer): Promise<Buffer> {
  try {
    await sharp(bytes, { limitInputPixels: MAX_DECODE_PIXELS }).metadata();
    return bytes;
  } catch {
    // Not decodable (or too large): a scene from the bytes' start, the same for the same file.
    const raster = createRaster(256, 256);
    paintScene(raster, hashToInt(bytes.subarray(0, 4096).toString('latin1')) % 64);
    return encodePng(raster);
  }
}

/** Raw RGB pixels, as libvips takes them back without decoding anything. */
interface Pixels {
  data: Buffer;
  raw: { width: number; height: number; channels: 3 };
}

/** `bytes` scaled and cropped to fill `width` × `height`, as raw RGB (an encoding would only be decoded again). */
async function cover(bytes: Buffer, width: number, height: number): Promise<Pixels> {
  const { data, info } = await sharp(bytes, { limitInputPixels: MAX_DECODE_PIXELS })
    .resize(width, height, { fit: 'cover', kernel: 'nearest' })
    .removeAlpha()
    .toColourspace('srgb')
    .raw()
    .toBuffer({ resolveWithObject: true });
  return { data, raw: { width: info.width, height: info.height, channels: 3 } };
}

export const imageEdit: ModelBehaviour = {
  // The batch maximum is frozen at submission; what the model does not use is refunded.
  baseProcessingMs: (input) => 6000 + 1500 * (input.image as unknown[]).length,
  async produce({ input, fetchInput, saveResult }) {
    const prompt = String(input.prompt);
    const urls = input.image as string[];
    const inputs: Buffer[] = [];
    for (const [index, url] of urls.entries()) {
      const bytes = await fetchInput(`image[${index}]`, url, MAX_INPUT_BYTES);
      if (!isSupportedImage(bytes))
        throw new TaskInputError(`image[${index}] is not a JPEG, PNG, WEBP, BMP, TIFF or GIF image`);
      inputs.push(await drawable(bytes));
    }
    const { width, height } = editSize(field(input, 'size', '2048x2048'));
    const format = field(input, 'output_format', 'jpeg');
    const count = batchSize(input, prompt);
    const resources: Resource[] = [];
    const blobs = [];
    // Drawn with libvips: a 2048 px edit in JavaScript took a third of a second of CPU, most of a
    // test suite's time and a bench's; now about 60 ms.
    const base = await cover(inputs[0]!, width, height);
    const side = Math.round(Math.min(width, height) / 4);
    const margin = Math.round(side / 8);
    // Every further input goes into the lower right corner, a quarter of the width, as a logo would.
    const logos = await Promise.all(
      inputs.slice(1).map(async (bytes, k) => {
        const pixels = await cover(bytes, side, side);
        return {
          input: pixels.data,
          raw: pixels.raw,
          left: width - (side + margin) * (k + 1),
          top: height - side - margin,
        };
      }),
    );
    for (let index = 0; index < count; index++) {
      const colour = hsl(hashToInt(`${prompt}\n${index}`) % 360, 0.6, 0.5);
      // The visible trace of the instruction: the picture blended 18 % toward a colour of the prompt
      // (a linear map per channel: a third of the time of laying a translucent layer over it).
      const tinted = sharp(base.data, { raw: base.raw }).linear(
        [0.82, 0.82, 0.82],
        colour.map((channel) => 0.18 * channel),
      );
      // libvips lays overlays before a linear map: the logos go over the tinted pixels in a pass of their own.
      const onTop = logos.filter((logo) => logo.left >= 0);
      const picture =
        onTop.length === 0 ? tinted : sharp(await tinted.raw().toBuffer(), { raw: base.raw }).composite(onTop);
      const bytes = await (format === 'png'
        ? picture.png({ compressionLevel: 1 })
        : picture.jpeg({ quality: 85 })
      ).toBuffer();
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
