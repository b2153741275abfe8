import { html } from '../../report/html-kit.js';
import type { ActionCard } from '../card-part.js';
import { hasList } from '../card-kit.js';

/** A result's address as a link only when it is a web address: a `javascript:` URL must not become clickable. */
const webLink = (url: unknown): string | null => (typeof url === 'string' && /^https?:\/\//i.test(url) ? url : null);

/** The search's answer, and its results as links with their text. */
export const webSearchCard: ActionCard = {
  view: (output) => {
    if (!hasList(output, 'results')) return null;
    const results = (output.results ?? []).map(
      (r) => html`<li>
        <a href=${webLink(r.url)} rel="noreferrer">${String(r.title || r.url)}</a>
        <div class="meta">${String(r.url)}</div>
        <div>${String(r.content ?? '').slice(0, 400)}</div>
      </li>`,
    );
    const answer = (output as Record<string, unknown>).answer;
    return html`<div>${answer ? html`<p>${String(answer)}</p>` : null}<ol class="results">${results}</ol></div>`;
  },
  media: false,
};
