import { escapeHTML } from './html.js';
import type { FastifyInstance } from 'fastify';
import type { GatewayContext } from '../context.js';
import { GatewayError, invalid } from '../errors.js';
import { parseFault } from '../faults.js';

/** Routes without a key: model schemas, the gateway's small web, and the emulator's own controls. */
export function publicRoutes(app: FastifyInstance, ctx: GatewayContext): void {
  app.get<{ Params: { provider: string; model_id: string } }>(
    '/models/:provider/:model_id/api_schema',
    async (request) => {
      const slug = `${request.params.provider}/${request.params.model_id}`;
      const model = ctx.models.get(slug);
      if (!model) throw new GatewayError(404, `model ${slug.slice(0, 120)} has no published schema`);
      return {
        post: {
          summary: model.title,
          description: model.description,
          requestBody: {
            content: {
              'application/json': {
                schema: model.schema,
                examples: Object.fromEntries(model.examples.map((value, i) => [`example${i + 1}`, { value }])),
              },
            },
          },
        },
      };
    },
  );

  app.get('/web/', async (_request, reply) => {
    const links = ctx.web.pages
      .map((p) => `<li><a href="${p.path}">${escapeHTML(p.title)}</a> (${p.domain}, ${p.publishedAt})</li>`)
      .join('\n');
    return reply
      .type('text/html; charset=utf-8')
      .send(
        `<!doctype html><html><head><title>Local web</title></head><body><h1>Local web</h1><ul>\n${links}\n</ul></body></html>`,
      );
  });

  app.get<{ Params: { domain: string; file: string } }>('/web/:domain/:file', async (request, reply) => {
    const page = ctx.web.page(request.params.domain, request.params.file);
    if (!page) throw new GatewayError(404, 'no such page');
    return reply.type('text/html; charset=utf-8').send(page.html);
  });

  app.get('/__emulator/stats', async () => ctx.stats.snapshot(ctx.accounts.allBalancesUsd()));

  app.get('/__emulator/faults', async () => ({ faults: ctx.faults.pending() }));
  app.post('/__emulator/faults', async (request) => {
    const body = request.body as { faults?: unknown } | undefined;
    const list = Array.isArray(body?.faults) ? body.faults : body ? [body] : [];
    if (list.length === 0) throw invalid('send a fault object, or {"faults":[…]}');
    const parsed = list.map(parseFault);
    for (const fault of parsed) ctx.faults.add(fault);
    return { faults: ctx.faults.pending() };
  });
  // Sets a team's balance, as a recharge would: tests raise it mid-run to show a resume after a 402.
  app.post('/__emulator/balance', async (request) => {
    const body = request.body as { team?: unknown; balance?: unknown } | undefined;
    const team = body?.team;
    const balance = body?.balance;
    if (typeof team !== 'string' || !ctx.accounts.hasTeam(team)) throw invalid('team must name a team of this gateway');
    if (typeof balance !== 'number' || !Number.isFinite(balance) || balance < 0)
      throw invalid('balance must be a number of USD, at least 0');
    ctx.accounts.setBalanceUsd(team, balance);
    return { team, balance: ctx.accounts.balanceUsd(team) };
  });
  app.delete('/__emulator/faults', async (_request, reply) => {
    ctx.faults.clear();
    return reply.code(204).send();
  });
}
