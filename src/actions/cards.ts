/**
 * The report's part of every action (src/actions/<kind>/card.ts), by kind: one line per action.
 * The type makes a missing kind a compile error.
 */
import type { ActionKind } from '../plan.js';
import type { ActionCard } from './card-part.js';
import { PLAIN_CARD } from './card-kit.js';
import { llmCard } from './llm/card.js';
import { modelCard } from './model/card.js';
import { webFetchCard } from './web-fetch/card.js';
import { webSearchCard } from './web-search/card.js';

export type ActionCards = { readonly [K in ActionKind]: ActionCard };

export const CARDS: ActionCards = {
  'web-search': webSearchCard,
  'web-fetch': webFetchCard,
  llm: llmCard,
  upload: PLAIN_CARD,
  model: modelCard,
  run: PLAIN_CARD,
};

/** The card of an action named in a journal (an older or newer one may name none of today's): plain when unknown. */
export function cardOf(action: string | null): ActionCard {
  return action !== null && Object.hasOwn(CARDS, action) ? CARDS[action as ActionKind] : PLAIN_CARD;
}
