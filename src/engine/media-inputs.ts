import { isAbsolute, resolve } from 'node:path';
import { isLocalPath } from '../model-schemas/validate.js';
import type { PlannedStep } from '../plan.js';
import { ok, type Result } from '../result.js';
import type { EngineContext } from './context.js';
import { emit } from './emit.js';
import type { StepFailure } from './failure.js';
import { URL_EXPIRY_MARGIN_MS } from './uploads.js';

type Prepared = Result<unknown, StepFailure>;

/**
 * URL-typed inputs made ready to send: a local path is uploaded and replaced by its URL; a URL of
 * an earlier step's output that has expired (or is about to) is replaced by an upload of the
 * local copy the run downloaded. The first upload that fails fails the input.
 */
export async function prepareMediaInputs(
  ctx: EngineContext,
  step: PlannedStep,
  input: Record<string, unknown>,
  signal: AbortSignal,
): Promise<Result<Record<string, unknown>, StepFailure>> {
  const prepared = { ...input };
  const resolveOne = async (value: unknown): Promise<Prepared> => {
    if (typeof value !== 'string') return ok(value);
    if (isLocalPath(value)) {
      const path = isAbsolute(value) ? value : resolve(ctx.plan.recipeDir, value);
      return urlOf(await ctx.uploads.upload(path, signal));
    }
    const local = ctx.downloads.get(value);
    if (local && local.expiresAt !== null && local.expiresAt < ctx.clock.now() + URL_EXPIRY_MARGIN_MS) {
      emit(ctx, { type: 'result-url-expired', url: value, path: local.path });
      return urlOf(await ctx.uploads.upload(local.path, signal));
    }
    return ok(value);
  };
  for (const media of step.mediaFields) {
    const value = prepared[media.field];
    if (value === undefined) continue;
    const outcomes = await Promise.all((Array.isArray(value) ? value : [value]).map(resolveOne));
    const failure = outcomes.find((outcome) => !outcome.ok);
    if (failure) return failure as { ok: false; error: StepFailure };
    const values = outcomes.map((outcome) => (outcome as { ok: true; value: unknown }).value);
    prepared[media.field] = Array.isArray(value) ? values : values[0];
  }
  return ok(prepared);
}

const urlOf = (uploaded: Result<{ url: string }, StepFailure>): Prepared =>
  uploaded.ok ? ok(uploaded.value.url) : uploaded;
