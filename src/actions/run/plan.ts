import type { RunStep } from '../../plan.js';
import { error } from '../../recipe/diagnostics.js';
import { ANY, INTEGER, object, STRING } from '../../recipe/shapes.js';
import type { ActionPlan } from '../plan-part.js';
import { FREE } from '../plan-kit.js';

const OUTPUTS = object({ stdout: STRING, stderr: STRING, exit_code: INTEGER, json: ANY });

/** `run:`: a local command; it sends nothing to the gateway. */
export const runPlan: ActionPlan<RunStep> = {
  claims: (uses) => uses === undefined,
  draft: ({ raw, path, file, diagnostics }) => {
    if (raw.uses === undefined && raw.with !== undefined)
      diagnostics.push(
        error(file, file.locate([...path, 'with'], 'key'), 'with gives inputs to an action; a run step has none'),
      );
    return { outputs: OUTPUTS, mediaFields: [] };
  },
  // A step whose `uses:` names no action was reported: it is drafted as a command that is never run.
  plan: (draft) => ({
    action: 'run',
    run: draft.run ?? { kind: 'literal', value: '' },
    runsOn: draft.raw.runs_on ?? 'local',
  }),
  sendsRequests: false,
  // A local command that failed rarely succeeds unchanged: it is retried only when it says `retry:`.
  retriesByDefault: false,
  // A command may read or write anything, which no key can see: it is cached only when it asks.
  cache: { byDefault: false, ttlMs: null },
  estimate: () => {},
  price: FREE,
};
