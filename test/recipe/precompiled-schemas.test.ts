/**
 * The schemas the package ships are compiled to JavaScript when it is built
 * (scripts/compile-schema-validators.mjs): a start compiles none of them. These tests check that
 * every schema the analyzer uses for the built-in actions has its validator in the build, and that
 * those validators report exactly what a validator compiled at run time reports.
 */
import jsYaml from 'js-yaml';
import { describe, expect, it } from 'vitest';
import { LLM_INPUT_SCHEMA } from '../../src/actions/llm/plan.js';
import { UPLOAD_INPUT_SCHEMA } from '../../src/actions/upload/plan.js';
import { webFetchStepSchema } from '../../src/actions/web-fetch/plan.js';
import { ajvLibrary, modelSchemaAjv, RECIPE_SCHEMA_OPTIONS } from '../../src/model-schemas/ajv-setup.js';
import {
  bundledSlugs,
  type JsonSchema,
  readBundledSchema,
  readRecipeLanguageSchemas,
} from '../../src/model-schemas/bundled.js';
import { precompiledValidator } from '../../src/model-schemas/precompiled.js';
import { INVALID_CASES } from './cases.js';

const language = readRecipeLanguageSchemas();
const requestSchemas: Array<[string, JsonSchema]> = [
  ...bundledSlugs().map((slug): [string, JsonSchema] => [slug, readBundledSchema(slug)!]),
  ['web-search', language.tools['web-search']],
  ['web-fetch (a step: any number of URLs)', webFetchStepSchema(language.tools)],
  ['llm', LLM_INPUT_SCHEMA],
  ['upload', UPLOAD_INPUT_SCHEMA],
];

/** Values of the wrong type, empty, negative or malformed for every field, to draw every kind of error. */
function badInputs(schema: JsonSchema): unknown[] {
  const fields = Object.keys((schema.properties ?? {}) as Record<string, unknown>);
  const each = (value: unknown) => Object.fromEntries(fields.map((field) => [field, value]));
  return [
    {},
    null,
    'text',
    [],
    { not_a_field: 1 },
    each({}),
    each(''),
    each(-1),
    each(1.5),
    each('not a url'),
    each(['']),
  ];
}

describe('validators compiled when the package is built', () => {
  it('cover the recipe schema and every request schema of a built-in action', () => {
    const missing = [
      ...(precompiledValidator('recipe', JSON.stringify(language.recipe)) ? [] : ['recipe.schema.json']),
      ...requestSchemas
        .filter(([, schema]) => !precompiledValidator('model', JSON.stringify(schema)))
        .map(([name]) => name),
    ];
    expect(missing).toEqual([]);
  });

  it('report what a validator compiled at run time reports, for every request schema', () => {
    const ajv = modelSchemaAjv();
    for (const [name, schema] of requestSchemas) {
      const built = precompiledValidator('model', JSON.stringify(schema))!;
      const { $id: _id, ...anonymous } = schema;
      const compiled = ajv.compile(anonymous);
      for (const input of badInputs(schema)) {
        expect(built(input), `${name}: ${JSON.stringify(input)}`).toBe(compiled(input));
        expect(built.errors, `${name}: ${JSON.stringify(input)}`).toEqual(compiled.errors);
      }
    }
  });

  it('report what a validator compiled at run time reports, for every invalid recipe of the tests', () => {
    const built = precompiledValidator('recipe', JSON.stringify(language.recipe))!;
    const compiled = new (ajvLibrary().Ajv)(RECIPE_SCHEMA_OPTIONS).compile(language.recipe);
    let checked = 0;
    for (const { name, yaml } of INVALID_CASES) {
      let recipe: unknown;
      try {
        recipe = jsYaml.load(yaml, { schema: jsYaml.CORE_SCHEMA });
      } catch {
        continue; // a YAML error: the schema never sees it
      }
      expect(built(recipe), name).toBe(compiled(recipe));
      expect(built.errors, name).toEqual(compiled.errors);
      checked++;
    }
    expect(checked).toBeGreaterThan(50);
  });

  it('leave a schema that differs in the least to be compiled at run time', () => {
    const schema = readBundledSchema(bundledSlugs()[0]!)!;
    expect(precompiledValidator('model', JSON.stringify(schema))).toBeDefined();
    expect(precompiledValidator('model', JSON.stringify({ ...schema, title: 'a live copy' }))).toBeUndefined();
  });
});
