import type { ActionCard } from './card-part.js';

/** An action whose outputs show as JSON. */
export const PLAIN_CARD: ActionCard = { view: () => null, media: false };

/** An object with a list under `key`. */
export const hasList = (value: unknown, key: string): value is Record<string, Array<Record<string, unknown>>> =>
  typeof value === 'object' && value !== null && Array.isArray((value as Record<string, unknown>)[key]);
