import { Ajv, type ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';
import type { EngineContext } from '../../engine/context.js';
import { failed, fromGateway } from '../../engine/failure.js';
import { llmAnswer, llmProtocol, llmRequest } from '../../gateway/llm-wire.js';
import type { LlmStep } from '../../plan.js';
import { err, ok } from '../../result.js';
import type { ActionRun, RunnerResult } from '../run-part.js';
import { type GatewayCall, gatewayCallRun } from '../run-kit.js';

type Json = Record<string, unknown>;

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

/** An answer as a failure quotes it: its first 300 characters, on one line. */
const shortened = (text: string) => {
  const line = text.replace(/\s+/g, ' ').trim();
  return line.length > 300 ? `${line.slice(0, 300)}… (${line.length} characters)` : line;
};

/** One call in the step's protocol; with a `schema`, its answer parsed and checked. Also what a worker runs. */
export async function runLlm(ctx: Pick<EngineContext, 'client'>, input: Json, signal: AbortSignal): RunnerResult {
  const protocol = llmProtocol(input.protocol);
  const answer = await ctx.client.llm(protocol, llmRequest(protocol, input), signal);
  if (!answer.ok) return err(fromGateway(answer.error, `${protocol} call to ${String(input.model)}`, 'call'));
  const { text, usage } = llmAnswer(protocol, answer.value);
  if (!input.schema) return ok({ text, json: null, usage });
  const unfenced = text.trim().replace(/^```(?:json)?\s*([\s\S]*?)\s*```$/, '$1');
  let json: unknown;
  try {
    json = JSON.parse(unfenced);
  } catch {
    return failed('invalid-output', `the answer of ${String(input.model)} is not JSON: ${shortened(text)}`);
  }
  const validate = answerValidator(input.schema as object);
  if (!validate(json))
    // What it answered goes with it: the journal, the console and the report keep no other copy.
    return failed(
      'invalid-output',
      `the answer of ${String(input.model)} does not match the step's schema: ${ajv.errorsText(validate.errors)}; it answered: ${shortened(unfenced)}`,
    );
  return ok({ text, json, usage });
}

/** Paid and answered in one exchange: never made twice blindly. */
export const llmCall: GatewayCall = { call: runLlm, idempotent: false };

export const llmRun: ActionRun<LlmStep> = gatewayCallRun<LlmStep>('llm', llmCall);
