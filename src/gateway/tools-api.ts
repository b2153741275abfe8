import { err, ok, type Result } from '../result.js';
import { malformedResponse, type GatewayFailure } from './failures.js';
import { envelopeData, isObject } from './parse.js';
import { pageQuery, type GatewayRequester } from './request-core.js';
import type { WebSearchRequest } from '../wire/tools.js';

type Json = Record<string, unknown>;

/** The request bodies, typed from schemas/tools/ (the one shape the gateway and this client share). */
export type { WebFetchRequest, WebSearchRequest } from '../wire/tools.js';

export interface WebSearchResult {
  title: string;
  url: string;
  content: string;
  score?: number;
  published_at?: string;
}

export interface WebFetchOutcome {
  results: Array<{ url: string; title: string; content: string }>;
  failed: Array<{ url: string; error: string }>;
}

export type LlmProtocol = 'chat' | 'responses' | 'messages';

const WEB_FETCH_BATCH = 20;
const LLM_PATHS: Record<LlmProtocol, string> = {
  chat: '/v1/chat/completions',
  responses: '/v1/responses',
  messages: '/v1/messages',
};
const JSON_HEADERS = { 'Content-Type': 'application/json' };

/** Web search and fetch, their logs, and the text gateway: calls that create no task. */

export async function webSearch(
  core: GatewayRequester,
  request: WebSearchRequest,
  signal?: AbortSignal,
): Promise<Result<{ results: WebSearchResult[]; answer: string | null }, GatewayFailure>> {
  const answer = await core.json({
    kind: 'call',
    method: 'POST',
    url: `${core.tool}/v1/web-search`,
    body: () => JSON.stringify(request),
    headers: JSON_HEADERS,
    signal,
  });
  if (!answer.ok) return answer;
  const data = envelopeData(answer.value);
  if (!isObject(data) || !Array.isArray(data.results))
    return err(malformedResponse(200, 'a search answer without results'));
  const results = data.results
    .filter(isObject)
    .filter((r) => typeof r.url === 'string') as unknown as WebSearchResult[];
  return ok({ results, answer: typeof data.answer === 'string' ? data.answer : null });
}

export async function webFetch(
  core: GatewayRequester,
  urls: string[],
  signal?: AbortSignal,
): Promise<Result<WebFetchOutcome, GatewayFailure>> {
  const outcome: WebFetchOutcome = { results: [], failed: [] };
  // The endpoint takes at most 20 URLs a request; more are sent as several requests, in order.
  for (let start = 0; start < urls.length; start += WEB_FETCH_BATCH) {
    const batch = urls.slice(start, start + WEB_FETCH_BATCH);
    const answer = await core.json({
      kind: 'call',
      method: 'POST',
      url: `${core.tool}/v1/web-fetch`,
      body: () => JSON.stringify({ urls: batch }),
      headers: JSON_HEADERS,
      signal,
    });
    if (!answer.ok) return answer;
    const data = envelopeData(answer.value);
    if (!isObject(data) || !Array.isArray(data.results))
      return err(malformedResponse(200, 'a fetch answer without results'));
    for (const page of data.results.filter(isObject))
      outcome.results.push({
        url: String(page.url ?? ''),
        title: String(page.title ?? ''),
        content: String(page.content ?? ''),
      });
    const failed = Array.isArray(data.failed_results) ? data.failed_results : [];
    for (const miss of failed.filter(isObject))
      outcome.failed.push({ url: String(miss.url ?? ''), error: String(miss.error ?? 'failed') });
  }
  return ok(outcome);
}

export async function toolLogs(
  core: GatewayRequester,
  page: { limit?: number; offset?: number } = {},
  signal?: AbortSignal,
): Promise<Result<Json, GatewayFailure>> {
  const answer = await core.json({
    kind: 'read',
    method: 'GET',
    url: `${core.tool}/v1/logs${pageQuery(page)}`,
    signal,
  });
  if (!answer.ok) return answer;
  return isObject(answer.value) ? ok(answer.value) : err(malformedResponse(200, 'a log answer that is not an object'));
}

export async function llm(
  core: GatewayRequester,
  protocol: LlmProtocol,
  body: Json,
  signal?: AbortSignal,
): Promise<Result<Json, GatewayFailure>> {
  const base = core.options.endpoints.llmUrl.replace(/\/+$/, '');
  // Billed by the token: an answer cut off may have been paid for, and is not asked for again.
  const answer = await core.json({
    kind: 'paid-call',
    method: 'POST',
    url: `${base}${LLM_PATHS[protocol]}`,
    body: () => JSON.stringify(body),
    headers: JSON_HEADERS,
    signal,
  });
  if (!answer.ok) return answer;
  return isObject(answer.value) ? ok(answer.value) : err(malformedResponse(200, 'a text answer that is not an object'));
}
