import type { ErrorStatus, GatewayError } from '../errors.js';

/**
 * Errors on the text endpoints, in the public shape of each protocol, because the official SDKs
 * read only that shape: `{"error":{"message","type","param","code"}}` under `/llm/` (Chat
 * Completions, Responses) and `{"type":"error","error":{"type","message"}}` for Messages. The
 * message is the gateway's own `Category: detail`, the status the same as on every other route.
 */

const OPENAI_KINDS: Record<ErrorStatus, { type: string; code: string | null }> = {
  400: { type: 'invalid_request_error', code: null },
  401: { type: 'invalid_request_error', code: 'invalid_api_key' },
  402: { type: 'insufficient_quota', code: 'insufficient_quota' },
  404: { type: 'invalid_request_error', code: 'not_found' },
  405: { type: 'invalid_request_error', code: 'method_not_allowed' },
  413: { type: 'invalid_request_error', code: 'request_too_large' },
  429: { type: 'requests', code: 'rate_limit_exceeded' },
  500: { type: 'server_error', code: null },
  503: { type: 'server_error', code: 'service_unavailable' },
};

const MESSAGES_TYPES: Record<ErrorStatus, string> = {
  400: 'invalid_request_error',
  401: 'authentication_error',
  402: 'billing_error',
  404: 'not_found_error',
  405: 'invalid_request_error',
  413: 'request_too_large',
  429: 'rate_limit_error',
  500: 'api_error',
  503: 'overloaded_error',
};

const TEXT_PREFIX = '/llm/';
/** The Messages endpoint and everything under it (`/count_tokens`, `/batches`): what an Anthropic SDK calls. */
const isMessagesPath = (path: string) =>
  ['/llm/v1/messages', '/llm/messages'].some((base) => path === base || path.startsWith(`${base}/`));

/**
 * The body of an error answer to a request: a text protocol's own shape under `/llm/`, the gateway's
 * elsewhere. Messages' shape on its paths, and for any request an Anthropic SDK sends (it names its
 * `anthropic-version`: `GET /v1/models` is the same path for both SDKs).
 */
export function errorBodyFor(
  request: { url: string; headers: Record<string, unknown> },
  error: GatewayError,
): Record<string, unknown> {
  const path = request.url.split('?')[0]!;
  if (!path.startsWith(TEXT_PREFIX)) return error.body();
  if (isMessagesPath(path) || request.headers['anthropic-version'] !== undefined) {
    return { type: 'error', error: { type: MESSAGES_TYPES[error.status], message: error.message } };
  }
  const { type, code } = OPENAI_KINDS[error.status];
  return { error: { message: error.message, type, param: null, code } };
}
