import { randomUUID } from 'node:crypto';
import multipart from '@fastify/multipart';
import Fastify, { type FastifyInstance, type FastifyRequest } from 'fastify';
import type { GatewayContext } from './context.js';
import { ERROR_CATEGORIES, GatewayError, type ErrorStatus } from './errors.js';
import { injectFaultBefore, injectRandomError, installAfterHandlerFaults, isBlobLink } from './fault-hooks.js';
import { fileRoutes } from './routes/files.js';
import { errorBodyFor } from './llm/error-shapes.js';
import { llmRoutes } from './routes/llm.js';
import { mediaRoutes } from './routes/media.js';
import { publicRoutes } from './routes/public.js';
import { toolRoutes } from './routes/tools.js';

/** Paths served without a key: schemas, the small web, file links and the emulator's controls. */
const PUBLIC_PREFIXES = ['/models/', '/web/', '/files/', '/results/', '/__emulator/'];
const isPublic = (url: string) => PUBLIC_PREFIXES.some((prefix) => url.startsWith(prefix));

/** JSON bodies up to this size; larger ones are answered 413. Uploads have their own limit. */
const JSON_BODY_LIMIT = 32 * 1024 * 1024;

function routeKeyOf(request: FastifyRequest): string {
  const pattern = request.routeOptions.url;
  return pattern ? `${request.method} ${pattern.replace(/:(\w+)/g, '{$1}')}` : `${request.method} (no route)`;
}

function apiKeyOf(request: FastifyRequest): string | undefined {
  const authorization = request.headers.authorization;
  if (authorization) {
    const match = /^Bearer\s+(\S+)\s*$/i.exec(authorization);
    return match?.[1];
  }
  // Messages-style clients send their key as x-api-key.
  const xApiKey = request.headers['x-api-key'];
  return request.url.startsWith('/llm/') && typeof xApiKey === 'string' ? xApiKey : undefined;
}

export async function buildServer(ctx: GatewayContext): Promise<FastifyInstance> {
  const app = Fastify({
    logger: false,
    bodyLimit: JSON_BODY_LIMIT,
    routerOptions: { maxParamLength: 2048 },
    forceCloseConnections: true,
    return503OnClosing: true,
  });
  await app.register(multipart, { limits: { fileSize: ctx.options.uploadLimitBytes, files: 1 } });
  // Only JSON and multipart bodies are accepted; anything else is a 400 that names the type sent.
  app.removeContentTypeParser(['text/plain']);
  app.decorateRequest('team', undefined);
  app.decorateRequest('routeKey', '');
  app.decorateRequest('failAfterHandler', false);
  app.decorateRequest('dropped', false);
  installRequestChecks(app, ctx);
  installAfterHandlerFaults(app, ctx, isPublic);
  app.addHook('onResponse', async (request, reply) => {
    if (!request.dropped) ctx.stats.recordRequest(request.routeKey, reply.statusCode, request.team);
  });
  app.setErrorHandler((error: Error & { code?: string; statusCode?: number }, request, reply) => {
    const gatewayError = toGatewayError(error, request);
    for (const [name, value] of Object.entries(gatewayError.headers)) reply.header(name, value);
    return reply.code(gatewayError.status).type('application/json').send(errorBodyFor(request, gatewayError));
  });
  app.setNotFoundHandler((request, reply) => {
    const error = new GatewayError(404, `no endpoint ${request.method} ${request.url.split('?')[0]!.slice(0, 200)}`);
    return reply.code(404).type('application/json').send(errorBodyFor(request, error));
  });
  publicRoutes(app, ctx);
  mediaRoutes(app, ctx);
  fileRoutes(app, ctx);
  toolRoutes(app, ctx);
  llmRoutes(app, ctx);
  return app;
}

/** Before any handler: the key, the rate limit, and the faults that strike before the work is done. */
function installRequestChecks(app: FastifyInstance, ctx: GatewayContext): void {
  app.addHook('onRequest', async (request, reply) => {
    request.routeKey = routeKeyOf(request);
    // Every text answer, errors included, carries an id the SDKs expose (OpenAI's `_request_id` and
    // `requestID`, Anthropic's `request-id`), as a support ticket would quote it.
    if (request.url.startsWith('/llm/')) {
      const id = `req_${randomUUID().replaceAll('-', '')}`;
      reply.header('x-request-id', id).header('request-id', id);
    }
    if (isPublic(request.url)) {
      if (isBlobLink(request.url) && injectFaultBefore(ctx, request, reply)) return reply;
      return;
    }
    const key = apiKeyOf(request);
    if (!key) throw new GatewayError(401, 'send the header "Authorization: Bearer <API key>"');
    const team = ctx.accounts.teamOf(key);
    if (!team) throw new GatewayError(401, 'the API key is not valid or not active');
    request.team = team;
    const verdict = ctx.rateLimiter.take(key);
    reply.headers(verdict.headers);
    request.retryAfterSeconds = verdict.retryAfterSeconds;
    if (!verdict.allowed) {
      throw new GatewayError(429, ctx.rateLimiter.refusalDetail(verdict.retryAfterSeconds), {
        'Retry-After': String(verdict.retryAfterSeconds),
      });
    }
    if (injectFaultBefore(ctx, request, reply)) return reply;
    injectRandomError(ctx, request);
  });
  // Faults that wait for the body (`body_contains`): once it is read, before the handler.
  app.addHook('preHandler', async (request, reply) => {
    if (request.team === undefined) return;
    if (injectFaultBefore(ctx, request, reply, true)) return reply;
  });
}

/** Fastify's own errors, in the gateway's words; anything unexpected is a 500 that reveals nothing. */
function toGatewayError(error: Error & { code?: string; statusCode?: number }, request: FastifyRequest): GatewayError {
  if (error instanceof GatewayError) return error;
  switch (error.code) {
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return new GatewayError(
        400,
        `Content-Type must be application/json (got ${String(request.headers['content-type'] ?? 'none').slice(0, 80)})`,
      );
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
    case 'FST_REQ_FILE_TOO_LARGE':
      return new GatewayError(413, `the body is larger than ${JSON_BODY_LIMIT} bytes`);
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return new GatewayError(400, 'the JSON body is empty');
    case 'FST_INVALID_MULTIPART_CONTENT_TYPE':
      return new GatewayError(400, 'Content-Type must be multipart/form-data');
    default:
      break;
  }
  if (error instanceof SyntaxError || error.code === 'FST_ERR_CTP_INVALID_JSON_BODY')
    return new GatewayError(400, `the body is not valid JSON (${error.message.slice(0, 120)})`);
  const status = error.statusCode;
  if (status !== undefined && status >= 400 && status < 500 && status in ERROR_CATEGORIES) {
    return new GatewayError(status as ErrorStatus, error.message.slice(0, 200));
  }
  if (status !== undefined && status >= 400 && status < 500) return new GatewayError(400, error.message.slice(0, 200));
  process.emitWarning(
    `local gateway: unexpected error on ${request.method} ${request.url}: ${error.stack ?? error.message}`,
  );
  return new GatewayError(500, 'an unexpected error occurred');
}
