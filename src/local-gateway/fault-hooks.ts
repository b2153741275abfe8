import { Readable, Transform } from 'node:stream';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { GatewayContext } from './context.js';
import { GatewayError, type ErrorStatus } from './errors.js';
import { EventStreamBody } from './event-stream.js';
import type { Fault } from './faults.js';
import { errorBodyFor } from './llm/error-shapes.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** An injected 500 to send after the handler has run, so that its effect (a task) stands. */
    failAfterHandler?: boolean;
    /** The connection was closed on purpose; the request is already counted. */
    dropped?: boolean;
    /** Seconds until the key's rate window resets: what an injected 429 quotes, as a real one does. */
    retryAfterSeconds?: number;
  }
}

/** Public links to stored bytes (uploads and results): no key, but faults reach them like any route. */
const BLOB_PREFIXES = ['/files/', '/results/'];
export const isBlobLink = (url: string) => BLOB_PREFIXES.some((prefix) => url.startsWith(prefix));

/** What a download gets for `malformed-json`: a page of HTML under the media type the link claims. */
const NOT_MEDIA = '<!doctype html><html><head><title>Error</title></head><body>Something went wrong.</body></html>\n';

/** Closes the connection without an answer; the stats count the request under status 0. */
function dropConnection(ctx: GatewayContext, request: FastifyRequest): void {
  request.dropped = true;
  ctx.stats.recordRequest(request.routeKey, 0, request.team);
  request.raw.socket.destroy();
}

/** The request's JSON body as text, for faults with `body_contains`; undefined before it is read. */
const bodyText = (request: FastifyRequest) => (request.body === undefined ? undefined : JSON.stringify(request.body));

/**
 * `status` and `drop-before` faults: before the handler runs, so nothing happens upstream. Once
 * on the request (`onBody` false), and once its body is read, for the faults that match a body.
 */
export function injectFaultBefore(
  ctx: GatewayContext,
  request: FastifyRequest,
  reply: FastifyReply,
  onBody = false,
): boolean {
  const fault = onBody
    ? ctx.faults.take(request.routeKey, ['status', 'drop-before'], bodyText(request), true)
    : ctx.faults.take(request.routeKey, ['status', 'drop-before']);
  if (!fault) return false;
  ctx.stats.faultInjected(fault.kind);
  if (fault.kind === 'drop-before') {
    dropConnection(ctx, request);
    reply.hijack();
    return true;
  }
  // A 429 always says when to retry (Retry-After), as the rate limiter's own does.
  const headers: Record<string, string> =
    fault.status === 429 ? { 'Retry-After': String(request.retryAfterSeconds ?? 1) } : {};
  throw new GatewayError(fault.status as ErrorStatus, `injected fault ${fault.status}`, headers);
}

/** The random `errorRate` of an overloaded or failing gateway, for authenticated routes. */
export function injectRandomError(ctx: GatewayContext, request: FastifyRequest): void {
  if (!ctx.random.chance(ctx.options.errorRate)) return;
  ctx.stats.faultInjected('error-rate');
  // An overloaded gateway refuses before doing anything (503); an internal error may strike
  // before or after the work is done, and then the client cannot tell which (500).
  if (ctx.random.chance(0.5)) throw new GatewayError(503, 'the gateway is overloaded, try again shortly');
  if (ctx.random.chance(0.5)) throw new GatewayError(500, 'an unexpected error occurred');
  request.failAfterHandler = true;
}

/** `drop-after`, `malformed-json` and `delay` faults, and a random 500 after the handler, applied to an answer. */
export function installAfterHandlerFaults(
  app: FastifyInstance,
  ctx: GatewayContext,
  isPublic: (url: string) => boolean,
): void {
  app.addHook('onSend', async (request, reply, payload) => {
    if (reply.statusCode >= 400) return payload;
    const blob = isBlobLink(request.url);
    if (isPublic(request.url) && !blob) return payload;
    if (request.failAfterHandler) {
      reply.code(500).type('application/json');
      return JSON.stringify(errorBodyFor(request, new GatewayError(500, 'an unexpected error occurred')));
    }
    const fault = ctx.faults.take(request.routeKey, ['drop-after', 'malformed-json', 'delay'], bodyText(request));
    if (!fault) return payload;
    ctx.stats.faultInjected(fault.kind);
    if (blob) return blobFault(ctx, fault, request, reply, payload as Readable);
    if (payload instanceof EventStreamBody) return streamFault(ctx, fault, request, payload);
    return apiFault(ctx, fault, request, reply, payload);
  });
}

