import { encodePng, withPngText } from '../media/codecs.js';
import { createRaster, paintScene } from '../media/raster.js';
import { hashToInt } from '../random.js';
import { field, type ModelBehaviour, type Resource } from './behaviour.js';

/** Width and height for a resolution and ratio: the long side is 1024 or 2048, the short side rounded to a multiple of 8. */
export function imageSize(resolution: string, aspectRatio: string): { width: number; height: number } {
  const long = resolution === '2k' ? 2048 : 1024;
  const [w = 16, h = 9] = aspectRatio.split(':').map(Number);
  const short = Math.round((long * Math.min(w, h)) / Math.max(w, h) / 8) * 8;
  return w >= h ? { width: long, height: short } : { width: short, height: long };
}

/**
 * Painting and encoding a 2048 px PNG takes tens of milliseconds; the pictures come from a
 * bounded set of scene variants, so they are cached, and each file gets its own prompt in a
 * tEXt chunk, which keeps its bytes unique.
 */
const SCENE_VARIANTS = 64;
const sceneCache = new Map<string, Buffer>();
const SCENE_CACHE_LIMIT = 256;

function scenePng(variant: number, width: number, height: number): Buffer {
  const key = `${variant}:${width}x${height}`;
  let png = sceneCache.get(key);
  if (!png) {
    const raster = createRaster(width, height);
    paintScene(raster, variant);
    png = encodePng(raster);
    if (sceneCache.size >= SCENE_CACHE_LIMIT) sceneCache.delete(sceneCache.keys().next().value as string);
    sceneCache.set(key, png);
  }
  return png;
}

export const textToImage: ModelBehaviour = {
  baseProcessingMs: (input) => 1000 + field(input, 'n', 1) * (field(input, 'resolution', '1k') === '2k' ? 4500 : 2500),
  async produce({ taskId, input, saveResult }) {
    const prompt = String(input.prompt);
    const count = field(input, 'n', 1);
    const { width, height } = imageSize(field(input, 'resolution', '1k'), field(input, 'aspect_ratio', '16:9'));
    const resources: Resource[] = [];
    const blobs = [];
    for (let index = 0; index < count; index++) {
      const variant = hashToInt(`${prompt}\n${String(input.negative_prompt ?? '')}\n${index}`) % SCENE_VARIANTS;
      const png = withPngText(
        scenePng(variant, width, height),
        'parameters',
        `${prompt}\ntask: ${taskId} image ${index + 1} of ${count}`,
      );
      const { blob, url } = await saveResult(`image-${index + 1}.png`, png, 'image/png');
      blobs.push(blob);
      resources.push({ url, type: 'image', width, height, format: 'png', role: 'primary', size: png.length });
    }
    return { resources, blobs, metadata: { image_count: count } };
  },
};
