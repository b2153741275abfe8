import { fileTypeFromFile } from 'file-type';
import PQueue from 'p-queue';

/** A file's type by its first bytes (`image/png`), or null when they are no type the sniffer knows (text, say). */
export async function sniffedType(path: string): Promise<string | null> {
  return (await fileTypeFromFile(path))?.mime ?? null;
}

/**
 * The sniffed types of many files, a few read at once; a file that cannot be read is left out
 * (its check before the upload says why).
 */
export async function sniffAll(paths: Iterable<string>, atOnce = 16): Promise<Map<string, string | null>> {
  const types = new Map<string, string | null>();
  const reads = new PQueue({ concurrency: atOnce });
  await reads.addAll(
    [...paths].map((path) => async () => {
      try {
        types.set(path, await sniffedType(path));
      } catch {
        // Unreadable here: left to the upload's own check.
      }
    }),
  );
  return types;
}
