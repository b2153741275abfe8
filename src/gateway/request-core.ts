import type { FormData } from 'undici';
import { sleep, systemClock, type Clock } from '../clock.js';
import { err, ok, type Result } from '../result.js';
import {
  abortedFailure,
  forPaidCall,
  forSubmission,
  httpFailure,
  malformedResponse,
  type GatewayFailure,
} from './failures.js';
import { openGate, type RequestGate, type RequestPurpose } from './gate.js';
import { isObject } from './parse.js';
import { parseRateLimit, type RateLimitListener } from './rate-limit-headers.js';
import { DEFAULT_RETRY, mayRetry, retryDelay, type RequestClass, type RetryPolicy } from './retry.js';
import { DEFAULT_TIMEOUTS, Transport, type Answer, type Timeouts } from './transport.js';

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
  /** Told every request sent, with its answer's status (null: no answer), for the run's traffic record. */
  onRequest?: (sent: SentRequest) => void;
  timeouts?: Partial<Timeouts>;
  retry?: Partial<RetryPolicy>;
  /** Jitter source in [0, 1). Default Math.random. */
  random?: () => number;
  /** Largest upload, checked before sending. Default 16 MiB. */
  uploadLimitBytes?: number;
}

export interface SentRequest {
  kind: RequestClass;
  method: 'GET' | 'POST' | 'DELETE';
  url: string;
  status: number | null;
}

export interface Exchange {
  kind: RequestClass;
  /** Its turn at the gate (see RequestGate): `task-read` for a read of a task in flight. Default: `submit` for a submission, else `other`. */
  purpose?: RequestPurpose;
  method: 'GET' | 'POST' | 'DELETE';
  url: string;
  /** Built anew for each attempt: a multipart body is a one-shot stream. */
  body?: () => Promise<string | FormData> | string;
  headers?: Record<string, string>;
  signal?: AbortSignal | undefined;
}

const MAX_JSON_BYTES = 64 * 1024 * 1024;
export const USER_AGENT = 'media-pipeline/0.1';

/**
 * What every endpoint shares: the gate, the transport, retries by request class, the rate-limit
 * headers of every answer, and JSON bodies read into values or failures.
 */
export class GatewayRequester {
  readonly transport: Transport;
  readonly clock: Clock;
  readonly retry: RetryPolicy;
  private readonly gate: RequestGate;
  private readonly random: () => number;

  constructor(readonly options: GatewayClientOptions) {
    this.transport = new Transport({ ...DEFAULT_TIMEOUTS, ...options.timeouts });
    this.clock = options.clock ?? systemClock;
    this.gate = options.gate ?? openGate;
    this.retry = { ...DEFAULT_RETRY, ...options.retry };
    this.random = options.random ?? Math.random;
  }

  get base(): string {
    return this.options.endpoints.baseUrl.replace(/\/+$/, '');
  }

  get tool(): string {
    return this.options.endpoints.toolUrl.replace(/\/+$/, '');
  }

  /** Sends one exchange through the gate, reports its rate-limit headers, parses JSON, and retries as its class allows. */
  async json(exchange: Exchange, authorised = true): Promise<Result<unknown, GatewayFailure>> {
    for (let attempt = 1; ; attempt++) {
      const outcome = await this.attempt(exchange, authorised);
      if (outcome.ok) return outcome;
      const failure = outcome.error;
      if (attempt < this.retry.maxAttempts && mayRetry(exchange.kind, failure)) {
        const waited = await this.backOff(failure, attempt, exchange.signal);
        if (!waited.ok) return err(endingFailure(exchange.kind, waited.error));
        continue;
      }
      return err(endingFailure(exchange.kind, failure));
    }
  }

  /** Waits before attempt `attempt + 1`; an abort while waiting is a failure that sent nothing. */
  async backOff(
    failure: GatewayFailure,
    attempt: number,
    signal: AbortSignal | undefined,
  ): Promise<Result<void, GatewayFailure>> {
    try {
      await sleep(this.clock, retryDelay(failure, attempt, this.retry, this.random), signal);
      return ok(undefined);
    } catch {
      return err(abortedFailure(false));
    }
  }

  close(): Promise<void> {
    return this.transport.close();
  }

  private async attempt(exchange: Exchange, authorised: boolean): Promise<Result<unknown, GatewayFailure>> {
    let release: () => void;
    try {
      release = await this.gate.acquire(
        exchange.signal,
        exchange.purpose ?? (exchange.kind === 'submit' ? 'submit' : 'other'),
      );
    } catch {
      return err(abortedFailure(false));
    }
    try {
      const body = exchange.body ? await exchange.body() : undefined;
      const headers: Record<string, string> = {
        Accept: 'application/json',
        'User-Agent': USER_AGENT,
        ...exchange.headers,
      };
      if (authorised) headers.Authorization = `Bearer ${this.options.apiKey}`;
      const sent = await this.transport.send({
        method: exchange.method,
        url: exchange.url,
        headers,
        ...(body !== undefined ? { body } : {}),
        ...(exchange.signal ? { signal: exchange.signal } : {}),
      });
      const { kind, method, url } = exchange;
      this.options.onRequest?.({ kind, method, url, status: sent.ok ? sent.value.status : null });
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
    const success = answer.status >= 200 && answer.status < 300;
    let body: unknown;
    try {
      body = text.value.length > 0 ? JSON.parse(text.value) : undefined;
    } catch {
      if (success) return err(malformedResponse(answer.status, 'a body that is not valid JSON'));
      return err(httpFailure(answer.status, text.value.slice(0, 200), observation.retryAfterMs));
    }
    if (success) return ok(body);
    return err(httpFailure(answer.status, errorMessageOf(body), observation.retryAfterMs));
  }
}

/** The message of an error body: `{message}` or `{error: {message}}`, else nothing. */
export function errorMessageOf(body: unknown): string {
  if (isObject(body) && typeof body.message === 'string') return body.message;
  if (isObject(body) && isObject(body.error) && typeof body.error.message === 'string') return body.error.message;
  return '';
}

/** `?limit=…&offset=…` for a paged list, or nothing. */
export function pageQuery(page: { limit?: number; offset?: number }): string {
  const query = new URLSearchParams();
  if (page.limit !== undefined) query.set('limit', String(page.limit));
  if (page.offset !== undefined) query.set('offset', String(page.offset));
  return query.size ? `?${query}` : '';
}

/** `provider/model_id` as a URL path; each part is encoded so that an odd slug cannot walk the path. */
export function slugPath(slug: string): string {
  return slug.split('/').map(encodeURIComponent).join('/');
}

/** What the failure that ends an exchange means for money: a paid request's may leave its outcome unknown. */
function endingFailure(kind: RequestClass, failure: GatewayFailure): GatewayFailure {
  if (kind === 'submit') return forSubmission(failure);
  if (kind === 'paid-call') return forPaidCall(failure);
  return failure;
}
