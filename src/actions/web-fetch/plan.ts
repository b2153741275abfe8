import type { JsonSchema, ToolName } from '../../model-schemas/bundled.js';
import type { WebFetchStep } from '../../plan.js';
import { knownInputOf } from '../../recipe/estimate-tally.js';
import { list, object, STRING } from '../../recipe/shapes.js';
import type { ActionPlan } from '../plan-part.js';
import { FREE, namedAs, WEB_TTL_MS } from '../plan-kit.js';

/** The client sends a step's URLs this many a request, in order (the tool's cap per request). */
export const URLS_PER_REQUEST = 20;

const OUTPUTS = object({
  pages: list(object({ url: STRING, title: STRING, content: STRING })),
  failed: list(object({ url: STRING, error: STRING })),
});

const stepSchemas = new WeakMap<Record<ToolName, JsonSchema>, JsonSchema>();

/**
 * A web-fetch step may name any number of URLs: the client sends them 20 a request, in order. So the
 * step's `with:` is the tool's request schema without the per-request cap on `urls`.
 */
export function webFetchStepSchema(tools: Record<ToolName, JsonSchema>): JsonSchema {
  let schema = stepSchemas.get(tools);
  if (!schema) {
    const request = tools['web-fetch'];
    const properties = request.properties as Record<string, JsonSchema>;
    const { maxItems: _perRequest, ...urls } = properties.urls ?? {};
    schema = { ...request, properties: { ...properties, urls } };
    stepSchemas.set(tools, schema);
  }
  return schema;
}

/** `uses: web-fetch`: pages read by the gateway, one tool call per 20 URLs. */
export const webFetchPlan: ActionPlan<WebFetchStep> = {
  ...namedAs('web-fetch'),
  draft: ({ deps }) => ({ inputSchema: webFetchStepSchema(deps.schemas.tools), outputs: OUTPUTS, mediaFields: [] }),
  plan: (draft) => ({ action: 'web-fetch', with: draft.with }),
  sendsRequests: true,
  retriesByDefault: true,
  cache: { byDefault: true, ttlMs: WEB_TTL_MS },
  estimate: (step, { plan }, tally) => {
    for (const [i, row] of plan.rows.entries()) {
      const runs = step.runs[i];
      if (runs === 'dynamic' || runs === undefined) continue;
      const urls = knownInputOf(step, row)?.urls;
      const calls = Array.isArray(urls) ? Math.max(1, Math.ceil(urls.length / URLS_PER_REQUEST)) : 1;
      tally.requests.tool_calls += runs * calls;
    }
  },
  price: FREE,
};
