import { isAbsolute, resolve } from 'node:path';
import { Ajv } from 'ajv';
import addFormats from 'ajv-formats';
import { execa } from 'execa';
import type { WebSearchRequest } from '../gateway/client.js';
import type { EngineContext } from './context.js';
import { fromGateway, failWith } from './failure.js';

type Json = Record<string, unknown>;
const ajv = new Ajv({ strict: false, allErrors: true });
addFormats.default(ajv);

export async function runWebSearch(ctx: EngineContext, input: Json, signal: AbortSignal) {
  const answer = await ctx.client.webSearch(input as unknown as WebSearchRequest, signal);
  if (!answer.ok) return failWith(fromGateway(answer.error, 'web search'));
  return { results: answer.value.results, answer: answer.value.answer };
}

export async function runWebFetch(ctx: EngineContext, input: Json, signal: AbortSignal) {
  const urls = (Array.isArray(input.urls) ? input.urls : [input.urls]).filter((u): u is string => typeof u === 'string' && u.length > 0);
  if (urls.length === 0) return { pages: [], failed: [] };
  const answer = await ctx.client.webFetch(urls, signal);
  if (!answer.ok) return failWith(fromGateway(answer.error, 'web fetch'));
  return { pages: answer.value.results, failed: answer.value.failed };
}

const JSON_INSTRUCTION = 'Answer with JSON only, matching this JSON Schema:';

/** The request body of each protocol, asking for JSON that fits `schema` when there is one. */
export function llmRequest(protocol: string, input: Json): Json {
  const { model, system, prompt, schema, max_tokens: maxTokens, temperature } = input as { model: string; system?: string; prompt: string; schema?: Json; max_tokens?: number; temperature?: number };
  const extras = { ...(temperature !== undefined ? { temperature } : {}) };
  switch (protocol) {
    case 'responses':
      return { model, input: prompt, ...(system ? { instructions: system } : {}), ...(maxTokens ? { max_output_tokens: maxTokens } : {}), ...(schema ? { text: { format: { type: 'json_schema', name: 'output', schema, strict: false } } } : {}), ...extras };
    case 'messages': {
      const schemaText = schema ? `${JSON_INSTRUCTION}\n\`\`\`json\n${JSON.stringify(schema)}\n\`\`\`` : '';
      const fullSystem = [system, schemaText].filter(Boolean).join('\n\n');
      return { model, max_tokens: maxTokens ?? 4096, messages: [{ role: 'user', content: prompt }], ...(fullSystem ? { system: fullSystem } : {}), ...extras };
    }
    default:
      return {
        model,
        messages: [...(system ? [{ role: 'system', content: system }] : []), { role: 'user', content: prompt }],
        ...(maxTokens ? { max_tokens: maxTokens } : {}),
        ...(schema ? { response_format: { type: 'json_schema', json_schema: { name: 'output', schema, strict: false } } } : {}),
        ...extras,
      };
  }
}

/** The answer's text and token counts, whatever the protocol. */
export function llmAnswer(protocol: string, body: Json): { text: string; usage: { input_tokens: number; output_tokens: number; total_tokens: number } } {
  const usage = (body.usage ?? {}) as Record<string, number | undefined>;
  const input = usage.input_tokens ?? usage.prompt_tokens ?? 0;
  const output = usage.output_tokens ?? usage.completion_tokens ?? 0;
  let text = '';
  if (protocol === 'chat') {
    const choices = (body.choices ?? []) as Array<{ message?: { content?: unknown } }>;
    const content = choices[0]?.message?.content;
    text = typeof content === 'string' ? content : Array.isArray(content) ? content.map((p: { text?: string }) => p.text ?? '').join('') : '';
  } else if (protocol === 'responses') {
    if (typeof body.output_text === 'string') text = body.output_text;
    else text = ((body.output ?? []) as Array<{ content?: Array<{ text?: string }> }>).flatMap((o) => o.content ?? []).map((c) => c.text ?? '').join('');
  } else text = ((body.content ?? []) as Array<{ type?: string; text?: string }>).filter((c) => c.type === 'text').map((c) => c.text ?? '').join('');
  return { text, usage: { input_tokens: input, output_tokens: output, total_tokens: usage.total_tokens ?? input + output } };
}

export async function runLlm(ctx: EngineContext, input: Json, signal: AbortSignal) {
  const protocol = typeof input.protocol === 'string' ? input.protocol : 'chat';
  const answer = await ctx.client.llm(protocol as 'chat' | 'responses' | 'messages', llmRequest(protocol, input), signal);
  if (!answer.ok) return failWith(fromGateway(answer.error, `${protocol} call to ${String(input.model)}`));
  const { text, usage } = llmAnswer(protocol, answer.value);
  if (!input.schema) return { text, json: null, usage };
  const unfenced = text.trim().replace(/^```(?:json)?\s*([\s\S]*?)\s*```$/, '$1');
  let json: unknown;
  try {
    json = JSON.parse(unfenced);
  } catch {
    return failWith({ reason: 'invalid-output', message: `the answer of ${String(input.model)} is not JSON: ${text.slice(0, 200)}`, retryable: true, outcomeUnknown: false });
  }
  const validate = ajv.compile(input.schema as object);
  if (!validate(json)) return failWith({ reason: 'invalid-output', message: `the answer of ${String(input.model)} does not match the step's schema: ${ajv.errorsText(validate.errors)}`, retryable: true, outcomeUnknown: false });
  return { text, json, usage };
}

export async function runUpload(ctx: EngineContext, input: Json, signal: AbortSignal) {
  const path = String(input.path);
  const entry = await ctx.uploads.upload(isAbsolute(path) ? path : resolve(ctx.plan.recipeDir, path), signal);
  return { file_id: entry.fileId, url: entry.url, type: entry.type };
}

/** The last lines of a command's error output, for a failure message. */
const tail = (text: string) => text.split('\n').slice(-15).join('\n').slice(-2000);

/** A local command in the run's folder: a string through the shell, or an argv list as is. */
export async function runCommand(ctx: EngineContext, command: unknown, signal: AbortSignal) {
  const options = { cwd: ctx.runDir, reject: false, cancelSignal: signal, env: ctx.env, extendEnv: false, stripFinalNewline: true, maxBuffer: 64 * 1024 * 1024 } as const;
  const result = Array.isArray(command)
    ? await execa(String(command[0]), command.slice(1).map(String), options)
    : await execa(String(command), { ...options, shell: true });
  if (signal.aborted) return failWith({ reason: 'interrupted', message: 'the command was stopped', retryable: false, outcomeUnknown: false });
  const exitCode = result.exitCode ?? -1;
  if (exitCode !== 0) {
    return failWith({ reason: 'command-failed', message: `the command exited with ${result.exitCode ?? result.signal ?? 'an error'}${result.stderr ? `:\n${tail(String(result.stderr))}` : ''}`, retryable: true, outcomeUnknown: false });
  }
  let json: unknown = null;
  try {
    json = JSON.parse(String(result.stdout));
  } catch {
    json = null;
  }
  return { stdout: String(result.stdout), stderr: String(result.stderr), exit_code: exitCode, json };
}
