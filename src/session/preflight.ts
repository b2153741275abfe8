import { connect } from 'node:net';
import type { Clock } from '../clock.js';
import type { GatewayEndpoints } from '../gateway/client.js';
import type { GatewayFailure } from '../gateway/failures.js';
import type { RequestGate } from '../gateway/gate.js';
import type { RateLimitListener } from '../gateway/rate-limit-headers.js';
import { GatewayRefusal } from './errors.js';

/** A run learns that the gateway is unreachable or refuses the key within this time, before it starts. */
const PREFLIGHT_MS = 4000;
/** A turn in the key's budget awaited longer than this is said on stderr, once: the command is not stuck. */
const TURN_NOTICE_MS = 1000;

const SOCKET_ERRORS: Record<string, string> = {
  ECONNREFUSED: 'connection refused',
  ENOTFOUND: 'no such host (DNS lookup failed)',
  EAI_AGAIN: 'no such host right now (DNS lookup failed)',
  EHOSTUNREACH: 'host unreachable',
  ENETUNREACH: 'network unreachable',
  EADDRNOTAVAIL: 'address not available',
};

function why(failure: GatewayFailure): string {
  const code = /\(([A-Z_]+)\)/.exec(failure.message)?.[1];
  if (code && SOCKET_ERRORS[code]) return SOCKET_ERRORS[code];
  if (failure.reason === 'timeout' || failure.reason === 'aborted') return `no answer within ${PREFLIGHT_MS / 1000} s`;
  return failure.message;
}

/**
 * The web tools and the text gateway, where they are set apart from the media API (PIPELINE_TOOL_URL,
 * PIPELINE_LLM_URL): a connection to each, no request, so that an address nothing listens on fails
 * at once and names its variable, not after a step's retries. One the base URL shares is checked with it.
 */
async function checkOtherOrigins(
  endpoints: GatewayEndpoints,
  flags: { toolUrl?: string; llmUrl?: string },
  uses: { tools: boolean; llm: boolean },
): Promise<void> {
  const base = new URL(endpoints.baseUrl).origin;
  const others = [
    { url: endpoints.toolUrl, source: flags.toolUrl ? '--tool-url' : 'PIPELINE_TOOL_URL', used: uses.tools },
    { url: endpoints.llmUrl, source: flags.llmUrl ? '--llm-url' : 'PIPELINE_LLM_URL', used: uses.llm },
  ].filter(({ url, used }) => used && new URL(url).origin !== base);
  await Promise.all(
    others.map(async ({ url, source }) => {
      const failed = await connectionFailure(new URL(url));
      if (failed)
        throw new GatewayRefusal(
          {
            reason: 'connection-failed',
            message: `${failed}. Is it running there?`,
            retryable: false,
            outcomeUnknown: false,
          },
          `could not connect to ${new URL(url).host} (${source})`,
        );
    }),
  );
}

/** Why a TCP connection to the URL's host and port cannot be made, or nothing when it can. */
function connectionFailure(url: URL): Promise<string | undefined> {
  const port = Number(url.port || (url.protocol === 'https:' ? 443 : 80));
  const host = url.hostname.replace(/^\[|\]$/g, '');
  return new Promise((resolve) => {
    const socket = connect({ host, port, timeout: PREFLIGHT_MS });
    const done = (why: string | undefined) => {
      socket.destroy();
      resolve(why);
    };
    socket.once('connect', () => done(undefined));
    socket.once('timeout', () => done(`no answer within ${PREFLIGHT_MS / 1000} s`));
    socket.once('error', (error: NodeJS.ErrnoException) => done(SOCKET_ERRORS[error.code ?? ''] ?? error.message));
  });
}

/**
 * One request, not retried, before a run is created: an address that cannot be reached or a key
 * the gateway refuses fails at once, naming the address and where it came from. Other answers
 * (a 429, a 5xx) let the run start: its own requests are retried as usual. Answers the team's
 * balance when the gateway gave it, so the run's spend checks need not ask again.
 */
export async function checkGateway(
  endpoints: GatewayEndpoints,
  apiKey: string,
  clock: Clock,
  flags: { baseUrl?: string; apiKey?: string; toolUrl?: string; llmUrl?: string },
  /** What the run calls besides the media API: only those addresses are checked. */
  uses: { tools: boolean; llm: boolean },
  /**
   * The key's budget. The probe is one of the key's requests: sent past the budget, it takes a
   * place in the window that other processes on the key were granted, and one of them gets a 429.
   */
  budget: { gate: RequestGate; onRateLimit: RateLimitListener; warn: (text: string) => void },
): Promise<number | undefined> {
  const { HttpGatewayClient } = await import('../gateway/client.js');
  const timeouts = { connectMs: PREFLIGHT_MS, headersMs: PREFLIGHT_MS, bodyMs: PREFLIGHT_MS };
  const { host } = new URL(endpoints.baseUrl);
  const turns = timedTurns(budget.gate, PREFLIGHT_MS + 500, clock, () =>
    budget.warn(`⏳ waiting for the API key's rate window before checking the gateway at ${host}`),
  );
  const { onRateLimit } = budget;
  const probe = new HttpGatewayClient({
    endpoints,
    apiKey,
    clock,
    timeouts,
    retry: { maxAttempts: 0 },
    gate: turns.gate,
    onRateLimit,
  });
  const source = flags.baseUrl ? '--base-url' : 'PIPELINE_BASE_URL';
  try {
    const answer = await probe.account(turns.signal);
    if (!answer.ok) {
      const failure = answer.error;
      if (failure.reason === 'connection-failed' || failure.reason === 'timeout' || failure.reason === 'aborted') {
        // A refused certificate (a connection not opened that no retry can help) says its own cause.
        const refusedCertificate = failure.reason === 'connection-failed' && !failure.retryable;
        const hint = refusedCertificate ? '' : '. Is the gateway running there? --local uses the built-in one';
        throw new GatewayRefusal(
          { ...failure, message: `${why(failure)}${hint}` },
          `could not connect to ${host} (${source})`,
        );
      }
      if ('status' in failure && (failure.status === 401 || failure.status === 403)) {
        const key = flags.apiKey ? '--api-key' : 'PIPELINE_API_KEY';
        throw new GatewayRefusal(failure, `the gateway at ${host} refused the API key (${key}); nothing was run`);
      }
    }
    await checkOtherOrigins(endpoints, flags, uses);
    return answer.ok ? answer.value.balanceUsd : undefined;
  } finally {
    turns.stop();
    await probe.close();
  }
}

/**
 * The budget's turns for the probe's requests, one at a time, and a signal that aborts a request
 * out for longer than `limitMs` (a gateway that accepts the connection and then says nothing, or
 * drips its answer). The wait for a turn is not counted: a window spent by the run's other
 * processes on the key is a wait, not a gateway that does not answer. A wait past TURN_NOTICE_MS
 * calls `onLongWait`, once.
 */
function timedTurns(budget: RequestGate, limitMs: number, clock: Clock, onLongWait: () => void) {
  const deadline = new AbortController();
  let timer: NodeJS.Timeout | undefined;
  let told = false;
  const stop = () => clearTimeout(timer);
  const gate: RequestGate = {
    async acquire(_signal, purpose) {
      const notice = clock.setTimer(TURN_NOTICE_MS, () => {
        if (!told) onLongWait();
        told = true;
      });
      const release = await budget.acquire(undefined, purpose).finally(() => clock.clearTimer(notice));
      timer = setTimeout(() => deadline.abort(), limitMs);
      return () => {
        stop();
        release();
      };
    },
  };
  return { gate, signal: deadline.signal, stop };
}
