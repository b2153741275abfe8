import type { ActionDuration } from '../duration-part.js';
import type { WebFetchStep } from '../../plan.js';

export const webFetchDuration: ActionDuration<WebFetchStep> = {
  expected: { 'web-fetch': 2_000 },
  kindOf: () => 'web-fetch',
};
