import type { GatewayRandom } from '../random.js';
import { invalid, notFound } from '../errors.js';
import { complete, type CompletionRequest } from './text-model.js';

/** `provider/name`: a bare name is answered 404, as the hosted text gateway does. */
const MODEL_ID = /^[A-Za-z0-9][A-Za-z0-9._-]*\/[A-Za-z0-9][A-Za-z0-9._:-]*$/;

export function checkModelId(model: unknown): string {
  if (typeof model !== 'string' || model.length === 0) throw invalid('model is required');
  if (!MODEL_ID.test(model) || model.length > 200) {
    throw notFound(
      `model ${JSON.stringify(model.slice(0, 100))} is not available; text model ids have the form provider/name`,
    );
  }
  return model;
}

type Json = Record<string, unknown>;

const isObject = (value: unknown): value is Json =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** Text of a message `content`: a string, or a list of parts with `text`. */
function contentText(content: unknown, field: string): string {
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) {
    return content
      .map((part, i) => {
        if (!isObject(part)) throw invalid(`${field}[${i}] must be an object`);
        return typeof part.text === 'string' ? part.text : '';
      })
      .join('\n');
  }
  throw invalid(`${field} must be a string or a list of content parts`);
}

interface Conversation {
  /** Every message as `role: text`, one per line. */
  transcript: string;
  /** The last user message, which the answer is about. */
  lastUser: string;
}

function conversation(messages: unknown, field: string): Conversation {
  if (!Array.isArray(messages) || messages.length === 0) throw invalid(`${field} must be a non-empty list of messages`);
  let lastUser = '';
  const lines = messages.map((message, i) => {
    if (!isObject(message) || typeof message.role !== 'string')
      throw invalid(`${field}[${i}] must be an object with a role`);
    const text = contentText(message.content, `${field}[${i}].content`);
    if (message.role === 'user') lastUser = text;
    return `${message.role}: ${text}`;
  });
  return { transcript: lines.join('\n'), lastUser };
}

function schemaOf(value: unknown, field: string): Json {
  if (!isObject(value)) throw invalid(`${field} must be a JSON Schema object`);
  return value;
}

function maxTokens(value: unknown, field: string): number | undefined {
  if (value === undefined || value === null) return undefined;
  if (!Number.isInteger(value) || (value as number) < 1)
    throw invalid(`${field} must be a positive integer (got ${JSON.stringify(value)})`);
  return value as number;
}

function run(request: CompletionRequest) {
  try {
    return complete(request);
  } catch (error) {
    throw invalid(`the JSON Schema could not be used: ${error instanceof Error ? error.message : String(error)}`);
  }
}

const nowSeconds = (ms: number) => Math.floor(ms / 1000);

/** POST {llm_url}/v1/chat/completions, the public Chat Completions shape. */
export function chatCompletion(body: Json, random: GatewayRandom, now: number) {
  const model = checkModelId(body.model);
  if (body.stream === true) throw invalid('stream is not supported by the local gateway; send stream: false');
  const { transcript: prompt, lastUser: focus } = conversation(body.messages, 'messages');
  const format = body.response_format;
  let jsonSchema: Json | undefined;
  if (format !== undefined) {
    if (!isObject(format) || typeof format.type !== 'string')
      throw invalid('response_format must be an object with a type');
    if (format.type === 'json_schema') {
      const spec = format.json_schema;
      if (!isObject(spec)) throw invalid('response_format.json_schema is required when type is json_schema');
      jsonSchema = schemaOf(spec.schema, 'response_format.json_schema.schema');
    } else if (format.type === 'json_object') jsonSchema = { type: 'object' };
    else if (format.type !== 'text')
      throw invalid(
        `response_format.type must be one of text, json_object, json_schema (got ${JSON.stringify(format.type)})`,
      );
  }
  const result = run({
    prompt,
    focus,
    jsonSchema,
    maxTokens: maxTokens(body.max_completion_tokens ?? body.max_tokens, 'max_tokens'),
  });
  return {
    id: `chatcmpl-${random.hex(12)}`,
    object: 'chat.completion',
    created: nowSeconds(now),
    model,
    choices: [
      {
        index: 0,
        message: { role: 'assistant', content: result.text, refusal: null },
        logprobs: null,
        finish_reason: result.truncated ? 'length' : 'stop',
      },
    ],
    usage: {
      prompt_tokens: result.inputTokens,
      completion_tokens: result.outputTokens,
      total_tokens: result.inputTokens + result.outputTokens,
    },
  };
}

