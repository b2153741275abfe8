import { isAbsolute, resolve } from 'node:path';
import { isLocalPath } from '../model-schemas/validate.js';
import type { PlannedStep } from '../plan.js';
import type { EngineContext } from './context.js';

/** A result URL expiring within this much is replaced by a fresh upload of the local copy. */
const EXPIRY_MARGIN_MS = 5 * 60_000;

/**
 * URL-typed inputs made ready to send: a local path is uploaded and replaced by its URL; a URL of
 * an earlier step's output that has expired (or is about to) is replaced by an upload of the
 * local copy the run downloaded.
 */
export async function prepareMediaInputs(ctx: EngineContext, step: PlannedStep, input: Record<string, unknown>, signal: AbortSignal): Promise<Record<string, unknown>> {
  const prepared = { ...input };
  const resolveOne = async (value: unknown): Promise<unknown> => {
    if (typeof value !== 'string') return value;
    if (isLocalPath(value)) {
      const path = isAbsolute(value) ? value : resolve(ctx.plan.recipeDir, value);
      return (await ctx.uploads.upload(path, signal)).url;
    }
    const local = ctx.downloads.get(value);
    if (local && local.expiresAt !== null && local.expiresAt < ctx.clock.now() + EXPIRY_MARGIN_MS) {
      ctx.log.info({ url: value, path: local.path }, 'result URL expired: uploading the local copy');
      return (await ctx.uploads.upload(local.path, signal)).url;
    }
    return value;
  };
  for (const media of step.mediaFields) {
    const value = prepared[media.field];
    if (value === undefined) continue;
    prepared[media.field] = Array.isArray(value) ? await Promise.all(value.map(resolveOne)) : await resolveOne(value);
  }
  return prepared;
}
