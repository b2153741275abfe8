import type { WebSearchStep } from '../../plan.js';
import { list, NUMBER, object, STRING } from '../../recipe/shapes.js';
import type { ActionPlan } from '../plan-part.js';
import { FREE, namedAs, WEB_TTL_MS } from '../plan-kit.js';

const OUTPUTS = object({
  results: list(object({ title: STRING, url: STRING, content: STRING, score: NUMBER, published_at: STRING })),
  answer: STRING,
});

/** `uses: web-search`: one tool call per run, its `with:` the tool's request (the gateway's own schema). */
export const webSearchPlan: ActionPlan<WebSearchStep> = {
  ...namedAs('web-search'),
  draft: ({ deps }) => ({ inputSchema: deps.schemas.tools['web-search'], outputs: OUTPUTS, mediaFields: [] }),
  plan: (draft) => ({ action: 'web-search', with: draft.with }),
  sendsRequests: true,
  retriesByDefault: true,
  cache: { byDefault: true, ttlMs: WEB_TTL_MS },
  estimate: (step, _runs, tally) => {
    for (const runs of step.runs) if (typeof runs === 'number') tally.requests.tool_calls += runs;
  },
  price: FREE,
};
