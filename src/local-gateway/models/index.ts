import type { ModelBehaviour } from './behaviour.js';
import { imageEdit } from './image-edit.js';
import { textToImage } from './text-to-image.js';
import { videoToVideo } from './video-to-video.js';

/** How each served model behaves; its request schema comes from `schemas/models/`. */
export const MODEL_BEHAVIOURS: Record<string, ModelBehaviour> = {
  'vendor-a/vendor-a-v3-t2i': textToImage,
  'vendor-b/vendor-b-5.0-lite-edit': imageEdit,
  'vendor-b/vendor-b-2.0-mini-v2v': videoToVideo,
};
