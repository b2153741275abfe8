import type { LlmProtocol } from './client.js';

/**
 * The wire formats of the text gateway's three protocols: the request body the client sends for
 * an `llm` step, and how the text and token counts are read back from each kind of answer.
 */

type Json = Record<string, unknown>;

/** What an `llm` step asks for, whatever the protocol. */
export interface LlmAsk {
  model: string;
  prompt: string;
  system?: string;
  /** A JSON Schema the answer must fit. */
  schema?: Json;
  max_tokens?: number;
  temperature?: number;
}

export interface LlmUsage {
  input_tokens: number;
  output_tokens: number;
  total_tokens: number;
}

const JSON_INSTRUCTION = 'Answer with JSON only, matching this JSON Schema:';

/** The protocol named by a step, `chat` when it names none it knows. */
export const llmProtocol = (value: unknown): LlmProtocol =>
  value === 'responses' || value === 'messages' ? value : 'chat';

/** The request body of each protocol, asking for JSON that fits `schema` when there is one. */
export function llmRequest(protocol: string, input: Json): Json {
  const { model, system, prompt, schema, max_tokens: maxTokens, temperature } = input as unknown as LlmAsk;
  const extras = { ...(temperature !== undefined ? { temperature } : {}) };
  switch (protocol) {
    case 'responses':
      return {
        model,
        input: prompt,
        ...(system ? { instructions: system } : {}),
        ...(maxTokens ? { max_output_tokens: maxTokens } : {}),
        ...(schema ? { text: { format: { type: 'json_schema', name: 'output', schema, strict: false } } } : {}),
        ...extras,
      };
    case 'messages': {
      // The messages protocol has no structured-output option: the schema goes into the system text.
      const schemaText = schema ? `${JSON_INSTRUCTION}\n\`\`\`json\n${JSON.stringify(schema)}\n\`\`\`` : '';
      const fullSystem = [system, schemaText].filter(Boolean).join('\n\n');
      return {
        model,
        max_tokens: maxTokens ?? 4096,
        messages: [{ role: 'user', content: prompt }],
        ...(fullSystem ? { system: fullSystem } : {}),
        ...extras,
      };
    }
    default:
      return {
        model,
        messages: [...(system ? [{ role: 'system', content: system }] : []), { role: 'user', content: prompt }],
        ...(maxTokens ? { max_tokens: maxTokens } : {}),
        ...(schema
          ? { response_format: { type: 'json_schema', json_schema: { name: 'output', schema, strict: false } } }
          : {}),
        ...extras,
      };
  }
}

const textOf = (parts: unknown): string =>
  Array.isArray(parts)
    ? parts.map((part: { text?: unknown }) => (typeof part?.text === 'string' ? part.text : '')).join('')
    : '';

function answerText(protocol: string, body: Json): string {
  if (protocol === 'chat') {
    const choices = Array.isArray(body.choices) ? (body.choices as Array<{ message?: { content?: unknown } }>) : [];
    const content = choices[0]?.message?.content;
    return typeof content === 'string' ? content : textOf(content);
  }
  if (protocol === 'responses') {
    if (typeof body.output_text === 'string') return body.output_text;
    const output = Array.isArray(body.output) ? (body.output as Array<{ content?: unknown }>) : [];
    return output.map((item) => textOf(item?.content)).join('');
  }
  const content = Array.isArray(body.content) ? (body.content as Array<{ type?: unknown }>) : [];
  return textOf(content.filter((part) => part?.type === 'text'));
}

/** The answer's text and token counts, whatever the protocol; missing fields read as empty and zero. */
export function llmAnswer(protocol: string, body: Json): { text: string; usage: LlmUsage } {
  const usage = (typeof body.usage === 'object' && body.usage !== null ? body.usage : {}) as Record<string, unknown>;
  const count = (...names: string[]) => {
    for (const name of names) if (typeof usage[name] === 'number') return usage[name] as number;
    return undefined;
  };
  const input = count('input_tokens', 'prompt_tokens') ?? 0;
  const output = count('output_tokens', 'completion_tokens') ?? 0;
  return {
    text: answerText(protocol, body),
    usage: { input_tokens: input, output_tokens: output, total_tokens: count('total_tokens') ?? input + output },
  };
}
