import { isAbsolute, resolve, sep } from 'node:path';
import { runnerOf } from '../actions/runners.js';
import { cacheKey } from '../cache/key.js';
import type { Scope } from '../expressions/expressions.js';
import { isLocalPath } from '../model-schemas/validate.js';
import type { PlannedStep } from '../plan.js';
import { ok, type Result } from '../result.js';
import { failed, type StepFailure } from './failure.js';
import { renderValue } from './values.js';

/** What the request calls: the key's `action` part (`llm`, `model acme/flux`), as its action says. */
export const actionOf = (step: PlannedStep): string => runnerOf(step).cache.keyAction(step);

/** What turning files into hashes needs: this run's downloads and folder, the recipe's folder. */
export interface FileHashing {
  downloads: ReadonlyMap<string, { path: string }>;
  runDir: string;
  recipeDir: string;
  hashOf(path: string): Promise<string>;
}

/**
 * The input with every file replaced by `{ sha256 }` of its bytes: a local file in a media field,
 * an earlier step's output by its gateway URL (which changes every run) or by its path in this
 * run's folder (which changes too). What is left is what the request depends on.
 */
async function byContent(files: FileHashing, step: PlannedStep, input: unknown): Promise<unknown> {
  const runFolder = `${files.runDir}${sep}`;
  const media = new Set(step.mediaFields.map((m) => m.field));
  const visit = async (value: unknown, field: string | undefined): Promise<unknown> => {
    if (typeof value === 'string') {
      const download = files.downloads.get(value);
      if (download) return { sha256: await files.hashOf(download.path) };
      if (value.startsWith(runFolder)) return { sha256: await files.hashOf(value).catch(() => value) };
      if (field !== undefined && media.has(field) && isLocalPath(value)) {
        const path = isAbsolute(value) ? value : resolve(files.recipeDir, value);
        return { sha256: await files.hashOf(path).catch(() => value) };
      }
      return value;
    }
    if (Array.isArray(value)) return Promise.all(value.map((v) => visit(v, field)));
    if (typeof value === 'object' && value !== null) {
      const entries = await Promise.all(
        Object.entries(value).map(async ([name, v]) => [name, await visit(v, field ?? name)] as const),
      );
      return Object.fromEntries(entries);
    }
    return value;
  };
  // An input without fields (a command) is visited as if all of it were one field that is no media field.
  return visit(input, runnerOf(step).cache.inputHasFields ? undefined : '');
}

/**
 * The cache key of one item: its action, its input by content, the step's `cache.key`, and, for a
 * step that sends requests, the gateway that answers them (see CacheKeyParts.gateway).
 */
export async function itemCacheKey(
  files: FileHashing,
  step: PlannedStep,
  scope: Scope,
  input: unknown,
  where: string,
  gateway: string,
): Promise<Result<string, StepFailure>> {
  let extra: unknown;
  if (step.cache.key) {
    const rendered = renderValue(step.cache.key, scope, `${where}.cache.key`);
    if (!rendered.ok) return rendered;
    extra = rendered.value;
  }
  try {
    const answeredBy = runnerOf(step).cache.answeredByGateway ? { gateway } : {};
    return ok(cacheKey({ action: actionOf(step), input: await byContent(files, step, input), extra, ...answeredBy }));
  } catch (cause) {
    return failed('local-file', `cannot read a file of ${where}'s input: ${(cause as Error).message}`);
  }
}
