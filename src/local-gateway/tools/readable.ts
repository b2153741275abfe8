import { Readability } from '@mozilla/readability';
import { parseHTML } from 'linkedom';

export interface ReadablePage {
  title: string;
  content: string;
  /** From `<meta name="published">` or `<time datetime>`, when the page has one. */
  publishedAt: string | undefined;
  meta: Record<string, string>;
}

/** The readable text of an HTML page: Firefox Reader View's algorithm, falling back to the body's text. */
export function extractReadable(html: string): ReadablePage {
  const { document } = parseHTML(html);
  const meta: Record<string, string> = {};
  for (const element of document.querySelectorAll('meta[name][content]')) {
    meta[element.getAttribute('name')!.toLowerCase()] = element.getAttribute('content')!;
  }
  const publishedAt = meta.published ?? document.querySelector('time[datetime]')?.getAttribute('datetime') ?? undefined;
  const fallbackTitle = document.querySelector('title')?.textContent?.trim() ?? '';
  let article: { title?: string | null; textContent?: string | null } | null = null;
  try {
    article = new Readability(document as unknown as ConstructorParameters<typeof Readability>[0], {
      charThreshold: 100,
    }).parse();
  } catch {
    article = null;
  }
  const text = article?.textContent ?? document.querySelector('body')?.textContent ?? '';
  return { title: (article?.title ?? fallbackTitle).trim(), content: normaliseWhitespace(text), publishedAt, meta };
}

export function normaliseWhitespace(text: string): string {
  return text
    .split('\n')
    .map((line) => line.replace(/\s+/g, ' ').trim())
    .filter((line) => line.length > 0)
    .join('\n');
}
