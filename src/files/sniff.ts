import { fileTypeFromFile } from 'file-type';

/** A file's type by its first bytes (`image/png`), or null when they are no type the sniffer knows (text, say). */
export async function sniffedType(path: string): Promise<string | null> {
  return (await fileTypeFromFile(path))?.mime ?? null;
}

/** Whether a sniffed type is one a media upload takes. */
export const isMediaType = (mime: string | null): boolean => /^(image|video|audio)\//.test(mime ?? '');

/**
 * The sniffed types of many files, a few read at once; a file that cannot be read is left out
 * (its check before the upload says why).
 */
export async function sniffAll(paths: Iterable<string>, atOnce = 16): Promise<Map<string, string | null>> {
  const queue = [...paths];
  const types = new Map<string, string | null>();
  const worker = async () => {
    for (let path = queue.pop(); path !== undefined; path = queue.pop()) {
      try {
        types.set(path, await sniffedType(path));
      } catch {
        // Unreadable here: left to the upload's own check.
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(atOnce, queue.length) }, worker));
  return types;
}
