import type { ServerSentEvent } from '../event-stream.js';
import type { GatewayRandom } from '../random.js';
import { invalid, notFound } from '../errors.js';
import { complete, type Completion, type CompletionRequest } from './text-model.js';

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
    const at = `${field}[${i}]`;
    // The Responses API's items besides messages: a function call the model made, and its output.
    if (field === 'input' && isObject(message) && message.type === 'function_call') {
      for (const name of ['call_id', 'name', 'arguments'])
        if (typeof message[name] !== 'string') throw invalid(`${at}.${name} must be a string`);
      return `assistant: (called ${String(message.name)} with ${String(message.arguments)})`;
    }
    if (field === 'input' && isObject(message) && message.type === 'function_call_output') {
      for (const name of ['call_id', 'output'])
        if (typeof message[name] !== 'string') throw invalid(`${at}.${name} must be a string`);
      return `tool: ${String(message.output)}`;
    }
    if (!isObject(message) || typeof message.role !== 'string') throw invalid(`${at} must be an object with a role`);
    // Chat Completions: an assistant turn that called tools has no content (null, as the API answers it).
    if (message.role === 'assistant' && Array.isArray(message.tool_calls) && message.content == null) {
      const names = message.tool_calls.map((call) =>
        isObject(call) && isObject(call.function) ? call.function.name : '?',
      );
      return `assistant: (called ${names.join(', ')})`;
    }
    const text = contentText(message.content, `${at}.content`);
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

/** `stop` (Chat Completions: a string or up to 4) or `stop_sequences` (Messages: a list), as strings. */
function stopSequences(value: unknown, field: string, most: number): string[] | undefined {
  if (value === undefined || value === null) return undefined;
  const list = typeof value === 'string' && field === 'stop' ? [value] : value;
  if (!Array.isArray(list) || list.some((s) => typeof s !== 'string' || s.length === 0) || list.length > most)
    throw invalid(
      `${field} must be ${field === 'stop' ? 'a string or ' : ''}a list of at most ${most} non-empty strings`,
    );
  return list as string[];
}

/** `temperature`, a number in the protocol's range, when given. */
function checkTemperature(value: unknown, most: number): void {
  if (value === undefined || value === null) return;
  if (typeof value !== 'number' || !(value >= 0 && value <= most))
    throw invalid(`temperature must be a number from 0 to ${most} (got ${JSON.stringify(value)})`);
}

/**
 * A `tool_choice` that demands a tool call is refused: the built-in models answer in text and call
 * no tools, and a client must not take a text answer for the call it required. With tools offered
 * and the choice left to the model (`auto`), the model answers in text, as a model may.
 */
function refuseRequiredTool(choice: unknown): void {
  if (choice === undefined || choice === null || choice === 'auto' || choice === 'none') return;
  const kind = isObject(choice) ? choice.type : choice;
  if (kind === 'auto' || kind === 'none') return;
  throw invalid(
    `tool_choice ${JSON.stringify(isObject(choice) ? kind : choice)} demands a tool call, and the local gateway's text models call no tools; leave it auto, or none`,
  );
}

const CHAT_ROLES = new Set(['system', 'developer', 'user', 'assistant', 'tool', 'function']);

function run(request: CompletionRequest) {
  try {
    return complete(request);
  } catch (error) {
    throw invalid(`the JSON Schema could not be used: ${error instanceof Error ? error.message : String(error)}`);
  }
}

const nowSeconds = (ms: number) => Math.floor(ms / 1000);

/** A text answer: one JSON body, or (for `stream: true`) the protocol's server-sent events. */
export type TextReply = { json: Json } | { events: ServerSentEvent[] };

/** `stream`: absent, false or true. */
function wantsStream(value: unknown): boolean {
  if (value === undefined || value === null || value === false) return false;
  if (value === true) return true;
  throw invalid(`stream must be true or false (got ${JSON.stringify(value)})`);
}

/**
 * The answer's text in the pieces a stream sends, a word and the space before the next one each:
 * joined, they are the text exactly, so a streamed answer is the same as the answer in one body.
 */
export function textPieces(text: string): string[] {
  return text.length === 0 ? [] : text.split(/(?<=\s)(?=\S)/);
}

