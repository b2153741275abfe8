import { dirname, resolve } from 'node:path';
import { err, ok, type Result } from '../result.js';
import type { UnreadableJournal } from '../store/fold.js';
import { writeAtomically } from '../store/run-store.js';
import { reportDataOfFile } from './data.js';
import { renderPage } from './page.js';
import { thumbnails } from './thumbnails.js';

/**
 * Thumbnails embedded in one report at most. Each costs a decode of the full image (several ms of
 * CPU for a 1K PNG) and a few KB of page; past this many, images are linked, not shown.
 */
export const MAX_THUMBNAILS = 1000;

/** Builds the report of the run whose journal is at `journalPath` and writes it to `outFile`. */
export async function writeReport(
  journalPath: string,
  outFile: string,
): Promise<Result<{ path: string; bytes: number }, UnreadableJournal>> {
  const data = reportDataOfFile(journalPath);
  if (!data.ok) return err(data.error);
  const images = data.value.steps.flatMap((s) =>
    s.items.flatMap((i) => i.files.filter((f) => f.kind === 'image').map((f) => f.path)),
  );
  const path = resolve(outFile);
  const thumbs = await thumbnails(images.slice(0, MAX_THUMBNAILS));
  const page = renderPage(data.value, {
    dir: dirname(path),
    thumbs,
    unthumbed: Math.max(0, images.length - MAX_THUMBNAILS),
  });
  writeAtomically(path, page);
  return ok({ path, bytes: Buffer.byteLength(page) });
}
