import { readFile } from 'node:fs/promises';
import type { Blob, BlobStore } from './blob-store.js';
import { TaskInputError } from './models/behaviour.js';

/** How a model reads the URLs in its input: data: URLs, the gateway's own links, or any reachable http(s) URL. */
export class InputFetcher {
  constructor(
    private readonly blobs: BlobStore,
    private readonly publicOrigin: () => string,
  ) {}

  async fetch(fieldName: string, url: string, maxBytes: number): Promise<Buffer> {
    if (url.startsWith('data:')) {
      const match = /^data:[\w.+/-]*(;[\w=-]+)*;base64,([A-Za-z0-9+/=\s]*)$/.exec(url);
      if (!match) throw new TaskInputError(`${fieldName} is a data: URL without Base64 content`);
      const bytes = Buffer.from(match[2]!, 'base64');
      if (bytes.length > maxBytes) throw new TaskInputError(`${fieldName} is larger than ${maxBytes} bytes`);
      return bytes;
    }
    let parsed: URL;
    try {
      parsed = new URL(url);
    } catch {
      throw new TaskInputError(`${fieldName} is not a URL`);
    }
    if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:')
      throw new TaskInputError(`${fieldName} must be an http or https URL`);
    const own = /^\/(files|results)\/([0-9a-f]+)\/([^/]+)$/.exec(parsed.pathname);
    const ours = parsed.origin === this.publicOrigin();
    // A gateway on a data folder of its own gave out links at an earlier address too (the built-in
    // one listens on a new port each run): a link to this host whose file it holds is its own.
    const formerlyOurs = !ours && parsed.hostname === new URL(this.publicOrigin()).hostname;
    if (own && (ours || formerlyOurs)) {
      const blob = await this.blobs.lookup(own[1] as Blob['area'], own[2]!, decodeURIComponent(own[3]!));
      if (blob && blob.size > maxBytes) throw new TaskInputError(`${fieldName} is larger than ${maxBytes} bytes`);
      if (blob) return readFile(blob.path);
      if (ours)
        throw new TaskInputError(`${fieldName} could not be downloaded: 404 (the link expired or never existed)`);
    }
    return downloadCapped(fieldName, parsed, maxBytes);
  }
}

async function downloadCapped(fieldName: string, url: URL, maxBytes: number): Promise<Buffer> {
  let response: Response;
  try {
    response = await fetch(url, { signal: AbortSignal.timeout(30_000), redirect: 'follow' });
  } catch (error) {
    throw new TaskInputError(
      `${fieldName} could not be downloaded: ${error instanceof Error ? error.message : String(error)}`,
    );
  }
  if (!response.ok || !response.body) {
    await response.body?.cancel();
    throw new TaskInputError(`${fieldName} could not be downloaded: HTTP ${response.status}`);
  }
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of response.body) {
    size += chunk.length;
    if (size > maxBytes) throw new TaskInputError(`${fieldName} is larger than ${maxBytes} bytes`);
    chunks.push(Buffer.from(chunk));
  }
  return Buffer.concat(chunks);
}
