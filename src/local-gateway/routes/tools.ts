import type { FastifyInstance } from 'fastify';
import { teamOf, type GatewayContext } from '../context.js';
import { GatewayError } from '../errors.js';
import {
  WEB_FETCH_SCHEMA,
  WEB_SEARCH_SCHEMA,
  type WebFetchRequest,
  type WebSearchRequest,
} from '../tools/web-tools.js';
import { pageParameter } from './files.js';

/** Web search, web fetch and the team's tool log, under `{tool_url}/v1`. */
export function toolRoutes(app: FastifyInstance, ctx: GatewayContext): void {
  ctx.validator.add('web-search', WEB_SEARCH_SCHEMA).add('web-fetch', WEB_FETCH_SCHEMA);

  /** Runs a tool call and writes it to the team's log, whatever its outcome. */
  async function logged<T extends { results: unknown[]; failed_results?: unknown[] }>(
    team: string,
    tool: 'web-search' | 'web-fetch',
    body: unknown,
    work: () => Promise<T> | T,
  ): Promise<T> {
    const startedAt = ctx.clock.now();
    const request = typeof body === 'object' && body !== null ? body : { body };
    try {
      const result = await work();
      const failed = result.failed_results?.length ?? 0;
      ctx.toolLog.record(team, {
        tool,
        startedAt,
        status: failed === 0 ? 'success' : result.results.length > 0 ? 'partial' : 'failed',
        http_status: 200,
        request,
        result_count: result.results.length,
        failed_count: failed,
        duration_ms: ctx.clock.now() - startedAt,
      });
      return result;
    } catch (error) {
      const status = error instanceof GatewayError ? error.status : 500;
      ctx.toolLog.record(team, {
        tool,
        startedAt,
        status: 'failed',
        http_status: status,
        request,
        result_count: 0,
        failed_count: 0,
        duration_ms: ctx.clock.now() - startedAt,
      });
      throw error;
    }
  }

  app.post('/tools/v1/web-search', async (request) =>
    logged(teamOf(request), 'web-search', request.body, () => {
      ctx.validator.check('web-search', request.body);
      return ctx.web.search(request.body as WebSearchRequest);
    }),
  );

  app.post('/tools/v1/web-fetch', async (request) =>
    logged(teamOf(request), 'web-fetch', request.body, () => {
      ctx.validator.check('web-fetch', request.body);
      return ctx.web.fetch((request.body as WebFetchRequest).urls);
    }),
  );

  app.get<{ Querystring: Record<string, string | undefined> }>('/tools/v1/logs', async (request) => {
    const limit = pageParameter(request.query.limit, 'limit', 50, 1, 100);
    const offset = pageParameter(request.query.offset, 'offset', 0, 0, Number.MAX_SAFE_INTEGER);
    return ctx.toolLog.list(teamOf(request), limit, offset);
  });
}
