import { isAbsolute, resolve } from 'node:path';
import type { EngineContext } from '../../engine/context.js';
import { recordDownload } from '../../engine/row-downloads.js';
import type { UploadStep } from '../../plan.js';
import { ok } from '../../result.js';
import type { ActionRun, RunnerResult } from '../run-part.js';
import { renderWith } from '../run-kit.js';

type Json = Record<string, unknown>;

export async function runUpload(ctx: EngineContext, input: Json, signal: AbortSignal): RunnerResult {
  const path = String(input.path);
  const entry = await ctx.uploads.upload(isAbsolute(path) ? path : resolve(ctx.plan.recipeDir, path), signal);
  if (!entry.ok) return entry;
  return ok({ file_id: entry.value.fileId, url: entry.value.url, type: entry.value.type });
}

/** The file an upload item sends, as a path here. */
const sourceOf = (ctx: EngineContext, input: unknown) => {
  const path = String((input as { path?: unknown }).path);
  return isAbsolute(path) ? path : resolve(ctx.plan.recipeDir, path);
};

/** Uploads run here, where the file is, never on a worker. */
export const uploadRun: ActionRun<UploadStep> = {
  render: renderWith,
  timedFromSlot: false,
  onWorkers: () => false,
  run: ({ ctx, signal }, input) => runUpload(ctx, input as Json, signal),
  cache: {
    keyAction: () => 'upload',
    inputHasFields: true,
    answeredByGateway: true,
    cost: () => ({ tasks: 0, requests: 1 }),
    // The entry's file is the one uploaded, not an output: it stays where it is.
    restoresFiles: false,
    // The uploaded file itself: kept so that a later run can upload it again when the URL expires.
    keptFiles: (ctx, input, outputs) => [
      { path: sourceOf(ctx, input), url: (outputs as { url: string }).url, expires_at: null },
    ],
    // The cached URL may have expired: it is marked so, and a step that sends it uploads the file again.
    restored: (ctx, entry, input, row) => {
      const file = entry.files.at(-1);
      if (file?.url) recordDownload(ctx, row, file.url, { path: sourceOf(ctx, input), expiresAt: 0 });
    },
  },
};
