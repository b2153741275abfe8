import type MiniSearch from 'minisearch';
import { readToolSchema } from '../../model-schemas/bundled.js';
import type { WebSearchRequest } from '../../wire/tools.js';
import type { GatewayClock } from '../clock.js';
import type { GatewayRandom } from '../random.js';
import { buildIndex, loadCorpus, type CorpusPage } from './corpus.js';
import { extractReadable } from './readable.js';

/** The tools' request schemas ship under schemas/tools/; the recipe analyzer checks steps with the same files. */
export const WEB_SEARCH_SCHEMA = readToolSchema('web-search');
export const WEB_FETCH_SCHEMA = readToolSchema('web-fetch');

export type { WebFetchRequest, WebSearchRequest } from '../../wire/tools.js';

const RANGE_DAYS = { day: 1, week: 7, month: 31, year: 366 } as const;
const FETCH_TIMEOUT_MS = 10_000;
const FETCH_MAX_BYTES = 5 * 1024 * 1024;
const MAX_REDIRECTS = 5;

const matchesDomain = (domain: string, filter: string) => {
  const wanted = filter.toLowerCase().replace(/^www\./, '');
  return domain === wanted || domain.endsWith(`.${wanted}`);
};

/** Sentences of a text, for snippets and extractive answers. */
const sentences = (text: string) => text.split(/(?<=[.!?])\s+/).filter((s) => s.length > 0);

/**
 * The corpus and its index, read and built once per process: the pages ship with the package and
 * nothing changes them, and extracting and indexing them took a tenth of a second for every gateway
 * started (a test suite starts hundreds).
 */
let corpus: { pages: CorpusPage[]; byId: Map<string, CorpusPage>; index: MiniSearch<CorpusPage> } | undefined;
function sharedCorpus() {
  if (!corpus) {
    const pages = loadCorpus();
    corpus = { pages, byId: new Map(pages.map((p) => [p.id, p])), index: buildIndex(pages) };
  }
  return corpus;
}

/** Web search over the gateway's own pages and web fetch of any reachable URL. */
export class WebTools {
  readonly pages: readonly CorpusPage[];
  private readonly byId: Map<string, CorpusPage>;
  private readonly index: MiniSearch<CorpusPage>;

  constructor(
    private readonly clock: GatewayClock,
    private readonly random: GatewayRandom,
    private readonly origin: () => string,
  ) {
    ({ pages: this.pages, byId: this.byId, index: this.index } = sharedCorpus());
  }

  page(domain: string, file: string): CorpusPage | undefined {
    return this.byId.get(`${domain}/${file}`);
  }

  search(request: WebSearchRequest) {
    const started = this.clock.now();
    const depth = request.depth ?? 'standard';
    const terms = request.query.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [];
    const since = request.time_range ? started - RANGE_DAYS[request.time_range] * 86_400_000 : undefined;
    const hits = this.index
      .search(request.query)
      .map((hit) => ({ page: this.byId.get(String(hit.id))!, score: hit.score }))
      .filter(
        ({ page }) =>
          !request.include_domains?.length || request.include_domains.some((d) => matchesDomain(page.domain, d)),
      )
      .filter(({ page }) => !request.exclude_domains?.some((d) => matchesDomain(page.domain, d)))
      .filter(({ page }) => !request.topic || page.topic === request.topic)
      .filter(({ page }) => since === undefined || Date.parse(page.publishedAt) >= since)
      // A country favours its own pages rather than hiding the rest, as hosted search tools do.
      .map((hit) => ({
        ...hit,
        score: request.country && hit.page.country === request.country.toLowerCase() ? hit.score * 1.5 : hit.score,
      }))
      .sort((a, b) => b.score - a.score)
      .slice(0, request.max_results ?? 5);
    const top = hits[0]?.score ?? 1;
    const results = hits.map(({ page, score }) => ({
      title: page.title,
      url: `${this.origin()}${page.path}`,
      content: this.snippet(page, terms, depth),
      score: Math.round((score / top) * 10_000) / 10_000,
      published_at: page.publishedAt,
    }));
    return {
      query: request.query,
      depth,
      answer: request.include_answer
        ? this.answer(
            hits.slice(0, 3).map((h) => h.page),
            terms,
          )
        : null,
      results,
      request_id: `req_${this.random.hex(10)}`,
      response_time: (this.clock.now() - started) / 1000,
    };
  }

