import { html } from '../../report/html-kit.js';
import type { ActionCard } from '../card-part.js';

const json = (value: unknown) => JSON.stringify(value, null, 2);

/** An LLM's answer: its JSON when it had a schema (the text folded), else its text. */
export const llmCard: ActionCard = {
  view: (output) => {
    const o = output as Record<string, unknown>;
    const text = String(o.text ?? '');
    if (o.json == null) return html`<div class="llm"><pre>${text}</pre></div>`;
    return html`<div class="llm">
      <pre>${json(o.json)}</pre>
      <details><summary>text</summary><pre>${text}</pre></details>
    </div>`;
  },
  media: false,
};
