import type { FastifyInstance } from 'fastify';
import { teamOf, type GatewayContext } from '../context.js';
import { invalid, notFound } from '../errors.js';
import { MODEL_BEHAVIOURS } from '../models/index.js';

/** Model submissions, task results, and the account and catalogue reads of the media API. */
export function mediaRoutes(app: FastifyInstance, ctx: GatewayContext): void {
  app.get('/api/v1/apikey/validate', async (request) => ({
    code: 0,
    message: 'success',
    data: { is_valid: true, team: teamOf(request) },
  }));

  app.get('/api/v1/team/balance', async (request) => ({
    code: 0,
    message: 'success',
    data: { balance: Number(ctx.accounts.balanceUsd(teamOf(request)).toFixed(4)), currency: 'USD' },
  }));

  app.get('/api/v1/models', async () => ({
    models: [...ctx.models.values()].map((m) => ({
      slug: m.slug,
      type: m.type,
      docs_url: m.docsUrl,
      description: m.description,
    })),
  }));

  const submit = async (
    request: import('fastify').FastifyRequest<{ Params: { provider: string; model_id: string } }>,
  ) => {
    const slug = `${request.params.provider}/${request.params.model_id}`;
    const model = ctx.models.get(slug);
    const behaviour = MODEL_BEHAVIOURS[slug];
    if (!model || !behaviour)
      throw notFound(`model ${slug} is not available; GET /api/v1/models lists the active models`);
    ctx.validator.check(slug, request.body);
    const webhookUrl = webhookHeader(request.headers['x-webhook-url']);
    const task = await ctx.tasks.submit({
      team: teamOf(request),
      slug,
      input: request.body as Record<string, unknown>,
      behaviour,
      model,
      ...(webhookUrl ? { webhookUrl } : {}),
    });
    return ctx.tasks.submissionBody(task);
  };
  app.post('/api/v1/:provider/:model_id', submit);
  // Model paths once ended in /async; the suffix is still accepted with the same behaviour.
  app.post('/api/v1/:provider/:model_id/async', submit);

  app.get<{ Params: { task_id: string } }>('/api/v1/tasks/:task_id', async (request) => {
    const id = request.params.task_id;
    if (!/^task_[0-9a-f]{24}$/.test(id)) throw notFound(`task ${JSON.stringify(id.slice(0, 80))} does not exist`);
    return ctx.tasks.resultBody(teamOf(request), id);
  });
}

function webhookHeader(value: string | string[] | undefined): string | undefined {
  if (value === undefined) return undefined;
  const text = Array.isArray(value) ? value[0] : value;
  if (!text) return undefined;
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw invalid('X-Webhook-URL must be an absolute http or https URL');
  }
  if ((url.protocol !== 'http:' && url.protocol !== 'https:') || text.length > 2048)
    throw invalid('X-Webhook-URL must be an absolute http or https URL of at most 2048 characters');
  return url.toString();
}
