/**
 * Every way a gateway call can fail, as one tagged union. The facts about a failure are data:
 * `retryable` says the failure is transient (the same request could succeed if sent again),
 * `outcomeUnknown` says a paid submission may or may not have been accepted. Whether a request or
 * a step is actually sent again is decided from these facts in one place, the retry policy in
 * retry.ts: a paid submission whose outcome is unknown is never sent again automatically.
 */
export type GatewayFailure =
  | HttpFailure<'invalid-parameters', 400>
  | HttpFailure<'unauthorized', 401>
  | HttpFailure<'insufficient-balance', 402>
  | HttpFailure<'not-found', 404>
  | HttpFailure<'payload-too-large', 413>
  | (HttpFailure<'rate-limited', 429> & { retryAfterMs: number })
  | HttpFailure<'server-error', 500>
  | HttpFailure<'unavailable', 503>
  | HttpFailure<'http-error', number>
  | NetworkFailure<'connection-failed'>
  | NetworkFailure<'connection-dropped'>
  | (NetworkFailure<'timeout'> & { phase: 'connect' | 'headers' | 'body' })
  | (BaseFailure<'malformed-response'> & { status: number })
  | (BaseFailure<'outcome-unknown'> & { cause: GatewayFailure })
  | (BaseFailure<'aborted'> & { sent: boolean })
  | (BaseFailure<'local-file'> & { path: string })
  | (BaseFailure<'download-failed'> & { url: string });

export type FailureReason = GatewayFailure['reason'];

interface BaseFailure<R extends string> {
  reason: R;
  /** One sentence for people; never holds the API key. */
  message: string;
  retryable: boolean;
  outcomeUnknown: boolean;
  retryAfterMs?: number;
}

interface HttpFailure<R extends string, S extends number> extends BaseFailure<R> {
  status: S;
  /** `Invalid parameters` in `Invalid parameters: n must be at most 9`. */
  category: string;
  /** `n must be at most 9`. */
  detail: string;
}

type NetworkFailure<R extends string> = BaseFailure<R>;

const REASON_BY_STATUS: Record<number, FailureReason> = {
  400: 'invalid-parameters',
  401: 'unauthorized',
  402: 'insufficient-balance',
  404: 'not-found',
  413: 'payload-too-large',
  429: 'rate-limited',
  500: 'server-error',
  503: 'unavailable',
};

/** Splits a gateway message `Category: detail`; a message without a colon is all detail. */
export function splitMessage(message: string): { category: string; detail: string } {
  const at = message.indexOf(': ');
  return at > 0 ? { category: message.slice(0, at), detail: message.slice(at + 2) } : { category: '', detail: message };
}

/** The failure for an error answer. 429 and 5xx (other than 501) are retryable for requests that may be repeated. */
export function httpFailure(status: number, message: string, retryAfterMs: number | undefined): GatewayFailure {
  const { category, detail } = splitMessage(message);
  const reason = REASON_BY_STATUS[status] ?? 'http-error';
  const retryable = status === 429 || status === 408 || (status >= 500 && status !== 501);
  const text = `HTTP ${status}${message ? `: ${message}` : ''}`;
  if (reason === 'rate-limited') {
    return {
      reason,
      status: 429,
      category,
      detail,
      message: text,
      retryable: true,
      outcomeUnknown: false,
      retryAfterMs: retryAfterMs ?? 60_000,
    };
  }
  return {
    reason,
    status,
    category,
    detail,
    message: text,
    retryable,
    outcomeUnknown: false,
    ...(retryAfterMs !== undefined ? { retryAfterMs } : {}),
  } as GatewayFailure;
}

export function networkFailure(reason: 'connection-failed' | 'connection-dropped', message: string): GatewayFailure {
  return { reason, message, retryable: true, outcomeUnknown: false };
}

export function timeoutFailure(phase: 'connect' | 'headers' | 'body', ms: number): GatewayFailure {
  return {
    reason: 'timeout',
    phase,
    message: `no ${phase === 'connect' ? 'connection' : phase === 'headers' ? 'answer' : 'complete body'} within ${ms} ms`,
    retryable: true,
    outcomeUnknown: false,
  };
}

export function malformedResponse(status: number, what: string): GatewayFailure {
  return {
    reason: 'malformed-response',
    status,
    message: `the gateway answered HTTP ${status} with ${what}`,
    retryable: true,
    outcomeUnknown: false,
  };
}

/** `sent`: the request had left when it was cancelled, so its effect is unknown. */
export const abortedFailure = (sent: boolean): GatewayFailure => ({
  reason: 'aborted',
  sent,
  message: 'cancelled',
  retryable: false,
  outcomeUnknown: false,
});

export const localFileFailure = (path: string, message: string): GatewayFailure => ({
  reason: 'local-file',
  path,
  message,
  retryable: false,
  outcomeUnknown: false,
});

export const downloadFailure = (url: string, message: string): GatewayFailure => ({
  reason: 'download-failed',
  url,
  message,
  retryable: false,
  outcomeUnknown: false,
});

/**
 * What a submission's failure means for money: a refusal (4xx, 429, a connection that never
 * opened) is certain, anything else may have created a task and becomes `outcome-unknown`.
 */
export function forSubmission(failure: GatewayFailure): GatewayFailure {
  return certainlyRefused(failure)
    ? failure
    : unknownOutcome(failure, 'the submission may or may not have been accepted');
}

/**
 * The same for a text-gateway call, billed by the token: besides a refusal, a 503 is certain (the
 * client retries it as such); a timeout after sending, a dropped answer or another 5xx may have
 * been answered, and billed, and becomes `outcome-unknown`, so that no step retry pays for it again.
 */
export function forPaidCall(failure: GatewayFailure): GatewayFailure {
  if (certainlyRefused(failure) || failure.reason === 'unavailable') return failure;
  return unknownOutcome(failure, 'the call may or may not have been answered, and billed');
}

function certainlyRefused(failure: GatewayFailure): boolean {
  return (
    failure.reason === 'connection-failed' ||
    (failure.reason === 'aborted' && !failure.sent) ||
    (failure.reason === 'timeout' && failure.phase === 'connect') ||
    ('status' in failure && failure.status >= 400 && failure.status < 500)
  );
}

const unknownOutcome = (failure: GatewayFailure, what: string): GatewayFailure => ({
  reason: 'outcome-unknown',
  cause: failure,
  message: `${what} (${failure.message}); it was not sent again`,
  retryable: false,
  outcomeUnknown: true,
});
