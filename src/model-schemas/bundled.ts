import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { packageRoot } from '../package-root.js';

export type JsonSchema = Record<string, unknown>;

/** `schemas/models/{provider}--{model_id}.json`: the copies shipped with the package. */
export function bundledSchemaPath(slug: string): string {
  return join(packageRoot(), 'schemas', 'models', `${slug.replace('/', '--')}.json`);
}

export function readBundledSchema(slug: string): JsonSchema | undefined {
  if (!/^[A-Za-z0-9._-]+\/[A-Za-z0-9._-]+$/.test(slug)) return undefined;
  const path = bundledSchemaPath(slug);
  return existsSync(path) ? (JSON.parse(readFileSync(path, 'utf8')) as JsonSchema) : undefined;
}

/** `schemas/recipe.schema.json`: the recipe language's structure, which editors read too. */
export function readRecipeSchema(): JsonSchema {
  return readSchemaFile(join(packageRoot(), 'schemas', 'recipe.schema.json'));
}

function readSchemaFile(path: string): JsonSchema {
  return JSON.parse(readFileSync(path, 'utf8')) as JsonSchema;
}

/** Slugs of every bundled model. */
export function bundledSlugs(): string[] {
  return readdirSync(join(packageRoot(), 'schemas', 'models'))
    .filter((name) => name.endsWith('.json'))
    .map((name) => name.slice(0, -'.json'.length).replace('--', '/'))
    .sort();
}
