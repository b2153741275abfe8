// Which row downloaded what: a row's downloads are read by its own later steps only (rows share no
// values), so they leave `ctx.downloads` when the row ends and a batch of a million rows does not
// keep a million URLs. A resume rebuilds the map from the journal.
import type { EngineContext } from './context.js';

type Downloads = EngineContext['downloads'];
type Download = Downloads extends Map<string, infer V> ? V : never;

/** The URLs each row added, by the map they were added to (a context's, or a test's). */
const byRow = new WeakMap<Downloads, Map<number, string[]>>();

/** Records that `row` downloaded `url` (or restored it from the cache, or uploaded it) to `download.path`. */
export function recordDownload(ctx: Pick<EngineContext, 'downloads'>, row: number, url: string, download: Download) {
  ctx.downloads.set(url, download);
  let rows = byRow.get(ctx.downloads);
  if (!rows) {
    rows = new Map();
    byRow.set(ctx.downloads, rows);
  }
  const urls = rows.get(row);
  if (urls) urls.push(url);
  else rows.set(row, [url]);
}

/** The row ended: nothing reads its downloads any more. */
export function forgetRowDownloads(ctx: Pick<EngineContext, 'downloads'>, row: number): void {
  const rows = byRow.get(ctx.downloads);
  const urls = rows?.get(row);
  if (!urls) return;
  rows!.delete(row);
  for (const url of urls) ctx.downloads.delete(url);
}
