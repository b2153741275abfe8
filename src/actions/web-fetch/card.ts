import { html } from '../../report/html-kit.js';
import type { ActionCard } from '../card-part.js';
import { hasList } from '../card-kit.js';

/** Each fetched page, folded under its title. */
export const webFetchCard: ActionCard = {
  view: (output) => {
    if (!hasList(output, 'pages')) return null;
    return html`<div>${(output.pages ?? []).map(
      (p) => html`<details>
        <summary>${String(p.title || p.url)} <span class="meta">${String(p.url)}</span></summary>
        <pre>${String(p.content ?? '')}</pre>
      </details>`,
    )}</div>`;
  },
  media: false,
};
