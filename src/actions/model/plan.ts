import { MODEL_SLUG } from '../../model-schemas/bundled.js';
import { didYouMean } from '../../expressions/suggest.js';
import { mediaFields } from '../../model-schemas/validate.js';
import type { ModelStep } from '../../plan.js';
import { error } from '../../recipe/diagnostics.js';
import { priceStep } from '../../recipe/estimate-cost.js';
import { INTEGER, list, NUMBER, object, STRING } from '../../recipe/shapes.js';
import type { ActionPlan } from '../plan-part.js';
import { CACHED_FOR_GOOD } from '../plan-kit.js';

const RESOURCE = object({
  url: STRING,
  type: STRING,
  width: INTEGER,
  height: INTEGER,
  format: STRING,
  role: STRING,
  path: STRING,
  duration: NUMBER,
  size: INTEGER,
});

/** What a media model's step gives: the task, its resources by kind, and the first primary one. */
const OUTPUTS = object({
  task_id: STRING,
  resources: list(RESOURCE),
  images: list(RESOURCE),
  videos: list(RESOURCE),
  audio: list(RESOURCE),
  url: STRING,
  path: STRING,
  metadata: object({}, true),
});

/**
 * `uses: provider/model`: a task on the gateway, its input checked against the model's schema
 * (from the gateway, or bundled), its URL fields' local files uploaded; a submission and a poll
 * at least per run, priced by the model's rule.
 */
export const modelPlan: ActionPlan<ModelStep> = {
  claims: (uses) => uses !== undefined && MODEL_SLUG.test(uses),
  usesText: 'a model slug provider/model_id',
  draft: ({ raw, path, file, deps, diagnostics }) => {
    const slug = raw.uses ?? '';
    const schema = deps.modelSchema(slug);
    if (!schema) {
      diagnostics.push(
        error(
          file,
          file.locate([...path, 'uses']),
          `unknown model '${slug}': no schema for it from the gateway or in schemas/models/${didYouMean(slug, deps.modelSlugs?.() ?? [])}`,
        ),
      );
      return { outputs: OUTPUTS, mediaFields: [] };
    }
    const meta = schema['x-model'] as { type?: string } | undefined;
    return {
      inputSchema: schema,
      outputs: OUTPUTS,
      mediaFields: mediaFields(schema),
      model: { slug, type: meta?.type ?? 'unknown' },
    };
  },
  // An unknown model was reported: the plan is never used, but a step of it stays whole.
  plan: (draft) => ({
    action: 'model',
    model: draft.model ?? { slug: draft.raw.uses ?? '', type: 'unknown' },
    with: draft.with,
  }),
  sendsRequests: true,
  retriesByDefault: true,
  cache: CACHED_FOR_GOOD,
  estimate: (step, { known, dynamic, eachMs }, tally) => {
    const { slug } = step.model;
    const tasks = tally.tasks[slug];
    tally.tasks[slug] = dynamic || tasks === 'dynamic' ? 'dynamic' : (tasks ?? 0) + known;
    tally.requests.submissions += known;
    tally.requests.polls += known;
    tally.taskTimeMs += known * eachMs;
  },
  price: priceStep,
};
