import type { ActionDuration } from '../duration-part.js';
import type { LlmStep } from '../../plan.js';

export const llmDuration: ActionDuration<LlmStep> = {
  expected: { llm: 3_000 },
  kindOf: () => 'llm',
};
