import type { ActionDuration } from '../duration-part.js';
import type { ModelStep } from '../../plan.js';

/** A model's task takes as long as its type of work: a video far longer than an image. */
export const modelDuration: ActionDuration<ModelStep> = {
  expected: {
    'text-to-image': 5_000,
    'image-to-image': 10_000,
    'text-to-video': 40_000,
    'image-to-video': 40_000,
    'video-to-video': 40_000,
  },
  kindOf: (step) => step.model.type,
};