/** `stream_options.include_usage`, allowed only on a stream as in the public protocol. */
function includeUsage(options: unknown, stream: boolean): boolean {
  if (options === undefined || options === null) return false;
  if (!stream) throw invalid('stream_options is only allowed when stream is true');
  if (!isObject(options)) throw invalid('stream_options must be an object');
  if (options.include_usage !== undefined && typeof options.include_usage !== 'boolean')
    throw invalid('stream_options.include_usage must be true or false');
  return options.include_usage === true;
}

/** POST {llm_url}/v1/chat/completions, the public Chat Completions shape. */
export function chatCompletion(body: Json, random: GatewayRandom, now: number): TextReply {
  const model = checkModelId(body.model);
  const stream = wantsStream(body.stream);
  const withUsage = includeUsage(body.stream_options, stream);
  checkTemperature(body.temperature, 2);
  refuseRequiredTool(body.tool_choice);
  // Several choices are not made here: refused, rather than answered with one a client would miss.
  if (body.n !== undefined && body.n !== null && body.n !== 1)
    throw invalid(
      `n ${JSON.stringify(body.n)} asks for several choices; the local gateway's text models give one (leave n out, or 1)`,
    );
  if (Array.isArray(body.messages))
    for (const [i, m] of body.messages.entries())
      if (isObject(m) && typeof m.role === 'string' && !CHAT_ROLES.has(m.role))
        throw invalid(
          `messages[${i}].role must be one of ${[...CHAT_ROLES].join(', ')} (got ${JSON.stringify(m.role)})`,
        );
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
    stop: stopSequences(body.stop, 'stop', 4),
  });
  const head = { id: `chatcmpl-${random.hex(12)}`, created: nowSeconds(now), model };
  const finishReason = result.truncated ? 'length' : 'stop';
  const usage = {
    prompt_tokens: result.inputTokens,
    completion_tokens: result.outputTokens,
    total_tokens: result.inputTokens + result.outputTokens,
  };
  if (!stream) {
    return {
      json: {
        id: head.id,
        object: 'chat.completion',
        created: head.created,
        model,
        choices: [
          {
            index: 0,
            message: { role: 'assistant', content: result.text, refusal: null },
            logprobs: null,
            finish_reason: finishReason,
          },
        ],
        usage,
      },
    };
  }
  const chunkHead = {
    id: head.id,
    object: 'chat.completion.chunk',
    created: head.created,
    model,
    system_fingerprint: null,
  };
  const chunk = (delta: Json, finish: string | null): ServerSentEvent => ({
    data: {
      ...chunkHead,
      choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }],
      // With include_usage, every chunk has `usage: null` but the last, which has only the usage.
      ...(withUsage ? { usage: null } : {}),
    },
  });
  return {
    events: [
      chunk({ role: 'assistant', content: '', refusal: null }, null),
      ...textPieces(result.text).map((piece) => chunk({ content: piece }, null)),
      chunk({}, finishReason),
      ...(withUsage ? [{ data: { ...chunkHead, choices: [], usage } }] : []),
      { data: '[DONE]' },
    ],
  };
}

