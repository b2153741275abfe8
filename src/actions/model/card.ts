import type { ActionCard } from '../card-part.js';

/** A model's items are its tasks' files: the cards show them, not the outputs' JSON. */
export const modelCard: ActionCard = { view: () => null, media: true };