/** POST {llm_url}/v1/responses, the public Responses shape. */
export function response(body: Json, random: GatewayRandom, now: number) {
  const model = checkModelId(body.model);
  if (body.stream === true) throw invalid('stream is not supported by the local gateway; send stream: false');
  const input =
    typeof body.input === 'string'
      ? { transcript: `user: ${body.input}`, lastUser: body.input }
      : conversation(body.input, 'input');
  const prompt =
    typeof body.instructions === 'string' ? `system: ${body.instructions}\n${input.transcript}` : input.transcript;
  const focus = input.lastUser;
  let jsonSchema: Json | undefined;
  const format = isObject(body.text) ? body.text.format : undefined;
  if (format !== undefined) {
    if (!isObject(format) || typeof format.type !== 'string')
      throw invalid('text.format must be an object with a type');
    if (format.type === 'json_schema') jsonSchema = schemaOf(format.schema, 'text.format.schema');
    else if (format.type === 'json_object') jsonSchema = { type: 'object' };
    else if (format.type !== 'text')
      throw invalid(
        `text.format.type must be one of text, json_object, json_schema (got ${JSON.stringify(format.type)})`,
      );
  }
  const result = run({ prompt, focus, jsonSchema, maxTokens: maxTokens(body.max_output_tokens, 'max_output_tokens') });
  return {
    id: `resp_${random.hex(12)}`,
    object: 'response',
    created_at: nowSeconds(now),
    status: result.truncated ? 'incomplete' : 'completed',
    incomplete_details: result.truncated ? { reason: 'max_output_tokens' } : null,
    model,
    output: [
      {
        id: `msg_${random.hex(12)}`,
        type: 'message',
        status: 'completed',
        role: 'assistant',
        content: [{ type: 'output_text', text: result.text, annotations: [] }],
      },
    ],
    output_text: result.text,
    usage: {
      input_tokens: result.inputTokens,
      output_tokens: result.outputTokens,
      total_tokens: result.inputTokens + result.outputTokens,
    },
  };
}

/** A JSON Schema given in a messages-style system prompt, in a ```json fence or as the first JSON object. */
export function schemaInSystemText(system: string): Json | undefined {
  const candidates: string[] = [];
  for (const fence of system.matchAll(/```(?:json)?\s*([\s\S]*?)```/g)) candidates.push(fence[1]!);
  const start = system.indexOf('{');
  const end = system.lastIndexOf('}');
  if (start >= 0 && end > start) candidates.push(system.slice(start, end + 1));
  for (const candidate of candidates) {
    try {
      const parsed: unknown = JSON.parse(candidate);
      if (isObject(parsed) && ('type' in parsed || 'properties' in parsed)) return parsed;
    } catch {
      // Not JSON; try the next candidate.
    }
  }
  return undefined;
}

/** POST {llm_url}/v1/messages (and /messages), the public Messages shape. */
export function message(body: Json, random: GatewayRandom) {
  const model = checkModelId(body.model);
  if (body.stream === true) throw invalid('stream is not supported by the local gateway; send stream: false');
  const limit = maxTokens(body.max_tokens, 'max_tokens');
  if (limit === undefined) throw invalid('max_tokens is required');
  const system = body.system === undefined ? '' : contentText(body.system, 'system');
  const { transcript, lastUser: focus } = conversation(body.messages, 'messages');
  const prompt = `${system ? `system: ${system}\n` : ''}${transcript}`;
  const jsonSchema = system ? schemaInSystemText(system) : undefined;
  const result = run({ prompt, focus, jsonSchema, maxTokens: limit });
  return {
    id: `msg_${random.hex(12)}`,
    type: 'message',
    role: 'assistant',
    model,
    content: [{ type: 'text', text: result.text }],
    stop_reason: result.truncated ? 'max_tokens' : 'end_turn',
    stop_sequence: null,
    usage: { input_tokens: result.inputTokens, output_tokens: result.outputTokens },
  };
}
