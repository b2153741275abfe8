import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { packageRoot } from '../package-root.js';

export type JsonSchema = Record<string, unknown>;

/**
 * A model's slug, `provider/model_id`: each part starts with a letter or digit, then letters,
 * digits, `.`, `_` and `-`. Recipes, the bundled copies and `pipeline models schema` all use it.
 */
export const MODEL_SLUG = /^[A-Za-z0-9][A-Za-z0-9._-]*\/[A-Za-z0-9][A-Za-z0-9._-]*$/;

/** The gateway's own tools, whose request schemas ship under schemas/tools/. */
export type ToolName = 'web-search' | 'web-fetch';

/** The bundled schemas of the recipe language: the recipe's structure and the tools' requests. */
export interface RecipeLanguageSchemas {
  recipe: JsonSchema;
  tools: Record<ToolName, JsonSchema>;
}

/** `schemas/models/{provider}--{model_id}.json`: the copies shipped with the package. */
export function bundledSchemaPath(slug: string): string {
  return join(packageRoot(), 'schemas', 'models', `${slug.replace('/', '--')}.json`);
}

export function readBundledSchema(slug: string): JsonSchema | undefined {
  if (!MODEL_SLUG.test(slug)) return undefined;
  const path = bundledSchemaPath(slug);
  return existsSync(path) ? (JSON.parse(readFileSync(path, 'utf8')) as JsonSchema) : undefined;
}

/** `schemas/recipe.schema.json`: the recipe language's structure, which editors read too. */
export function readRecipeSchema(): JsonSchema {
  return readSchemaFile(join(packageRoot(), 'schemas', 'recipe.schema.json'));
}

/**
 * `schemas/tools/{tool}.json`: a tool's request body. The local gateway validates requests with it
 * and the analyzer checks a step's `with:` against it, so the two cannot drift apart.
 */
export function readToolSchema(tool: ToolName): JsonSchema {
  return readSchemaFile(join(packageRoot(), 'schemas', 'tools', `${tool}.json`));
}

export function readRecipeLanguageSchemas(): RecipeLanguageSchemas {
  return {
    recipe: readRecipeSchema(),
    tools: { 'web-search': readToolSchema('web-search'), 'web-fetch': readToolSchema('web-fetch') },
  };
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
