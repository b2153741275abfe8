import { createRequire } from 'node:module';
import type { Options } from 'ajv';

/**
 * How the analyzer checks a recipe against schemas/recipe.schema.json. The recipe schema is the
 * package's own, checked against the meta-schema by its tests: checking it again, or optimising the
 * code of a schema compiled at run time, would cost more than the check of a recipe. The build
 * compiles it with these options (scripts/compile-schema-validators.mjs), optimised there, so both
 * ways report the same errors.
 */
export const RECIPE_SCHEMA_OPTIONS: Options = {
  allErrors: true,
  strict: false,
  validateSchema: false,
  code: { optimize: false },
};

/** How a model's or a tool's request is checked: every error, with the value and the schema at fault. */
export const MODEL_SCHEMA_OPTIONS: Options = { allErrors: true, strict: false, verbose: true };

/** The formats ajv-formats adds for model schemas: a media field is a `uri`. */
export const MODEL_SCHEMA_FORMATS = ['uri'] as const;

const require = createRequire(import.meta.url);

/**
 * Ajv, loaded on first use: the schemas the package ships are compiled when it is built, so a
 * `validate` or `plan` of a recipe that gives no schema of its own never loads it (loading it and
 * compiling the shipped schemas was a fifth of a small recipe's `validate`).
 */
export function ajvLibrary(): typeof import('ajv') {
  return require('ajv') as typeof import('ajv');
}

/** A new Ajv for model and tool requests, with MODEL_SCHEMA_OPTIONS and the `uri` format. */
export function modelSchemaAjv(): import('ajv').Ajv {
  const ajv = new (ajvLibrary().Ajv)(MODEL_SCHEMA_OPTIONS);
  (require('ajv-formats') as typeof import('ajv-formats')).default(ajv, [...MODEL_SCHEMA_FORMATS]);
  return ajv;
}
