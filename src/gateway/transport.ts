import { Agent, request, type Dispatcher, type FormData } from 'undici';
import { err, ok, type Result } from '../result.js';
import { abortedFailure, networkFailure, timeoutFailure, type GatewayFailure } from './failures.js';

/** Timeouts of every request, in milliseconds. */
export interface Timeouts {
  /** Opening the connection. Default 10 s. */
  connectMs: number;
  /** From the request fully sent to the answer's headers. Default 60 s: long enough for a 16 MB upload to be stored. */
  headersMs: number;
  /** Silence between two chunks of an answer's body. Default 120 s, for long downloads on slow links. */
  bodyMs: number;
}

export const DEFAULT_TIMEOUTS: Timeouts = { connectMs: 10_000, headersMs: 60_000, bodyMs: 120_000 };

export interface OutgoingRequest {
  method: 'GET' | 'POST' | 'DELETE';
  url: string;
  headers: Record<string, string>;
  body?: string | FormData;
  signal?: AbortSignal;
}

export interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Dispatcher.ResponseData['body'];
}

/** Socket errors raised before anything was sent: the request certainly did not reach the gateway. */
const NEVER_OPENED = new Set([
  'ECONNREFUSED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EADDRNOTAVAIL',
]);

/**
 * Certificates refused in the TLS handshake, before anything was sent: no retry can help, and a
 * "dropped connection" retried for seconds said nothing of the cause.
 */
const CERTIFICATE_REFUSED: Record<string, string> = {
  DEPTH_ZERO_SELF_SIGNED_CERT: 'it is self-signed',
  SELF_SIGNED_CERT_IN_CHAIN: 'its chain ends in a self-signed certificate',
  UNABLE_TO_VERIFY_LEAF_SIGNATURE: 'its issuer is not one Node trusts',
  UNABLE_TO_GET_ISSUER_CERT_LOCALLY: 'its issuer is not one Node trusts',
  UNABLE_TO_GET_ISSUER_CERT: 'its issuer is not one Node trusts',
  CERT_UNTRUSTED: 'it is not trusted',
  CERT_HAS_EXPIRED: 'it has expired',
  CERT_NOT_YET_VALID: 'it is not valid yet',
  CERT_REVOKED: 'it has been revoked',
  ERR_TLS_CERT_ALTNAME_INVALID: 'it is for another host name',
};

/** A certificate the handshake refused: nothing was sent, and sending again will not help. */
function certificateFailure(code: string): GatewayFailure {
  const trust =
    code === 'CERT_HAS_EXPIRED' || code === 'CERT_NOT_YET_VALID' || code === 'ERR_TLS_CERT_ALTNAME_INVALID'
      ? 'check the address and the gateway'
      : "for a gateway behind a private certificate authority, give Node that authority's certificate with NODE_EXTRA_CA_CERTS=/path/to/ca.pem";
  return {
    reason: 'connection-failed',
    message: `the TLS certificate could not be verified (${code}): ${CERTIFICATE_REFUSED[code]}; ${trust}`,
    retryable: false,
    outcomeUnknown: false,
  };
}

function errorCode(error: unknown): string | undefined {
  let current = error as { code?: string; cause?: unknown; errors?: unknown[] } | undefined;
  for (let depth = 0; current && depth < 5; depth++) {
    if (typeof current.code === 'string' && current.code !== 'UND_ERR') return current.code;
    current = (current.cause ?? current.errors?.[0]) as typeof current;
  }
  return undefined;
}

/** Turns what undici threw into the failure union; never echoes headers, so never the key. */
export function classifyError(error: unknown, timeouts: Timeouts, signal: AbortSignal | undefined): GatewayFailure {
  if (signal?.aborted) return abortedFailure(true);
  const code = errorCode(error);
  switch (code) {
    case 'UND_ERR_CONNECT_TIMEOUT':
      return timeoutFailure('connect', timeouts.connectMs);
    case 'UND_ERR_HEADERS_TIMEOUT':
      return timeoutFailure('headers', timeouts.headersMs);
    case 'UND_ERR_BODY_TIMEOUT':
      return timeoutFailure('body', timeouts.bodyMs);
    default:
      break;
  }
  if (code && NEVER_OPENED.has(code)) return networkFailure('connection-failed', `could not connect (${code})`);
  if (code && code in CERTIFICATE_REFUSED) return certificateFailure(code);
  const message = error instanceof Error ? error.message : String(error);
  return networkFailure(
    'connection-dropped',
    `the connection closed before the answer was complete (${code ?? message})`,
  );
}

/** One HTTP exchange over undici, with the configured timeouts. The body is left for the caller to read. */
export class Transport {
  private readonly agent: Agent;

  constructor(readonly timeouts: Timeouts = DEFAULT_TIMEOUTS) {
    this.agent = new Agent({
      connect: { timeout: timeouts.connectMs },
      headersTimeout: timeouts.headersMs,
      bodyTimeout: timeouts.bodyMs,
    });
  }

  async send(outgoing: OutgoingRequest): Promise<Result<Answer, GatewayFailure>> {
    if (outgoing.signal?.aborted) return err(abortedFailure(false));
    try {
      const response = await request(outgoing.url, {
        dispatcher: this.agent,
        method: outgoing.method,
        headers: outgoing.headers,
        body: outgoing.body,
        signal: outgoing.signal,
      });
      return ok({ status: response.statusCode, headers: response.headers, body: response.body });
    } catch (error) {
      return err(classifyError(error, this.timeouts, outgoing.signal));
    }
  }

  /** Reads a whole body as text, at most `maxBytes`. */
  async readText(answer: Answer, maxBytes: number, signal?: AbortSignal): Promise<Result<string, GatewayFailure>> {
    // A length the server declared is one undici holds it to: such a body is read in one call, without
    // the async iterator and its promise a chunk (a batch reads two answers a task).
    if (Number(answer.headers['content-length']) <= maxBytes) {
      try {
        return ok(await answer.body.text());
      } catch (error) {
        return err(classifyError(error, this.timeouts, signal));
      }
    }
    const chunks: Buffer[] = [];
    let size = 0;
    try {
      for await (const chunk of answer.body) {
        size += chunk.length;
        if (size > maxBytes) {
          discard(answer);
          return err(networkFailure('connection-dropped', `the answer was larger than ${maxBytes} bytes`));
        }
        chunks.push(chunk as Buffer);
      }
    } catch (error) {
      return err(classifyError(error, this.timeouts, signal));
    }
    return ok(Buffer.concat(chunks).toString('utf8'));
  }

  close(): Promise<void> {
    return this.agent.close();
  }
}

/** Drops an answer's body without reading it; the error that destroying raises is expected. */
export function discard(answer: Answer): void {
  answer.body.on('error', () => {});
  answer.body.destroy();
}
