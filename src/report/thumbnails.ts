import sharp from 'sharp';

/** Thumbnails fit in this box: small enough that a thousand of them keep the page under a few MB. */
const BOX = { width: 240, height: 160 };

/**
 * A small WebP of an image as a data URI, to embed in the page; null when the file cannot be read
 * as an image (the page then shows a link to the file only).
 */
export async function thumbnail(path: string): Promise<string | null> {
  try {
    const bytes = await sharp(path)
      .resize({ ...BOX, fit: 'inside', withoutEnlargement: true })
      .webp({ quality: 50 })
      .toBuffer();
    return `data:image/webp;base64,${bytes.toString('base64')}`;
  } catch {
    return null;
  }
}

/** Thumbnails of many images, a few at a time, by path. */
export async function thumbnails(paths: string[], parallel = 4): Promise<Map<string, string | null>> {
  const made = new Map<string, string | null>();
  let next = 0;
  const worker = async () => {
    while (next < paths.length) {
      const path = paths[next++]!;
      made.set(path, await thumbnail(path));
    }
  };
  await Promise.all(Array.from({ length: Math.min(parallel, paths.length) }, worker));
  return made;
}
