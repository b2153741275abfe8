import { createWriteStream } from 'node:fs';
import { openAsBlob } from 'node:fs';
import { rm, stat } from 'node:fs/promises';
import { basename } from 'node:path';
import { Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { fileTypeFromBuffer, fileTypeFromFile } from 'file-type';
import { FormData } from 'undici';
import { err, ok, type Result } from '../result.js';
import { sleep, systemClock, type Clock } from '../clock.js';
import { abortedFailure, downloadFailure, forSubmission, httpFailure, localFileFailure, malformedResponse, type GatewayFailure } from './failures.js';
import { openGate, type RequestGate } from './gate.js';
import { envelopeData, isObject, parseMediaFile, parseModelSchema, parseModels, parseSubmission, parseTaskResult } from './parse.js';
import { parseRateLimit, type RateLimitListener } from './rate-limit-headers.js';
import { DEFAULT_RETRY, mayRetry, retryDelay, type RequestClass, type RetryPolicy } from './retry.js';
import { DEFAULT_TIMEOUTS, discard, Transport, type Answer, type Timeouts } from './transport.js';
import { formatBytes } from '../format.js';
import type { Account, FileList, MediaFile, ModelEntry, Submission, TaskResult } from './types.js';

type Json = Record<string, unknown>;

export interface GatewayEndpoints {
  /** Media API base, ending in `/api/v1`. */
  baseUrl: string;
  /** Web tools base; requests go to `{toolUrl}/v1/web-search`. */
  toolUrl: string;
  /** Text gateway base; requests go to `{llmUrl}/v1/chat/completions`. */
  llmUrl: string;
  /** Origin of the public schema endpoint. */
  schemaUrl: string;
}

export interface GatewayClientOptions {
  endpoints: GatewayEndpoints;
  apiKey: string;
  /** Default: the system clock. */
  clock?: Clock;
  /** Asked before every request to the gateway. Default: no pacing. */
  gate?: RequestGate;
  /** Told the rate-limit headers of every answer. */
  onRateLimit?: RateLimitListener;
  timeouts?: Partial<Timeouts>;
  retry?: Partial<RetryPolicy>;
  /** Jitter source in [0, 1). Default Math.random. */
  random?: () => number;
  /** Largest upload, checked before sending. Default 16 MiB. */
  uploadLimitBytes?: number;
}

export type LlmProtocol = 'chat' | 'responses' | 'messages';

export interface WebSearchRequest {
  query: string;
  depth?: 'lite' | 'standard' | 'rich';
  max_results?: number;
  include_domains?: string[];
  exclude_domains?: string[];
  time_range?: string;
  topic?: string;
  country?: string;
  include_answer?: boolean;
}

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

export interface Downloaded {
  path: string;
  bytes: number;
  /** Sniffed from the bytes, when recognisable. */
  mime?: string;
}

/** Every endpoint of the gateway. Failures come back as values; nothing here throws for a gateway's answer. */
export interface GatewayClient {
  account(signal?: AbortSignal): Promise<Result<Account, GatewayFailure>>;
  models(signal?: AbortSignal): Promise<Result<ModelEntry[], GatewayFailure>>;
  modelSchema(slug: string, signal?: AbortSignal): Promise<Result<Json, GatewayFailure>>;
  submit(slug: string, input: Json, options?: { webhookUrl?: string; signal?: AbortSignal }): Promise<Result<Submission, GatewayFailure>>;
  task(taskId: string, signal?: AbortSignal): Promise<Result<TaskResult, GatewayFailure>>;
  upload(path: string, signal?: AbortSignal): Promise<Result<MediaFile, GatewayFailure>>;
  files(page?: { limit?: number; offset?: number }, signal?: AbortSignal): Promise<Result<FileList, GatewayFailure>>;
  deleteFile(fileId: string, signal?: AbortSignal): Promise<Result<void, GatewayFailure>>;
  download(url: string, destination: string, options?: { maxBytes?: number; expect?: string }, signal?: AbortSignal): Promise<Result<Downloaded, GatewayFailure>>;
  webSearch(request: WebSearchRequest, signal?: AbortSignal): Promise<Result<{ results: WebSearchResult[]; answer: string | null }, GatewayFailure>>;
  webFetch(urls: string[], signal?: AbortSignal): Promise<Result<WebFetchOutcome, GatewayFailure>>;
  toolLogs(page?: { limit?: number; offset?: number }, signal?: AbortSignal): Promise<Result<Json, GatewayFailure>>;
  llm(protocol: LlmProtocol, body: Json, signal?: AbortSignal): Promise<Result<Json, GatewayFailure>>;
  close(): Promise<void>;
}

const MAX_JSON_BYTES = 64 * 1024 * 1024;
/** Enough of a file's start for file-type to recognise every format it knows. */
const SNIFF_BYTES = 4100;
const WEB_FETCH_BATCH = 20;
const LLM_PATHS: Record<LlmProtocol, string> = { chat: '/v1/chat/completions', responses: '/v1/responses', messages: '/v1/messages' };

interface Exchange {
  kind: RequestClass;
  method: 'GET' | 'POST' | 'DELETE';
  url: string;
  /** Built anew for each attempt: a multipart body is a one-shot stream. */
  body?: () => Promise<string | FormData> | string;
  headers?: Record<string, string>;
  signal?: AbortSignal;
}

export class HttpGatewayClient implements GatewayClient {
  private readonly transport: Transport;
  private readonly clock: Clock;
  private readonly gate: RequestGate;
  private readonly retry: RetryPolicy;
  private readonly random: () => number;
  private readonly uploadLimitBytes: number;

  constructor(private readonly options: GatewayClientOptions) {
    this.transport = new Transport({ ...DEFAULT_TIMEOUTS, ...options.timeouts });
    this.clock = options.clock ?? systemClock;
    this.gate = options.gate ?? openGate;
    this.retry = { ...DEFAULT_RETRY, ...options.retry };
    this.random = options.random ?? Math.random;
    this.uploadLimitBytes = options.uploadLimitBytes ?? 16 * 1024 * 1024;
  }

  private get base() {
    return this.options.endpoints.baseUrl.replace(/\/+$/, '');
  }

  async account(signal?: AbortSignal): Promise<Result<Account, GatewayFailure>> {
    const validity = await this.json({ kind: 'read', method: 'GET', url: `${this.base}/apikey/validate`, signal });
    if (!validity.ok) return validity;
    const balance = await this.json({ kind: 'read', method: 'GET', url: `${this.base}/team/balance`, signal });
    if (!balance.ok) return balance;
    const data = envelopeData(validity.value);
    const money = envelopeData(balance.value);
    if (!isObject(money) || typeof money.balance !== 'number') return err(malformedResponse(200, 'a balance body without data.balance'));
    return ok({
      isValid: isObject(data) ? data.is_valid !== false : true,
      ...(isObject(data) && typeof data.team === 'string' ? { team: data.team } : {}),
      balanceUsd: money.balance,
    });
  }

  async models(signal?: AbortSignal): Promise<Result<ModelEntry[], GatewayFailure>> {
    const answer = await this.json({ kind: 'read', method: 'GET', url: `${this.base}/models`, signal });
    if (!answer.ok) return answer;
    const models = parseModels(answer.value);
    return models ? ok(models) : err(malformedResponse(200, 'no list of models'));
  }

  async modelSchema(slug: string, signal?: AbortSignal): Promise<Result<Json, GatewayFailure>> {
    const origin = this.options.endpoints.schemaUrl.replace(/\/+$/, '');
    const answer = await this.json({ kind: 'read', method: 'GET', url: `${origin}/models/${slugPath(slug)}/api_schema`, signal }, false);
    if (!answer.ok) return answer;
    const schema = parseModelSchema(answer.value);
    return schema ? ok(schema) : err(malformedResponse(200, 'a schema body without post.requestBody.content.application/json.schema'));
  }

  async submit(slug: string, input: Json, options: { webhookUrl?: string; signal?: AbortSignal } = {}): Promise<Result<Submission, GatewayFailure>> {
    const answer = await this.json({
      kind: 'submit',
      method: 'POST',
      url: `${this.base}/${slugPath(slug)}`,
      body: () => JSON.stringify(input),
      headers: { 'Content-Type': 'application/json', ...(options.webhookUrl ? { 'X-Webhook-URL': options.webhookUrl } : {}) },
      signal: options.signal,
    });
    if (!answer.ok) return answer;
    const submission = parseSubmission(answer.value, slug);
    // A 200 without a task id may still have created a task: that is not a refusal.
    return submission ? ok(submission) : err(forSubmission(malformedResponse(200, 'a submission answer without data.task_id')));
  }

  async task(taskId: string, signal?: AbortSignal): Promise<Result<TaskResult, GatewayFailure>> {
    const answer = await this.json({ kind: 'read', method: 'GET', url: `${this.base}/tasks/${encodeURIComponent(taskId)}`, signal });
    if (!answer.ok) return answer;
    const result = parseTaskResult(answer.value, taskId);
    return result ? ok(result) : err(malformedResponse(200, 'a task body without data.status'));
  }

  async upload(path: string, signal?: AbortSignal): Promise<Result<MediaFile, GatewayFailure>> {
    const checked = await checkUploadable(path, this.uploadLimitBytes);
    if (!checked.ok) return checked;
    const answer = await this.json({
      kind: 'call',
      method: 'POST',
      url: `${this.base}/media/files`,
      body: async () => {
        // openAsBlob streams from disk as the request is written: the file is never held in memory.
        const form = new FormData();
        form.append('file', await openAsBlob(path, { type: checked.value }), basename(path));
        return form;
      },
      signal,
    });
    if (!answer.ok) return answer;
    const file = parseMediaFile(answer.value);
    return file ? ok(file) : err(malformedResponse(200, 'an upload answer without file_id and download_url'));
  }

  async files(page: { limit?: number; offset?: number } = {}, signal?: AbortSignal): Promise<Result<FileList, GatewayFailure>> {
    const answer = await this.json({ kind: 'read', method: 'GET', url: `${this.base}/media/files${pageQuery(page)}`, signal });
    if (!answer.ok) return answer;
    const data = envelopeData(answer.value);
    const list = isObject(data) && Array.isArray(data.files) ? data.files : Array.isArray(data) ? data : undefined;
    if (!list) return err(malformedResponse(200, 'a file list without data.files'));
    const files = list.map(parseMediaFile).filter((f): f is MediaFile => f !== undefined);
    const meta = isObject(data) ? data : {};
    return ok({ files, total: typeof meta.total === 'number' ? meta.total : files.length, limit: typeof meta.limit === 'number' ? meta.limit : files.length, offset: typeof meta.offset === 'number' ? meta.offset : 0 });
  }

  async deleteFile(fileId: string, signal?: AbortSignal): Promise<Result<void, GatewayFailure>> {
    const answer = await this.json({ kind: 'read', method: 'DELETE', url: `${this.base}/media/files/${encodeURIComponent(fileId)}`, signal });
    return answer.ok ? ok(undefined) : answer;
  }

  async download(url: string, destination: string, options: { maxBytes?: number; expect?: string } = {}, signal?: AbortSignal): Promise<Result<Downloaded, GatewayFailure>> {
    const maxBytes = options.maxBytes ?? 2 * 1024 ** 3;
    for (let attempt = 1; ; attempt++) {
      const outcome = await this.downloadOnce(url, destination, maxBytes, options.expect, signal);
      if (outcome.ok || attempt >= this.retry.maxAttempts || !mayRetry('read', outcome.error)) return outcome;
      const waited = await this.wait(retryDelay(outcome.error, attempt, this.retry, this.random), signal);
      if (!waited.ok) return waited;
    }
  }

  async webSearch(request: WebSearchRequest, signal?: AbortSignal) {
    const answer = await this.json({ kind: 'call', method: 'POST', url: `${this.tool}/v1/web-search`, body: () => JSON.stringify(request), headers: { 'Content-Type': 'application/json' }, signal });
    if (!answer.ok) return answer;
    const data = envelopeData(answer.value);
    if (!isObject(data) || !Array.isArray(data.results)) return err(malformedResponse(200, 'a search answer without results'));
    const results = data.results.filter(isObject).filter((r) => typeof r.url === 'string') as unknown as WebSearchResult[];
    return ok({ results, answer: typeof data.answer === 'string' ? data.answer : null });
  }

  async webFetch(urls: string[], signal?: AbortSignal): Promise<Result<WebFetchOutcome, GatewayFailure>> {
    const outcome: WebFetchOutcome = { results: [], failed: [] };
    // The endpoint takes at most 20 URLs a request; more are sent as several requests, in order.
    for (let start = 0; start < urls.length; start += WEB_FETCH_BATCH) {
      const batch = urls.slice(start, start + WEB_FETCH_BATCH);
      const answer = await this.json({ kind: 'call', method: 'POST', url: `${this.tool}/v1/web-fetch`, body: () => JSON.stringify({ urls: batch }), headers: { 'Content-Type': 'application/json' }, signal });
      if (!answer.ok) return answer;
      const data = envelopeData(answer.value);
      if (!isObject(data) || !Array.isArray(data.results)) return err(malformedResponse(200, 'a fetch answer without results'));
      for (const page of data.results.filter(isObject)) outcome.results.push({ url: String(page.url ?? ''), title: String(page.title ?? ''), content: String(page.content ?? '') });
      const failed = Array.isArray(data.failed_results) ? data.failed_results : [];
      for (const miss of failed.filter(isObject)) outcome.failed.push({ url: String(miss.url ?? ''), error: String(miss.error ?? 'failed') });
    }
    return ok(outcome);
  }

  async toolLogs(page: { limit?: number; offset?: number } = {}, signal?: AbortSignal) {
    const answer = await this.json({ kind: 'read', method: 'GET', url: `${this.tool}/v1/logs${pageQuery(page)}`, signal });
    if (!answer.ok) return answer;
    return isObject(answer.value) ? ok(answer.value) : err(malformedResponse(200, 'a log answer that is not an object'));
  }

  async llm(protocol: LlmProtocol, body: Json, signal?: AbortSignal) {
    const answer = await this.json({ kind: 'call', method: 'POST', url: `${this.options.endpoints.llmUrl.replace(/\/+$/, '')}${LLM_PATHS[protocol]}`, body: () => JSON.stringify(body), headers: { 'Content-Type': 'application/json' }, signal });
    if (!answer.ok) return answer;
    return isObject(answer.value) ? ok(answer.value) : err(malformedResponse(200, 'a text answer that is not an object'));
  }

  close(): Promise<void> {
    return this.transport.close();
  }

  private get tool() {
    return this.options.endpoints.toolUrl.replace(/\/+$/, '');
  }

  /** Sends one exchange through the gate, reports its rate-limit headers, parses JSON, and retries as its class allows. */
  private async json(exchange: Exchange, authorised = true): Promise<Result<unknown, GatewayFailure>> {
    for (let attempt = 1; ; attempt++) {
      const outcome = await this.attempt(exchange, authorised);
      if (outcome.ok) return outcome;
      const failure = outcome.error;
      if (attempt < this.retry.maxAttempts && mayRetry(exchange.kind, failure)) {
        const waited = await this.wait(retryDelay(failure, attempt, this.retry, this.random), exchange.signal);
        if (!waited.ok) return exchange.kind === 'submit' ? err(forSubmission(waited.error)) : waited;
        continue;
      }
      return err(exchange.kind === 'submit' ? forSubmission(failure) : failure);
    }
  }

  private async attempt(exchange: Exchange, authorised: boolean): Promise<Result<unknown, GatewayFailure>> {
    let release: () => void;
    try {
      release = await this.gate.acquire(exchange.signal);
    } catch {
      return err(abortedFailure(false));
    }
    try {
      const body = exchange.body ? await exchange.body() : undefined;
      const headers: Record<string, string> = { Accept: 'application/json', 'User-Agent': 'media-pipeline/0.1', ...exchange.headers };
      if (authorised) headers.Authorization = `Bearer ${this.options.apiKey}`;
      const sent = await this.transport.send({ method: exchange.method, url: exchange.url, headers, ...(body !== undefined ? { body } : {}), ...(exchange.signal ? { signal: exchange.signal } : {}) });
      if (!sent.ok) return sent;
      return await this.readAnswer(sent.value, exchange.signal);
    } finally {
      release();
    }
  }

  private async readAnswer(answer: Answer, signal: AbortSignal | undefined): Promise<Result<unknown, GatewayFailure>> {
    const observation = parseRateLimit(answer.status, answer.headers, this.clock.now());
    this.options.onRateLimit?.(observation);
    const text = await this.transport.readText(answer, MAX_JSON_BYTES, signal);
    if (!text.ok) return text;
    let body: unknown;
    try {
      body = text.value.length > 0 ? JSON.parse(text.value) : undefined;
    } catch {
      if (answer.status >= 200 && answer.status < 300) return err(malformedResponse(answer.status, 'a body that is not valid JSON'));
      return err(httpFailure(answer.status, text.value.slice(0, 200), observation.retryAfterMs));
    }
    if (answer.status >= 200 && answer.status < 300) return ok(body);
    const message = isObject(body) && typeof body.message === 'string' ? body.message : isObject(body) && isObject(body.error) && typeof body.error.message === 'string' ? body.error.message : '';
    return err(httpFailure(answer.status, message, observation.retryAfterMs));
  }

  private async wait(ms: number, signal: AbortSignal | undefined): Promise<Result<void, GatewayFailure>> {
    try {
      await sleep(this.clock, ms, signal);
      return ok(undefined);
    } catch {
      return err(abortedFailure(false));
    }
  }

  private async downloadOnce(url: string, destination: string, maxBytes: number, expect: string | undefined, signal: AbortSignal | undefined): Promise<Result<Downloaded, GatewayFailure>> {
    // Result links are public; the API key is never sent to them.
    const sent = await this.transport.send({ method: 'GET', url, headers: { 'User-Agent': 'media-pipeline/0.1' }, ...(signal ? { signal } : {}) });
    if (!sent.ok) return sent;
    const answer = sent.value;
    if (answer.status !== 200) {
      const text = await this.transport.readText(answer, 64 * 1024, signal);
      const parsed = text.ok ? safeJson(text.value) : undefined;
      return err(httpFailure(answer.status, isObject(parsed) && typeof parsed.message === 'string' ? parsed.message : '', undefined));
    }
    const declared = String(answer.headers['content-type'] ?? '');
    if (expect && declared && !declared.startsWith(`${expect}/`) && !declared.startsWith('application/octet-stream')) {
      discard(answer);
      return err(downloadFailure(url, `expected ${expect}, the server sent ${declared}`));
    }
    // Written in place: the run's journal records a file only once it is complete.
    const partial = destination;
    let bytes = 0;
    // The first bytes are kept to sniff the type as they pass: the file is not read a second time.
    let head = Buffer.alloc(0);
    const cap = new Transform({
      transform(chunk: Buffer, _encoding, callback) {
        bytes += chunk.length;
        if (head.length < SNIFF_BYTES) head = Buffer.concat([head, chunk.subarray(0, SNIFF_BYTES - head.length)]);
        callback(bytes > maxBytes ? new Error(`larger than ${maxBytes} bytes`) : null, chunk);
      },
    });
    try {
      await pipeline(answer.body, cap, createWriteStream(partial));
    } catch (error) {
      await rm(partial, { force: true });
      if (bytes > maxBytes) return err(downloadFailure(url, `the file is larger than ${maxBytes} bytes`));
      return err(classifyStreamError(error, signal));
    }
    const sniffed = await fileTypeFromBuffer(head);
    if (expect && sniffed && !sniffed.mime.startsWith(`${expect}/`)) {
      await rm(partial, { force: true });
      return err(downloadFailure(url, `expected ${expect}, the bytes are ${sniffed.mime}`));
    }
    return ok({ path: destination, bytes, ...(sniffed ? { mime: sniffed.mime } : {}) });
  }
}

function classifyStreamError(error: unknown, signal: AbortSignal | undefined): GatewayFailure {
  if (signal?.aborted) return abortedFailure(true);
  const code = (error as { code?: string }).code;
  if (code === 'UND_ERR_BODY_TIMEOUT') return { reason: 'timeout', phase: 'body', message: 'the download stalled', retryable: true, outcomeUnknown: false };
  return { reason: 'connection-dropped', message: `the download broke off (${code ?? (error as Error).message})`, retryable: true, outcomeUnknown: false };
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** `?limit=…&offset=…` for a paged list, or nothing. */
function pageQuery(page: { limit?: number; offset?: number }): string {
  const query = new URLSearchParams();
  if (page.limit !== undefined) query.set('limit', String(page.limit));
  if (page.offset !== undefined) query.set('offset', String(page.offset));
  return query.size ? `?${query}` : '';
}

/** `provider/model_id` as a URL path; each part is encoded so that an odd slug cannot walk the path. */
function slugPath(slug: string): string {
  return slug.split('/').map(encodeURIComponent).join('/');
}

/** Before sending: the file exists, fits the upload limit, and its bytes are an image, video or audio. Answers its MIME type. */
export async function checkUploadable(path: string, limitBytes: number): Promise<Result<string, GatewayFailure>> {
  let size: number;
  try {
    const info = await stat(path);
    if (!info.isFile()) return err(localFileFailure(path, `${path} is not a file`));
    size = info.size;
  } catch {
    return err(localFileFailure(path, `${path} does not exist`));
  }
  if (size > limitBytes) return err(localFileFailure(path, `${path} is ${formatBytes(size)}; the upload limit is ${formatBytes(limitBytes)}`));
  const sniffed = await fileTypeFromFile(path);
  const kind = sniffed?.mime.split('/')[0];
  if (!sniffed || (kind !== 'image' && kind !== 'video' && kind !== 'audio')) {
    return err(localFileFailure(path, `${path} is not an image, video or audio file${sniffed ? ` (its bytes are ${sniffed.mime})` : ''}`));
  }
  return ok(sniffed.mime);
}

