import type { ActionDuration } from '../duration-part.js';
import type { UploadStep } from '../../plan.js';

export const uploadDuration: ActionDuration<UploadStep> = {
  expected: { upload: 1_000 },
  kindOf: () => 'upload',
};
