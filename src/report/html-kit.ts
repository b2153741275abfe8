import htmModule from 'htm';

/**
 * Markup already escaped. The page is built with htm's tagged templates over a tiny `h` that
 * writes HTML strings, escaping every value: preact's types would pull the DOM library into the
 * whole program, and a static page needs no components.
 */
export class Html {
  constructor(readonly text: string) {}
  toString(): string {
    return this.text;
  }
}

const VOID = new Set(['area', 'br', 'col', 'embed', 'hr', 'img', 'input', 'link', 'meta', 'source', 'track', 'wbr']);

export const escapeHtml = (text: string): string =>
  text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

function childText(child: unknown): string {
  if (child === null || child === undefined || child === false || child === true) return '';
  if (child instanceof Html) return child.text;
  if (Array.isArray(child)) return child.map(childText).join('');
  return escapeHtml(String(child));
}

function attributes(props: Record<string, unknown> | null): string {
  if (!props) return '';
  return Object.entries(props)
    .filter(
      ([name, value]) => name !== 'dangerouslySetInnerHTML' && value !== null && value !== undefined && value !== false,
    )
    .map(([name, value]) => (value === true ? ` ${name}` : ` ${name}="${escapeHtml(String(value))}"`))
    .join('');
}

function h(type: string, props: Record<string, unknown> | null, ...children: unknown[]): Html {
  const open = `<${type}${attributes(props)}>`;
  if (VOID.has(type)) return new Html(open);
  const inner = props?.dangerouslySetInnerHTML as { __html: string } | undefined;
  return new Html(`${open}${inner ? inner.__html : childText(children)}</${type}>`);
}

// htm's types describe a CommonJS module to NodeNext; at run time its ESM build's default is the function.
const htm = htmModule as unknown as {
  bind<R>(
    h: (type: string, props: Record<string, unknown> | null, ...children: unknown[]) => R,
  ): (strings: TemplateStringsArray, ...values: unknown[]) => R | R[];
};
const bound = htm.bind(h);

/** Tagged templates into escaped markup; several top-level elements come back joined. */
export function html(strings: TemplateStringsArray, ...values: unknown[]): Html {
  const made = bound(strings, ...values);
  return Array.isArray(made) ? new Html(made.map(childText).join('')) : made;
}

export const STATUS_COLOURS: Record<string, string> = {
  succeeded: '#2f9e44',
  failed: '#e03131',
  running: '#1c7ed6',
  unknown: '#f08c00',
  skipped: '#adb5bd',
  cancelled: '#868e96',
  pending: '#ced4da',
};

export const colourOf = (status: string): string => STATUS_COLOURS[status] ?? '#868e96';

/** `1.2 s`, `3 min 4 s`: for labels. */
export function seconds(ms: number): string {
  if (ms < 60_000) return `${(ms / 1000).toFixed(ms < 10_000 ? 1 : 0)} s`;
  const s = Math.round(ms / 1000);
  return `${Math.floor(s / 60)} min ${s % 60} s`;
}