const waitMs = (ms: number | undefined) => new Promise((resolve) => setTimeout(resolve, ms));

async function apiFault(
  ctx: GatewayContext,
  fault: Fault,
  request: FastifyRequest,
  reply: FastifyReply,
  payload: unknown,
): Promise<unknown> {
  switch (fault.kind) {
    case 'drop-after':
      dropConnection(ctx, request);
      return payload;
    case 'malformed-json':
      reply.type('application/json');
      return '{"code":0,"message":"success","data":{"status":"pend';
    default:
      await waitMs(fault.delay_ms);
      return payload;
  }
}

/**
 * Faults on a stream of server-sent events strike mid-stream, once the status, the headers and
 * half of the events have been sent: `drop-after` closes the connection there, as a stream that
 * breaks off; `delay` pauses there for `delay_ms`, as a stream that stalls, then sends the rest;
 * `malformed-json` sends an event whose data is cut-off JSON and ends the stream there.
 */
function streamFault(ctx: GatewayContext, fault: Fault, request: FastifyRequest, payload: EventStreamBody): Readable {
  const { chunks } = payload;
  const half = Math.floor(chunks.length / 2);
  async function* faulted(): AsyncGenerator<string> {
    yield* chunks.slice(0, half);
    switch (fault.kind) {
      case 'drop-after':
        // After the events already written have left: the client sees a stream that stops short.
        await waitMs(20);
        dropConnection(ctx, request);
        return;
      case 'malformed-json':
        yield cutOff(chunks[half] ?? chunks.at(-1) ?? 'data: {}\n\n');
        return;
      default:
        await waitMs(fault.delay_ms);
        yield* chunks.slice(half);
    }
  }
  return Readable.from(faulted(), { objectMode: false });
}

/**
 * The event as the stream would have sent it (its `event:` line kept, which Responses and Messages
 * clients dispatch on), its data cut off halfway: a client must fail on it, not skip it.
 */
function cutOff(event: string): string {
  const at = event.indexOf('data: ') + 'data: '.length;
  const data = event.slice(at).trimEnd();
  return `${event.slice(0, at)}${data.slice(0, Math.max(1, Math.floor(data.length / 2)))}\n\n`;
}

/**
 * Faults on a file link. `drop-after` sends the headers and half of the bytes, then closes the
 * connection, as a link that breaks off mid-download; `malformed-json` sends a page of HTML under
 * the media type the file claims, as a misconfigured CDN would.
 */
async function blobFault(
  ctx: GatewayContext,
  fault: Fault,
  request: FastifyRequest,
  reply: FastifyReply,
  payload: Readable,
): Promise<unknown> {
  switch (fault.kind) {
    case 'drop-after':
      return cutHalfway(ctx, request, payload, Number(reply.getHeader('content-length') ?? 0));
    case 'malformed-json':
      payload.destroy();
      reply.header('Content-Length', String(Buffer.byteLength(NOT_MEDIA)));
      return NOT_MEDIA;
    default:
      await waitMs(fault.delay_ms);
      return payload;
  }
}

function cutHalfway(ctx: GatewayContext, request: FastifyRequest, payload: Readable, size: number): Readable {
  const half = Math.floor(size / 2);
  let passed = 0;
  const cut = new Transform({
    transform(chunk: Buffer, _encoding, callback) {
      const part = chunk.subarray(0, Math.max(0, half - passed));
      passed += part.length;
      callback(null, part);
      if (passed >= half) {
        payload.destroy();
        // After the part already written has left: the client sees a body that stops short.
        setTimeout(() => dropConnection(ctx, request), 20);
      }
    },
  });
  return payload.pipe(cut);
}
