import type { FastifyInstance, FastifyReply } from 'fastify';
import type { GatewayContext } from '../context.js';
import { EVENT_STREAM_TYPE, EventStreamBody } from '../event-stream.js';
import { invalid } from '../errors.js';
import { chatCompletion, message, response, type TextReply } from '../llm/protocols.js';

type Json = Record<string, unknown>;

function jsonBody(body: unknown): Json {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw invalid('the body must be a JSON object');
  return body as Json;
}

/** A JSON answer, or server-sent events for `stream: true`; the faults of fault-hooks.ts reach both. */
function send(reply: FastifyReply, answer: TextReply): Json | EventStreamBody {
  if ('json' in answer) return answer.json;
  reply.type(EVENT_STREAM_TYPE).header('Cache-Control', 'no-cache');
  return new EventStreamBody(answer.events);
}

/** The text-model gateway under `{llm_url}`: chat completions, responses and messages. */
export function llmRoutes(app: FastifyInstance, ctx: GatewayContext): void {
  app.post('/llm/v1/chat/completions', async (request, reply) =>
    send(reply, chatCompletion(jsonBody(request.body), ctx.random, ctx.clock.now())),
  );
  app.post('/llm/v1/responses', async (request, reply) =>
    send(reply, response(jsonBody(request.body), ctx.random, ctx.clock.now())),
  );
  // Messages-style clients take `{llm_url}` as their base address and append /v1/messages.
  app.post('/llm/v1/messages', async (request, reply) => send(reply, message(jsonBody(request.body), ctx.random)));
  app.post('/llm/messages', async (request, reply) => send(reply, message(jsonBody(request.body), ctx.random)));
}
