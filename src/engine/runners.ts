import { commandEnvironment } from '../credentials.js';
import { isAbsolute, resolve } from 'node:path';
import { Ajv, type ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';
import { execa } from 'execa';
import type { WebSearchRequest } from '../gateway/client.js';
import { llmAnswer, llmProtocol, llmRequest } from '../gateway/llm-wire.js';
import { err, ok, type Result } from '../result.js';
import { type Command, isShellCommand } from './command.js';
import type { EngineContext } from './context.js';
import { failed, fromGateway, interrupted, type StepFailure } from './failure.js';

type Json = Record<string, unknown>;
/** What a runner gives back: the step's outputs, or why it failed. */
export type RunnerResult<T = unknown> = Promise<Result<T, StepFailure>>;

const ajv = new Ajv({ strict: false, allErrors: true });
addFormats.default(ajv);

/**
 * Each answer schema compiled once: the items of a step render their schema afresh (a new object
 * each time), which Ajv would compile again for every call, a millisecond or more each.
 */
const compiledSchemas = new Map<string, ValidateFunction>();

function answerValidator(schema: object): ValidateFunction {
  const text = JSON.stringify(schema);
  let validate = compiledSchemas.get(text);
  if (!validate) {
    validate = ajv.compile(schema);
    // A long run of distinct schemas must not grow without end.
    if (compiledSchemas.size >= 256) compiledSchemas.clear();
    compiledSchemas.set(text, validate);
  }
  return validate;
}

export async function runWebSearch(ctx: Pick<EngineContext, 'client'>, input: Json, signal: AbortSignal): RunnerResult {
  const answer = await ctx.client.webSearch(input as unknown as WebSearchRequest, signal);
  if (!answer.ok) return err(fromGateway(answer.error, 'web search'));
  return ok({ results: answer.value.results, answer: answer.value.answer });
}

export async function runWebFetch(ctx: Pick<EngineContext, 'client'>, input: Json, signal: AbortSignal): RunnerResult {
  const urls = (Array.isArray(input.urls) ? input.urls : [input.urls]).filter(
    (u): u is string => typeof u === 'string' && u.length > 0,
  );
  if (urls.length === 0) return ok({ pages: [], failed: [] });
  const answer = await ctx.client.webFetch(urls, signal);
  if (!answer.ok) return err(fromGateway(answer.error, 'web fetch'));
  return ok({ pages: answer.value.results, failed: answer.value.failed });
}

export async function runLlm(ctx: Pick<EngineContext, 'client'>, input: Json, signal: AbortSignal): RunnerResult {
  const protocol = llmProtocol(input.protocol);
  const answer = await ctx.client.llm(protocol, llmRequest(protocol, input), signal);
  if (!answer.ok) return err(fromGateway(answer.error, `${protocol} call to ${String(input.model)}`));
  const { text, usage } = llmAnswer(protocol, answer.value);
  if (!input.schema) return ok({ text, json: null, usage });
  const unfenced = text.trim().replace(/^```(?:json)?\s*([\s\S]*?)\s*```$/, '$1');
  let json: unknown;
  try {
    json = JSON.parse(unfenced);
  } catch {
    return failed('invalid-output', `the answer of ${String(input.model)} is not JSON: ${text.slice(0, 200)}`);
  }
  const validate = answerValidator(input.schema as object);
  if (!validate(json))
    return failed(
      'invalid-output',
      `the answer of ${String(input.model)} does not match the step's schema: ${ajv.errorsText(validate.errors)}`,
    );
  return ok({ text, json, usage });
}

export async function runUpload(ctx: EngineContext, input: Json, signal: AbortSignal): RunnerResult {
  const path = String(input.path);
  const entry = await ctx.uploads.upload(isAbsolute(path) ? path : resolve(ctx.plan.recipeDir, path), signal);
  if (!entry.ok) return entry;
  return ok({ file_id: entry.value.fileId, url: entry.value.url, type: entry.value.type });
}

/** The last lines of a command's error output, for a failure message. */
const tail = (text: string) => text.split('\n').slice(-15).join('\n').slice(-2000);

/**
 * A local command in the run's folder: text through the shell (the values of its expressions in
 * its environment), or an argv list as is.
 */
export function runCommand(ctx: EngineContext, command: Command, signal: AbortSignal): RunnerResult {
  return runCommandIn({ cwd: ctx.runDir, env: ctx.env, passEnv: ctx.plan.settings.passEnv }, command, signal);
}

/** The same in any folder (a worker's): `env` is filtered by `passEnv` as for the recipe's commands. */
export async function runCommandIn(
  where: { cwd: string; env: Record<string, string | undefined>; passEnv: readonly string[] },
  command: Command,
  signal: AbortSignal,
): RunnerResult {
  const options = {
    cwd: where.cwd,
    reject: false,
    cancelSignal: signal,
    env: commandEnvironment(where.env, where.passEnv),
    extendEnv: false,
    stripFinalNewline: true,
    maxBuffer: 64 * 1024 * 1024,
  } as const;
  const result = Array.isArray(command)
    ? await execa(String(command[0]), command.slice(1).map(String), options)
    : isShellCommand(command)
      ? await execa(command.script, { ...options, env: { ...options.env, ...command.env }, shell: true })
      : await execa(String(command), { ...options, shell: true });
  if (signal.aborted) return err(interrupted('the command was stopped'));
  const exitCode = result.exitCode ?? -1;
  if (exitCode !== 0) {
    const stderr = result.stderr ? `:\n${tail(String(result.stderr))}` : '';
    return failed(
      'command-failed',
      `the command exited with ${result.exitCode ?? result.signal ?? 'an error'}${stderr}`,
    );
  }
  let json: unknown = null;
  try {
    json = JSON.parse(String(result.stdout));
  } catch {
    json = null;
  }
  return ok({ stdout: String(result.stdout), stderr: String(result.stderr), exit_code: exitCode, json });
}
