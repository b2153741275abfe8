import type { FastifyInstance } from 'fastify';
import type { GatewayContext } from '../context.js';
import { invalid } from '../errors.js';
import { chatCompletion, message, response } from '../llm/protocols.js';

type Json = Record<string, unknown>;

function jsonBody(body: unknown): Json {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw invalid('the body must be a JSON object');
  return body as Json;
}

/** The text-model gateway under `{llm_url}`: chat completions, responses and messages. */
export function llmRoutes(app: FastifyInstance, ctx: GatewayContext): void {
  app.post('/llm/v1/chat/completions', async (request) =>
    chatCompletion(jsonBody(request.body), ctx.random, ctx.clock.now()),
  );
  app.post('/llm/v1/responses', async (request) => response(jsonBody(request.body), ctx.random, ctx.clock.now()));
  // Messages-style clients take `{llm_url}` as their base address and append /v1/messages.
  app.post('/llm/v1/messages', async (request) => message(jsonBody(request.body), ctx.random));
  app.post('/llm/messages', async (request) => message(jsonBody(request.body), ctx.random));
}
