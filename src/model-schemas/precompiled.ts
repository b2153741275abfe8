import { createRequire } from 'node:module';
import { join } from 'node:path';
import type { ValidateFunction } from 'ajv';
import { packageRoot } from '../package-root.js';

/** Which options a validator was compiled with (see ajv-setup.ts). */
export type SchemaUse = 'recipe' | 'model';

/** Each validator's code is evaluated on first use: a command needs few of them. */
type Precompiled = Record<SchemaUse, Map<string, () => ValidateFunction>>;

/** Written by `npm run build` (scripts/compile-schema-validators.mjs), beside the compiled sources. */
export const PRECOMPILED_FILE = join('dist', 'schema-validators.cjs');

let loaded: Precompiled | undefined;

/**
 * The validator the build compiled (Ajv's standalone code) for the schema whose JSON text is `text`,
 * if any: the recipe schema, the bundled model schemas, the tools' and the built-in actions' requests.
 * Keyed by the whole text, so any other schema, a live copy from a gateway that differs in the least,
 * or a build that is missing or older than the schemas, is compiled at run time as before.
 */
export function precompiledValidator(use: SchemaUse, text: string): ValidateFunction | undefined {
  loaded ??= load();
  const validator = loaded[use].get(text);
  if (!validator) return undefined;
  // The same function again for the same text: the analyzer and the engine keep what they are given.
  const made = validator();
  loaded[use].set(text, () => made);
  return made;
}

function load(): Precompiled {
  try {
    const file = join(packageRoot(), PRECOMPILED_FILE);
    const validators = createRequire(import.meta.url)(file) as Record<
      SchemaUse,
      Record<string, () => ValidateFunction>
    >;
    return {
      recipe: new Map(Object.entries(validators.recipe)),
      model: new Map(Object.entries(validators.model)),
    };
  } catch (cause) {
    // Not built (a checkout before `npm run build`): every schema is compiled at run time.
    if ((cause as NodeJS.ErrnoException).code !== 'MODULE_NOT_FOUND') throw cause;
    return { recipe: new Map(), model: new Map() };
  }
}
