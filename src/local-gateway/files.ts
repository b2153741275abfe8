import type { BlobStore, Blob } from './blob-store.js';
import type { GatewayClock } from './clock.js';
import { GatewayError, notFound } from './errors.js';
import type { GatewayRandom } from './random.js';

export type MediaType = 'image' | 'video' | 'audio';

/** An uploaded file as the file endpoints answer it. */
export interface MediaFile {
  file_id: string;
  type: MediaType;
  filename: string;
  size: number;
  content_type: string;
  download_url: string;
  created_at: number;
  expires_at: number;
}

interface Entry {
  team: string;
  record: MediaFile;
  blob: Blob;
}

/** The team-scoped records of uploaded files; their bytes live in the blob store. */
export class FileRegistry {
  private readonly entries = new Map<string, Entry>();

  constructor(
    private readonly clock: GatewayClock,
    private readonly random: GatewayRandom,
    private readonly blobs: BlobStore,
    private readonly quotaBytes: number,
  ) {}

  /** Bytes the team holds in unexpired files. */
  usedBytes(team: string): number {
    let used = 0;
    for (const entry of this.live(team)) used += entry.record.size;
    return used;
  }

  checkQuota(team: string, incomingBytes: number): void {
    const used = this.usedBytes(team);
    if (used + incomingBytes > this.quotaBytes) {
      throw new GatewayError(
        413,
        `the team's upload quota of ${this.quotaBytes} bytes is used up (${used} bytes held); delete files to free it`,
      );
    }
  }

  add(team: string, blob: Blob, type: MediaType, filename: string, downloadUrl: string, createdAt: number): MediaFile {
    const record: MediaFile = {
      file_id: `file_${this.random.hex(12)}`,
      type,
      filename,
      size: blob.size,
      content_type: blob.contentType,
      download_url: downloadUrl,
      created_at: createdAt,
      expires_at: blob.expiresAt,
    };
    this.entries.set(record.file_id, { team, record, blob });
    return record;
  }

  /** Newest first, unexpired only. */
  list(team: string, limit: number, offset: number) {
    const files = [...this.live(team)].map((e) => e.record).sort((a, b) => b.created_at - a.created_at);
    return { files: files.slice(offset, offset + limit), total: files.length, limit, offset };
  }

  async remove(team: string, fileId: string): Promise<void> {
    const entry = this.entries.get(fileId);
    if (!entry || entry.team !== team || entry.record.expires_at <= this.clock.now())
      throw notFound(`file ${fileId} does not exist`);
    this.entries.delete(fileId);
    await this.blobs.remove(entry.blob.token);
  }

  private *live(team: string): Generator<Entry> {
    const now = this.clock.now();
    for (const [id, entry] of this.entries) {
      if (entry.record.expires_at <= now) {
        this.entries.delete(id);
        void this.blobs.remove(entry.blob.token);
      } else if (entry.team === team) yield entry;
    }
  }
}
