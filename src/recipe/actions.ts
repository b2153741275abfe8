import type { JsonSchema, ToolName } from '../model-schemas/bundled.js';
import { ANY, INTEGER, list, NUMBER, object, shapeFromSchema, STRING, type Shape } from './shapes.js';

export const BUILTIN_ACTIONS = ['web-search', 'web-fetch', 'llm', 'upload'] as const;
export type BuiltinAction = (typeof BUILTIN_ACTIONS)[number];

/**
 * A web-fetch step may name any number of URLs: the client sends them 20 a request, in order. So the
 * step's `with:` is the tool's request schema without the per-request cap on `urls`.
 */
function webFetchStepSchema(request: JsonSchema): JsonSchema {
  const properties = request.properties as Record<string, JsonSchema>;
  const { maxItems: _perRequest, ...urls } = properties.urls ?? {};
  return { ...request, properties: { ...properties, urls } };
}

const stepSchemas = new WeakMap<Record<ToolName, JsonSchema>, Record<BuiltinAction, JsonSchema>>();

/**
 * The `with` of each built-in action, checked like a model's input: the tools' bundled request
 * schemas (the same files the gateway validates with), and the client-side actions' own.
 */
export function actionInputs(tools: Record<ToolName, JsonSchema>): Record<BuiltinAction, JsonSchema> {
  let schemas = stepSchemas.get(tools);
  if (!schemas) {
    schemas = {
      'web-search': tools['web-search'],
      'web-fetch': webFetchStepSchema(tools['web-fetch']),
      ...CLIENT_ACTION_INPUTS,
    };
    stepSchemas.set(tools, schemas);
  }
  return schemas;
}

/** The actions the client does itself (the LLM call's request it builds; an upload from disk). */
const CLIENT_ACTION_INPUTS: Record<'llm' | 'upload', JsonSchema> = {
  llm: {
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
  },
  upload: {
    type: 'object',
    additionalProperties: false,
    required: ['path'],
    properties: { path: { type: 'string', minLength: 1 } },
  },
};

const RESOURCE = object({
  url: STRING,
  type: STRING,
  width: INTEGER,
  height: INTEGER,
  format: STRING,
  role: STRING,
  path: STRING,
  duration: NUMBER,
  size: INTEGER,
});

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
      return object({
        results: list(object({ title: STRING, url: STRING, content: STRING, score: NUMBER, published_at: STRING })),
        answer: STRING,
      });
    case 'web-fetch':
      return object({
        pages: list(object({ url: STRING, title: STRING, content: STRING })),
        failed: list(object({ url: STRING, error: STRING })),
      });
    case 'llm':
      return object({
        text: STRING,
        json: jsonSchema === undefined ? ANY : shapeFromSchema(jsonSchema),
        usage: object({ input_tokens: INTEGER, output_tokens: INTEGER, total_tokens: INTEGER }, true),
      });
    case 'upload':
      return object({ file_id: STRING, url: STRING, type: STRING });
  }
}
