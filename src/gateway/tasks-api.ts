import { err, ok, type Result } from '../result.js';
import { forSubmission, malformedResponse, type GatewayFailure } from './failures.js';
import { envelopeData, isObject, parseModelSchema, parseModels, parseSubmission, parseTaskResult } from './parse.js';
import { slugPath, type GatewayRequester } from './request-core.js';
import type { Account, ModelEntry, Submission, TaskResult } from './types.js';

type Json = Record<string, unknown>;

/** The account, the models and their schemas, paid submissions and task results. */

export async function account(core: GatewayRequester, signal?: AbortSignal): Promise<Result<Account, GatewayFailure>> {
  const validity = await core.json({ kind: 'read', method: 'GET', url: `${core.base}/apikey/validate`, signal });
  if (!validity.ok) return validity;
  const balance = await core.json({ kind: 'read', method: 'GET', url: `${core.base}/team/balance`, signal });
  if (!balance.ok) return balance;
  const data = envelopeData(validity.value);
  const money = envelopeData(balance.value);
  if (!isObject(money) || typeof money.balance !== 'number')
    return err(malformedResponse(200, 'a balance body without data.balance'));
  return ok({
    isValid: isObject(data) ? data.is_valid !== false : true,
    ...(isObject(data) && typeof data.team === 'string' ? { team: data.team } : {}),
    balanceUsd: money.balance,
  });
}

export async function models(
  core: GatewayRequester,
  signal?: AbortSignal,
): Promise<Result<ModelEntry[], GatewayFailure>> {
  const answer = await core.json({ kind: 'read', method: 'GET', url: `${core.base}/models`, signal });
  if (!answer.ok) return answer;
  const list = parseModels(answer.value);
  return list ? ok(list) : err(malformedResponse(200, 'no list of models'));
}

export async function modelSchema(
  core: GatewayRequester,
  slug: string,
  signal?: AbortSignal,
): Promise<Result<Json, GatewayFailure>> {
  const origin = core.options.endpoints.schemaUrl.replace(/\/+$/, '');
  // The schema endpoint is public: the key is not sent to it.
  const answer = await core.json(
    { kind: 'read', method: 'GET', url: `${origin}/models/${slugPath(slug)}/api_schema`, signal },
    false,
  );
  if (!answer.ok) return answer;
  const schema = parseModelSchema(answer.value);
  return schema
    ? ok(schema)
    : err(malformedResponse(200, 'a schema body without post.requestBody.content.application/json.schema'));
}

export interface SubmitOptions {
  webhookUrl?: string;
  signal?: AbortSignal;
  /**
   * Awaited after the budget granted each attempt, just before the POST leaves: the last moment to
   * record that it is leaving (a worker marks its submission record). If it throws, nothing is sent
   * and `submit` throws that error.
   */
  beforeSend?: () => Promise<void>;
}

export async function submit(
  core: GatewayRequester,
  slug: string,
  input: Json,
  options: SubmitOptions = {},
): Promise<Result<Submission, GatewayFailure>> {
  const { beforeSend } = options;
  const answer = await core.json({
    kind: 'submit',
    method: 'POST',
    url: `${core.base}/${slugPath(slug)}`,
    body: beforeSend
      ? async () => {
          await beforeSend();
          return JSON.stringify(input);
        }
      : () => JSON.stringify(input),
    headers: {
      'Content-Type': 'application/json',
      ...(options.webhookUrl ? { 'X-Webhook-URL': options.webhookUrl } : {}),
    },
    signal: options.signal,
  });
  if (!answer.ok) return answer;
  const submission = parseSubmission(answer.value, slug);
  // A 200 without a task id may still have created a task: that is not a refusal.
  return submission
    ? ok(submission)
    : err(forSubmission(malformedResponse(200, 'a submission answer without data.task_id')));
}

export async function task(
  core: GatewayRequester,
  taskId: string,
  signal?: AbortSignal,
): Promise<Result<TaskResult, GatewayFailure>> {
  const answer = await core.json({
    kind: 'read',
    purpose: 'task-read',
    method: 'GET',
    url: `${core.base}/tasks/${encodeURIComponent(taskId)}`,
    signal,
  });
  if (!answer.ok) return answer;
  const result = parseTaskResult(answer.value, taskId);
  return result ? ok(result) : err(malformedResponse(200, 'a task body without data.status'));
}
