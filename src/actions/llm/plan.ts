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

/** `uses: llm`: one text call per run; with a `schema`, its `json` output has that schema's shape. */
export const llmPlan: ActionPlan<LlmStep> = {
  ...namedAs('llm'),
  draft: ({ raw, path, file, diagnostics }) => {
    const schemaValue = raw.with?.schema;
    // A schema with expressions (`maxItems: ${{ inputs.count }}`) is checked once rendered, at run time.
    if (schemaValue !== undefined && !JSON.stringify(schemaValue).includes('${{')) {
      try {
        ajv ??= new (ajvLibrary().Ajv)({ strict: false });
        ajv.compile(schemaValue as object);
      } catch (cause) {
        const reason = (cause as Error).message.replace(/^schema is invalid: /, '').replace(/\bdata\//g, '');
        diagnostics.push(
          error(file, file.locate([...path, 'with', 'schema']), `schema is not a valid JSON Schema: ${reason}`),
        );
      }
    }
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
