import type { JsonSchema } from '../../model-schemas/bundled.js';
import type { UploadStep } from '../../plan.js';
import { isLocalFile, knownInputOf } from '../../recipe/estimate-tally.js';
import { object, STRING } from '../../recipe/shapes.js';
import type { ActionPlan } from '../plan-part.js';
import { CACHED_FOR_GOOD, FREE, namedAs } from '../plan-kit.js';

/** What an upload step's `with:` holds. */
export const UPLOAD_INPUT_SCHEMA: JsonSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['path'],
  properties: { path: { type: 'string', minLength: 1 } },
};

/** `uses: upload`: a local file sent to the gateway's file store, once per distinct file. */
export const uploadPlan: ActionPlan<UploadStep> = {
  ...namedAs('upload'),
  draft: () => ({
    inputSchema: UPLOAD_INPUT_SCHEMA,
    outputs: object({ file_id: STRING, url: STRING, type: STRING }),
    mediaFields: [{ field: 'path', media: 'any', list: false }],
  }),
  plan: (draft) => ({ action: 'upload', with: draft.with }),
  sendsRequests: true,
  retriesByDefault: true,
  cache: CACHED_FOR_GOOD,
  estimate: (step, { plan, known }, tally) => {
    if (known <= 0) return;
    for (const row of plan.rows) {
      const path = knownInputOf(step, row)?.path;
      if (isLocalFile(path)) tally.localFiles.add(path);
    }
  },
  price: FREE,
};
