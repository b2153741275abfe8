// Generated from schemas/tools/web-search.json and schemas/tools/web-fetch.json by `npm run wire-types`: do not edit.

/**
 * The body of POST {tool_url}/v1/web-search, and the `with:` of a recipe's web-search step. The gateway answers 400 to a body this schema rejects, and the analyzer reports the same body before anything runs.
 */
export interface WebSearchRequest {
  /**
   * What to search for.
   */
  query: string;
  /**
   * How much of each page a result carries: lite the best sentence, standard the best three, rich the whole readable text.
   */
  depth?: 'lite' | 'standard' | 'rich';
  /**
   * How many results at most (default 5).
   */
  max_results?: number;
  /**
   * Only pages of these domains (and their subdomains).
   *
   * @maxItems 50
   */
  include_domains?: string[];
  /**
   * No pages of these domains (or their subdomains).
   *
   * @maxItems 50
   */
  exclude_domains?: string[];
  /**
   * Only pages published within this long before now.
   */
  time_range?: 'day' | 'week' | 'month' | 'year';
  /**
   * Only pages of this topic.
   */
  topic?: 'general' | 'news' | 'finance';
  /**
   * a two-letter country code
   */
  country?: string;
  /**
   * Also give a short extractive answer from the top pages.
   */
  include_answer?: boolean;
}

/**
 * The body of POST {tool_url}/v1/web-fetch. The gateway reads at most 20 URLs a request and answers 400 to more. A recipe's web-fetch step takes the same `with:` but any number of URLs: the client sends them 20 a request, in order.
 */
export interface WebFetchRequest {
  /**
   * The pages to read: http or https URLs, 1 to 20 of them.
   *
   * @minItems 1
   * @maxItems 20
   */
  urls: string[];
}
