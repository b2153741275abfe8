import type { ActionDuration } from '../duration-part.js';
import type { WebSearchStep } from '../../plan.js';

export const webSearchDuration: ActionDuration<WebSearchStep> = {
  expected: { 'web-search': 1_000 },
  kindOf: () => 'web-search',
};
