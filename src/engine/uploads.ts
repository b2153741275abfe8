import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import type { Clock } from '../clock.js';
import type { GatewayClient } from '../gateway/client.js';
import { ok, type Result } from '../result.js';
import type { EngineEvent } from './events.js';
import { failed, fromGateway, interrupted, type StepFailure } from './failure.js';

/**
 * A gateway URL that expires within this much is not handed to a new task: it is replaced by a
 * fresh upload. A task may wait for a slot and in the gateway's queue before the model fetches its
 * inputs, so the URL must outlive that wait; ten minutes covers a long queue at a small cost (an
 * extra upload of a file whose URL had under ten minutes left).
 */
export const URL_EXPIRY_MARGIN_MS = 10 * 60_000;

export interface UploadEntry {
  fileId: string;
  url: string;
  type: string;
  expiresAt: number | null;
  path: string;
}

type UploadOutcome = Result<UploadEntry, StepFailure>;

async function sha256(path: string): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of createReadStream(path)) hash.update(chunk as Buffer);
  return hash.digest('hex');
}

/**
 * Local files become gateway URLs here, once per content hash and run: the same bytes under two
 * names, or asked for by ten tasks at once, are uploaded once, and again only when the URL is
 * about to expire. Everyone asking for one hash shares one attempt and its outcome: a failed
 * upload fails all of them, and is tried again only when a step starts a new attempt
 * (`forgetFailures`), not once by each item that was waiting for it.
 */
export class Uploads {
  private readonly byHash = new Map<string, Promise<UploadOutcome>>();
  private readonly failedHashes = new Set<string>();

  constructor(
    private readonly client: GatewayClient,
    /** Told of each file uploaded (the run's event stream: the journal keeps it for a resume). */
    private readonly emit: (event: Extract<EngineEvent, { type: 'upload-done' }>) => unknown,
    private readonly clock: Clock,
    known: Iterable<[string, { fileId: string; url: string; expiresAt: number | null; path: string }]> = [],
  ) {
    for (const [hash, entry] of known) this.byHash.set(hash, Promise.resolve(ok({ ...entry, type: 'unknown' })));
  }

  async upload(path: string, signal: AbortSignal): Promise<UploadOutcome> {
    let hash: string;
    try {
      hash = await sha256(path);
    } catch {
      return failed('local-file', `cannot read ${path}`);
    }
    for (;;) {
      const existing = this.byHash.get(hash);
      if (!existing) break;
      const outcome = await existing;
      // Someone replaced an expiring entry while this caller waited: share theirs.
      if (this.byHash.get(hash) !== existing) continue;
      if (!outcome.ok || this.usable(outcome.value)) return outcome;
      break;
    }
    const fresh = this.send(hash, path, signal);
    this.byHash.set(hash, fresh);
    return fresh;
  }

  /** Lets the uploads that failed be tried again: for a new attempt of a step. */
  forgetFailures(): void {
    for (const hash of this.failedHashes) this.byHash.delete(hash);
    this.failedHashes.clear();
  }

  private usable(entry: UploadEntry): boolean {
    return entry.expiresAt === null || entry.expiresAt > this.clock.now() + URL_EXPIRY_MARGIN_MS;
  }

  private async send(hash: string, path: string, signal: AbortSignal): Promise<UploadOutcome> {
    const uploaded = await this.client.upload(path, signal);
    // Cut off by a stop (Ctrl-C, a step's time limit): the item did not fail, and the file is not bad.
    if (!uploaded.ok && signal.aborted)
      return { ok: false, error: interrupted('the run was stopped while a file was uploaded') };
    if (!uploaded.ok) {
      this.failedHashes.add(hash);
      return { ok: false, error: fromGateway(uploaded.error, `upload of ${path}`) };
    }
    const file = uploaded.value;
    const entry: UploadEntry = {
      fileId: file.fileId,
      url: file.url,
      type: file.type,
      expiresAt: file.expiresAt ?? null,
      path,
    };
    this.emit({ type: 'upload-done', hash, path, fileId: entry.fileId, url: entry.url, expiresAt: entry.expiresAt });
    return ok(entry);
  }
}
