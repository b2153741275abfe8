import { randomUUID } from 'node:crypto';
import type { ModelJob } from '../../src/engine/remote.js';

/** A model item as a coordinator hands it to the workers: one 1:1 picture of a fox, `image[0]`. */
export const modelJob = (request = randomUUID()): ModelJob => ({
  row: 0,
  step: 'image',
  index: 0,
  label: 'image[0]',
  slug: 'vendor-a/vendor-a-v3-t2i',
  type: 'text-to-image',
  input: { prompt: 'a fox', aspect_ratio: '1:1' },
  request,
  expectedMs: 200,
  maxPollIntervalMs: 1000,
});
