import type { JsonSchema } from '../model-schemas/bundled.js';
import { ANY, INTEGER, list, NUMBER, object, shapeFromSchema, STRING, type Shape } from './shapes.js';

export const BUILTIN_ACTIONS = ['web-search', 'web-fetch', 'llm', 'upload'] as const;
export type BuiltinAction = (typeof BUILTIN_ACTIONS)[number];
export const MODEL_SLUG = /^[A-Za-z0-9][A-Za-z0-9._-]*\/[A-Za-z0-9][A-Za-z0-9._-]*$/;

/** The `with` of each built-in action, checked like a model's input. */
export const ACTION_INPUTS: Record<BuiltinAction, JsonSchema> = {
  'web-search': {
    type: 'object',
    additionalProperties: false,
    required: ['query'],
    properties: {
      query: { type: 'string', minLength: 1, maxLength: 400 },
      depth: { type: 'string', enum: ['lite', 'standard', 'rich'] },
      max_results: { type: 'integer', minimum: 1, maximum: 20 },
      include_domains: { type: 'array', items: { type: 'string' } },
      exclude_domains: { type: 'array', items: { type: 'string' } },
      time_range: { type: 'string', enum: ['day', 'week', 'month', 'year'] },
      topic: { type: 'string', enum: ['general', 'news', 'finance'] },
      country: { type: 'string', pattern: '^[A-Za-z]{2}$', description: 'a two-letter country code' },
      include_answer: { type: 'boolean' },
    },
  },
  'web-fetch': {
    type: 'object',
    additionalProperties: false,
    required: ['urls'],
    properties: { urls: { type: 'array', minItems: 1, items: { type: 'string', minLength: 1 } } },
  },
  llm: {
    type: 'object',
    additionalProperties: false,
    required: ['model', 'prompt'],
    properties: {
      model: { type: 'string', pattern: '^[A-Za-z0-9][A-Za-z0-9._-]*/[A-Za-z0-9][A-Za-z0-9._:-]*$', description: 'a model id of the form provider/name' },
      protocol: { type: 'string', enum: ['chat', 'responses', 'messages'] },
      system: { type: 'string' },
      prompt: { type: 'string', minLength: 1 },
      schema: { type: 'object' },
      max_tokens: { type: 'integer', minimum: 1 },
      temperature: { type: 'number', minimum: 0, maximum: 2 },
    },
  },
  upload: {
    type: 'object',
    additionalProperties: false,
    required: ['path'],
    properties: { path: { type: 'string', minLength: 1 } },
  },
};

const RESOURCE = object({ url: STRING, type: STRING, width: INTEGER, height: INTEGER, format: STRING, role: STRING, path: STRING, duration: NUMBER, size: INTEGER });

/** What a media model's step gives: the task, its resources by kind, and the first primary one. */
export const MODEL_OUTPUTS = object({
  task_id: STRING,
  resources: list(RESOURCE),
  images: list(RESOURCE),
  videos: list(RESOURCE),
  audio: list(RESOURCE),
  url: STRING,
  path: STRING,
  metadata: object({}, true),
});

export const RUN_OUTPUTS = object({ stdout: STRING, stderr: STRING, exit_code: INTEGER, json: ANY });

/** The outputs of a built-in action; `llm` with a `schema` gives `json` that schema's shape. */
export function actionOutputs(action: BuiltinAction, jsonSchema: unknown): Shape {
  switch (action) {
    case 'web-search':
      return object({ results: list(object({ title: STRING, url: STRING, content: STRING, score: NUMBER, published_at: STRING })), answer: STRING });
    case 'web-fetch':
      return object({ pages: list(object({ url: STRING, title: STRING, content: STRING })), failed: list(object({ url: STRING, error: STRING })) });
    case 'llm':
      return object({ text: STRING, json: jsonSchema === undefined ? ANY : shapeFromSchema(jsonSchema), usage: object({ input_tokens: INTEGER, output_tokens: INTEGER, total_tokens: INTEGER }, true) });
    case 'upload':
      return object({ file_id: STRING, url: STRING, type: STRING });
  }
}
