import { createHash } from 'node:crypto';
import { readFileSync, statSync } from 'node:fs';
import { isAbsolute, resolve } from 'node:path';
import { isLocalPath } from '../model-schemas/validate.js';
import type { Plan, ValueTemplate } from '../plan.js';

const isFile = (path: string) => {
  try {
    return statSync(path).isFile();
  } catch {
    return false;
  }
};

/** Literal local paths in a step's media fields, as the engine resolves them: against the recipe's folder. */
function literalMediaPaths(plan: Plan): string[] {
  const paths: string[] = [];
  const visit = (value: ValueTemplate | undefined) => {
    if (!value) return;
    if (value.kind === 'list') value.items.forEach(visit);
    if (value.kind === 'literal' && typeof value.value === 'string' && isLocalPath(value.value)) {
      paths.push(isAbsolute(value.value) ? value.value : resolve(plan.recipeDir, value.value));
    }
  };
  for (const step of plan.steps) {
    if (!('with' in step) || step.with.kind !== 'map') continue;
    for (const media of step.mediaFields) visit(step.with.entries[media.field]);
  }
  return paths;
}

/**
 * The local files a run reads, as far as the plan names them: file inputs of its rows (already
 * absolute) and literal paths in media fields. Paths built by expressions at run time are not seen.
 */
export function localFilesOf(plan: Plan): string[] {
  const paths = new Set<string>();
  for (const row of plan.rows)
    for (const value of Object.values(row)) if (typeof value === 'string' && isAbsolute(value)) paths.add(value);
  for (const path of literalMediaPaths(plan)) paths.add(path);
  return [...paths].filter(isFile).sort();
}

export function hashFile(path: string): string | undefined {
  try {
    return createHash('sha256').update(readFileSync(path)).digest('hex');
  } catch {
    return undefined;
  }
}

/** Path → SHA-256 of each file. */
export function hashFiles(paths: string[]): Record<string, string> {
  const hashes: Record<string, string> = {};
  for (const path of paths) {
    const hash = hashFile(path);
    if (hash) hashes[path] = hash;
  }
  return hashes;
}

/** The files whose bytes are no longer those recorded (or that are gone). */
export function changedFiles(recorded: Record<string, string>): string[] {
  return Object.entries(recorded)
    .filter(([path, hash]) => hashFile(path) !== hash)
    .map(([path]) => path);
}