  /** lite: the best sentence; standard: the best three in page order; rich: the whole readable text. */
  private snippet(page: CorpusPage, terms: string[], depth: 'lite' | 'standard' | 'rich'): string {
    if (depth === 'rich') return page.content;
    const body = sentences(page.content.replace(/\n/g, ' '));
    const ranked = body
      .map((sentence, position) => ({ sentence, position, hits: countHits(sentence, terms) }))
      .sort((a, b) => b.hits - a.hits || a.position - b.position);
    const chosen = ranked.slice(0, depth === 'lite' ? 1 : 3).sort((a, b) => a.position - b.position);
    return chosen.map((c) => c.sentence).join(' ');
  }

  /** The sentence of the top pages that holds the most query terms: a short extractive answer. */
  private answer(pages: CorpusPage[], terms: string[]): string | null {
    let best: { sentence: string; hits: number } | undefined;
    for (const page of pages) {
      for (const sentence of sentences(page.content.replace(/\n/g, ' '))) {
        const hits = countHits(sentence, terms);
        if (hits > (best?.hits ?? 0)) best = { sentence, hits };
      }
    }
    return best?.sentence ?? null;
  }

  async fetch(urls: string[]) {
    const started = this.clock.now();
    const settled = await Promise.all(urls.map((url) => fetchReadable(url)));
    const results = [];
    const failed = [];
    for (const [i, outcome] of settled.entries()) {
      if ('error' in outcome) failed.push({ url: urls[i]!, error: outcome.error });
      else
        results.push({
          url: urls[i]!,
          title: outcome.title,
          content: outcome.content,
          ...(outcome.publishedAt ? { published_at: outcome.publishedAt } : {}),
        });
    }
    return {
      results,
      failed_results: failed,
      request_id: `req_${this.random.hex(10)}`,
      response_time: (this.clock.now() - started) / 1000,
    };
  }
}

function countHits(sentence: string, terms: string[]): number {
  const lower = sentence.toLowerCase();
  return terms.reduce((n, term) => (term.length > 2 && lower.includes(term) ? n + 1 : n), 0);
}

async function fetchReadable(
  url: string,
): Promise<{ title: string; content: string; publishedAt: string | undefined } | { error: string }> {
  let target: URL;
  try {
    target = new URL(url);
  } catch {
    return { error: 'not a valid URL' };
  }
  if (target.protocol !== 'http:' && target.protocol !== 'https:')
    return { error: `unsupported scheme ${target.protocol.replace(':', '')}; only http and https are fetched` };
  try {
    for (let hop = 0; ; hop++) {
      const response = await fetch(target, {
        redirect: 'manual',
        signal: AbortSignal.timeout(FETCH_TIMEOUT_MS),
        headers: { 'User-Agent': 'media-pipeline-local-gateway/1 (web-fetch)', Accept: 'text/html,text/plain;q=0.9' },
      });
      const location = response.headers.get('location');
      if (response.status >= 300 && response.status < 400 && location) {
        await response.body?.cancel();
        if (hop >= MAX_REDIRECTS) return { error: `more than ${MAX_REDIRECTS} redirects` };
        target = new URL(location, target);
        continue;
      }
      if (!response.ok) {
        await response.body?.cancel();
        return { error: `HTTP ${response.status}` };
      }
      const type = response.headers.get('content-type') ?? '';
      if (!/^(text\/html|text\/plain|application\/xhtml\+xml)/i.test(type)) {
        await response.body?.cancel();
        return { error: `unsupported content type ${type || '(none)'}` };
      }
      const text = await readCapped(response);
      if (text === undefined) return { error: `page larger than ${FETCH_MAX_BYTES} bytes` };
      if (/^text\/plain/i.test(type)) return { title: '', content: text.trim(), publishedAt: undefined };
      const readable = extractReadable(text);
      return { title: readable.title, content: readable.content, publishedAt: readable.publishedAt };
    }
  } catch (error) {
    const cause = describeCause((error as { cause?: unknown }).cause);
    if ((error as Error).name === 'TimeoutError') return { error: `timed out after ${FETCH_TIMEOUT_MS / 1000} s` };
    return { error: cause ? `unreachable (${cause})` : `unreachable (${(error as Error).message})` };
  }
}

/** The socket error behind undici's "fetch failed", such as ECONNREFUSED. */
function describeCause(cause: unknown): string | undefined {
  if (!cause || typeof cause !== 'object') return undefined;
  const { code, errors, message } = cause as { code?: string; errors?: unknown[]; message?: string };
  return code ?? describeCause(errors?.[0]) ?? message;
}

async function readCapped(response: Response): Promise<string | undefined> {
  const chunks: Uint8Array[] = [];
  let size = 0;
  for await (const chunk of response.body!) {
    size += chunk.length;
    if (size > FETCH_MAX_BYTES) return undefined;
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}
