import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import type { GatewayClient } from '../gateway/client.js';
import type { Clock } from '../clock.js';
import type { Journal } from '../store/journal.js';
import { fromGateway, failWith } from './failure.js';

/** A URL that expires within this much is not handed to a new task. */
const EXPIRY_MARGIN_MS = 10 * 60_000;

export interface UploadEntry {
  fileId: string;
  url: string;
  type: string;
  expiresAt: number | null;
  path: string;
}

async function sha256(path: string): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of createReadStream(path)) hash.update(chunk as Buffer);
  return hash.digest('hex');
}

/**
 * Local files become gateway URLs here, once per content hash and run: the same bytes under two
 * names, or asked for by ten tasks at once, are uploaded once, and again only when the URL is
 * about to expire.
 */
export class Uploads {
  private readonly byHash = new Map<string, Promise<UploadEntry>>();

  constructor(
    private readonly client: GatewayClient,
    private readonly journal: Journal,
    private readonly clock: Clock,
    known: Iterable<[string, { fileId: string; url: string; expiresAt: number | null; path: string }]> = [],
  ) {
    for (const [hash, entry] of known) this.byHash.set(hash, Promise.resolve({ ...entry, type: 'unknown' }));
  }

  async upload(path: string, signal: AbortSignal): Promise<UploadEntry> {
    const hash = await sha256(path).catch(() => failWith({ reason: 'local-file', message: `cannot read ${path}`, retryable: false, outcomeUnknown: false }));
    const existing = this.byHash.get(hash);
    if (existing) {
      const entry = await existing.catch(() => undefined);
      if (entry && (entry.expiresAt === null || entry.expiresAt > this.clock.now() + EXPIRY_MARGIN_MS)) return entry;
    }
    const fresh = (async () => {
      const uploaded = await this.client.upload(path, signal);
      if (!uploaded.ok) return failWith(fromGateway(uploaded.error, `upload of ${path}`));
      const file = uploaded.value;
      const entry: UploadEntry = { fileId: file.fileId, url: file.url, type: file.type, expiresAt: file.expiresAt ?? null, path };
      this.journal.append({ type: 'upload-done', hash, path, file_id: entry.fileId, url: entry.url, expires_at: entry.expiresAt });
      return entry;
    })();
    this.byHash.set(hash, fresh);
    return fresh;
  }
}
