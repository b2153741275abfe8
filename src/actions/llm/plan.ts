import type { Ajv } from 'ajv';
import { ajvLibrary } from '../../model-schemas/ajv-setup.js';
import type { JsonSchema } from '../../model-schemas/bundled.js';
import type { LlmStep } from '../../plan.js';
import { error } from '../../recipe/diagnostics.js';
import { ANY, INTEGER, object, shapeFromSchema, STRING } from '../../recipe/shapes.js';
import type { ActionPlan } from '../plan-part.js';
import { CACHED_FOR_GOOD, FREE, namedAs } from '../plan-kit.js';

/** Made when a step first gives a `schema:`, which is checked here: a recipe without one never loads Ajv. */
let ajv: Ajv | undefined;

/** The request the client builds for the LLM call (in the protocol the step names). */
export const LLM_INPUT_SCHEMA: JsonSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['model', 'prompt'],
  properties: {
    model: {
      type: 'string',
      pattern: '^[A-Za-z0-9][A-Za-z0-9._-]*/[A-Za-z0-9][A-Za-z0-9._:-]*$',
      description: 'a model id of the form provider/name',
    },
    protocol: { type: 'string', enum: ['chat', 'responses', 'messages'] },
    system: { type: 'string' },
    prompt: { type: 'string', minLength: 1 },
    schema: { type: 'object' },
    max_tokens: { type: 'integer', minimum: 1 },
    temperature: { type: 'number', minimum: 0, maximum: 2 },
  },
};

/** Keywords that bound a count or a value: with both ends given, the least must not pass the most. */
const BOUNDS = [
  ['minItems', 'maxItems'],
  ['minLength', 'maxLength'],
  ['minProperties', 'maxProperties'],
  ['minimum', 'maximum'],
] as const;

/** A value that is one expression and nothing else (`${{ inputs.count }}`): known only at run time. */
const atRunTime = (value: unknown) => typeof value === 'string' && /^\s*\$\{\{[\s\S]*\}\}\s*$/.test(value);

/**
 * The schema as far as it is known before the run: a value that is an expression as a whole
 * (`maxItems: ${{ inputs.count }}`) is left out, and text holding one (`description`) kept as text.
 * What is left must be a valid JSON Schema too: a `type: arrray` beside an expression is a typo all
 * the same, and the run would send it to be refused.
 */
function knownPart(value: unknown): unknown {
  if (Array.isArray(value)) return value.filter((v) => !atRunTime(v)).map(knownPart);
  if (typeof value !== 'object' || value === null) return value;
  const kept: Record<string, unknown> = {};
  for (const [key, member] of Object.entries(value)) {
    if (atRunTime(member)) continue;
    kept[key] = knownPart(member);
  }
  return kept;
}

/** Where in the schema an Ajv meta-schema error is: `/properties/prompts/type` as path segments. */
const segmentsOf = (pointer: string) =>
  pointer
    .split('/')
    .slice(1)
    .map((part) => part.replaceAll('~1', '/').replaceAll('~0', '~'))
    .map((part) => (/^\d+$/.test(part) ? Number(part) : part));

/** The problems of a step's `schema`, each at its own place: not a JSON Schema, or bounds no answer meets. */
function schemaProblems(schema: unknown): Array<{ at: Array<string | number>; message: string }> {
  const known = knownPart(schema);
  ajv ??= new (ajvLibrary().Ajv)({ strict: false });
  if (!ajv.validateSchema(known as object)) {
    // The meta-schema's first word on each place it faults (`type` fails its enum, then its anyOf).
    const firstAt = new Map<string, { message?: string; params: Record<string, unknown> }>();
    for (const e of ajv.errors ?? []) if (!firstAt.has(e.instancePath)) firstAt.set(e.instancePath, e);
    return [...firstAt].slice(0, 3).map(([pointer, e]) => {
      const at = segmentsOf(pointer);
      const allowed = Array.isArray(e.params.allowedValues) ? ` (${e.params.allowedValues.join(', ')})` : '';
      const field = at.length > 0 ? `${at.at(-1)} ` : '';
      return { at, message: `schema is not a valid JSON Schema: ${field}${e.message}${allowed}` };
    });
  }
  try {
    // What the meta-schema does not see: a pattern that is no regular expression, a $ref to nowhere.
    ajv.compile(known as object);
  } catch (cause) {
    return [{ at: [], message: `schema is not a valid JSON Schema: ${(cause as Error).message}` }];
  }
  const problems: Array<{ at: Array<string | number>; message: string }> = [];
  const walk = (node: unknown, at: Array<string | number>) => {
    if (Array.isArray(node)) {
      for (const [i, member] of node.entries()) walk(member, [...at, i]);
      return;
    }
    if (typeof node !== 'object' || node === null) return;
    const fields = node as Record<string, unknown>;
    for (const [least, most] of BOUNDS)
      if (typeof fields[least] === 'number' && typeof fields[most] === 'number' && fields[least] > fields[most])
        problems.push({
          at: [...at, least],
          message: `${least} ${fields[least]} is more than ${most} ${fields[most]}: no answer can match this schema, and each try would be paid`,
        });
    for (const [key, member] of Object.entries(fields)) walk(member, [...at, key]);
  };
  walk(known, []);
  return problems;
}

/** `uses: llm`: one text call per run; with a `schema`, its `json` output has that schema's shape. */
export const llmPlan: ActionPlan<LlmStep> = {
  ...namedAs('llm'),
  draft: ({ raw, path, file, diagnostics }) => {
    const schemaValue = raw.with?.schema;
    if (schemaValue !== undefined && typeof schemaValue === 'object' && schemaValue !== null)
      for (const problem of schemaProblems(schemaValue))
        diagnostics.push(error(file, file.locate([...path, 'with', 'schema', ...problem.at]), problem.message));
    // The Messages protocol takes a temperature from 0 to 1 (the others up to 2): refused there, and paid for nothing.
    const temperature = raw.with?.temperature;
    if (raw.with?.protocol === 'messages' && typeof temperature === 'number' && temperature > 1)
      diagnostics.push(
        error(
          file,
          file.locate([...path, 'with', 'temperature']),
          `temperature ${temperature} is over 1, the most the messages protocol takes (chat and responses take up to 2)`,
        ),
      );
    return {
      inputSchema: LLM_INPUT_SCHEMA,
      outputs: object({
        text: STRING,
        json: schemaValue === undefined ? ANY : shapeFromSchema(schemaValue),
        usage: object({ input_tokens: INTEGER, output_tokens: INTEGER, total_tokens: INTEGER }, true),
      }),
      mediaFields: [],
    };
  },
  plan: (draft) => ({ action: 'llm', with: draft.with }),
  sendsRequests: true,
  retriesByDefault: true,
  cache: CACHED_FOR_GOOD,
  estimate: (_step, { known }, tally) => {
    tally.requests.text_calls += known;
  },
  price: FREE,
};
