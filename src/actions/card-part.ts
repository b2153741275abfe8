import type { Html } from '../report/html-kit.js';

/** The report's part of an action (the report layer): how its items' outputs show on their cards. */
export interface ActionCard {
  /** Its output made readable (an answer, search results, pages), or null to show it as JSON. */
  view(output: unknown): Html | null;
  /** Its items are media (a task's files): every one a card, shown first; the step's own output is never shown. */
  media: boolean;
}
