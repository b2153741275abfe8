import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import MiniSearch from 'minisearch';
import { packageRoot } from '../../package-root.js';
import { extractReadable } from './readable.js';

/** A page of the gateway's own small web, served at `/web/{domain}/{slug}.html`. */
export interface CorpusPage {
  id: string;
  domain: string;
  path: string;
  html: string;
  title: string;
  content: string;
  publishedAt: string;
  topic: string;
  country: string;
}

export function corpusFolder(): string {
  return join(packageRoot(), 'src', 'local-gateway', 'web-corpus');
}

/** Reads every page once and extracts its readable text with the same code web fetch uses. */
export function loadCorpus(): CorpusPage[] {
  const folder = corpusFolder();
  const pages: CorpusPage[] = [];
  for (const domain of readdirSync(folder).sort()) {
    for (const file of readdirSync(join(folder, domain))
      .filter((f) => f.endsWith('.html'))
      .sort()) {
      const html = readFileSync(join(folder, domain, file), 'utf8');
      const readable = extractReadable(html);
      pages.push({
        id: `${domain}/${file}`,
        domain,
        path: `/web/${domain}/${file}`,
        html,
        title: readable.title,
        content: readable.content,
        publishedAt: readable.publishedAt ?? '1970-01-01',
        topic: readable.meta.topic ?? 'general',
        country: readable.meta.country ?? '',
      });
    }
  }
  return pages;
}

/** A BM25 full-text index over title and content; titles weigh double. */
export function buildIndex(pages: CorpusPage[]): MiniSearch<CorpusPage> {
  const index = new MiniSearch<CorpusPage>({
    fields: ['title', 'content'],
    storeFields: ['id'],
    searchOptions: { boost: { title: 2 }, prefix: true, fuzzy: 0.15 },
  });
  index.addAll(pages);
  return index;
}