/** POST {llm_url}/v1/responses, the public Responses shape. */
export function response(body: Json, random: GatewayRandom, now: number): TextReply {
  const model = checkModelId(body.model);
  const stream = wantsStream(body.stream);
  checkTemperature(body.temperature, 2);
  refuseRequiredTool(body.tool_choice);
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
  const responseId = `resp_${random.hex(12)}`;
  const messageId = `msg_${random.hex(12)}`;
  const createdAt = nowSeconds(now);
  const status = result.truncated ? 'incomplete' : 'completed';
  const part = (text: string) => ({ type: 'output_text', text, annotations: [] });
  const item = (itemStatus: string, content: Json[]) => ({
    id: messageId,
    type: 'message',
    status: itemStatus,
    role: 'assistant',
    content,
  });
  const responseBody = (state: string, output: Json[], done: Completion | undefined) => ({
    id: responseId,
    object: 'response',
    created_at: createdAt,
    status: state,
    incomplete_details: state === 'incomplete' ? { reason: 'max_output_tokens' } : null,
    model,
    output,
    output_text: done ? done.text : '',
    usage: done
      ? {
          input_tokens: done.inputTokens,
          output_tokens: done.outputTokens,
          total_tokens: done.inputTokens + done.outputTokens,
        }
      : null,
  });
  // A message cut at max_output_tokens is itself `incomplete`, as the response is.
  const finalBody = responseBody(status, [item(status, [part(result.text)])], result);
  if (!stream) return { json: finalBody };
  let sequence = 0;
  const event = (type: string, fields: Json): ServerSentEvent => ({
    event: type,
    data: { type, sequence_number: sequence++, ...fields },
  });
  const at = { item_id: messageId, output_index: 0, content_index: 0 };
  return {
    events: [
      event('response.created', { response: responseBody('in_progress', [], undefined) }),
      event('response.in_progress', { response: responseBody('in_progress', [], undefined) }),
      event('response.output_item.added', { output_index: 0, item: item('in_progress', []) }),
      event('response.content_part.added', { ...at, part: part('') }),
      ...textPieces(result.text).map((delta) => event('response.output_text.delta', { ...at, delta, logprobs: [] })),
      event('response.output_text.done', { ...at, text: result.text, logprobs: [] }),
      event('response.content_part.done', { ...at, part: part(result.text) }),
      event('response.output_item.done', { output_index: 0, item: item(status, [part(result.text)]) }),
      event(`response.${status}`, { response: finalBody }),
    ],
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

/** `output_config.format`, the Messages protocol's structured output: `{type: 'json_schema', schema}`. */
function outputFormatSchema(config: unknown): Json | undefined {
  if (config === undefined || config === null) return undefined;
  if (!isObject(config)) throw invalid('output_config must be an object');
  const format = config.format;
  if (format === undefined || format === null) return undefined;
  if (!isObject(format) || format.type !== 'json_schema')
    throw invalid('output_config.format must be an object with type json_schema');
  return schemaOf(format.schema, 'output_config.format.schema');
}

/** POST {llm_url}/v1/messages (and /messages), the public Messages shape. */
export function message(body: Json, random: GatewayRandom): TextReply {
  const model = checkModelId(body.model);
  const stream = wantsStream(body.stream);
  const limit = maxTokens(body.max_tokens, 'max_tokens');
  if (limit === undefined) throw invalid('max_tokens is required');
  checkTemperature(body.temperature, 1);
  refuseRequiredTool(body.tool_choice);
  const system = body.system === undefined ? '' : contentText(body.system, 'system');
  const { transcript, lastUser: focus } = conversation(body.messages, 'messages');
  const prompt = `${system ? `system: ${system}\n` : ''}${transcript}`;
  const jsonSchema = outputFormatSchema(body.output_config) ?? (system ? schemaInSystemText(system) : undefined);
  const result = run({
    prompt,
    focus,
    jsonSchema,
    maxTokens: limit,
    stop: stopSequences(body.stop_sequences, 'stop_sequences', 8191),
  });
  const id = `msg_${random.hex(12)}`;
  const stopReason = result.truncated ? 'max_tokens' : result.stoppedAt !== undefined ? 'stop_sequence' : 'end_turn';
  const stopSequence = result.stoppedAt ?? null;
  if (!stream) {
    return {
      json: {
        id,
        type: 'message',
        role: 'assistant',
        model,
        content: [{ type: 'text', text: result.text }],
        stop_reason: stopReason,
        stop_sequence: stopSequence,
        usage: { input_tokens: result.inputTokens, output_tokens: result.outputTokens },
      },
    };
  }
  const event = (type: string, fields: Json = {}): ServerSentEvent => ({ event: type, data: { type, ...fields } });
  return {
    events: [
      event('message_start', {
        message: {
          id,
          type: 'message',
          role: 'assistant',
          model,
          content: [],
          stop_reason: null,
          stop_sequence: null,
          usage: { input_tokens: result.inputTokens, output_tokens: 0 },
        },
      }),
      event('content_block_start', { index: 0, content_block: { type: 'text', text: '' } }),
      event('ping'),
      ...textPieces(result.text).map((text) =>
        event('content_block_delta', { index: 0, delta: { type: 'text_delta', text } }),
      ),
      event('content_block_stop', { index: 0 }),
      event('message_delta', {
        delta: { stop_reason: stopReason, stop_sequence: stopSequence },
        usage: { output_tokens: result.outputTokens },
      }),
      event('message_stop'),
    ],
  };
}
