import type { ActionDuration } from '../duration-part.js';
import type { RunStep } from '../../plan.js';

export const runDuration: ActionDuration<RunStep> = {
  expected: { run: 1_000 },
  kindOf: () => 'run',
};
