import type { BlobStore, Blob } from './blob-store.js';
import type { GatewayClock } from './clock.js';
import { GatewayError, notFound } from './errors.js';
import type { GatewayRandom } from './random.js';
import type { Records } from './records.js';

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

/** An upload as kept between processes: its link is made from the blob and the gateway's address of the day. */
export interface FileRecord {
  team: string;
  file: Omit<MediaFile, 'download_url'>;
  blob: { token: string; name: string };
}

interface Entry {
  team: string;
  file: Omit<MediaFile, 'download_url'>;
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
    private readonly records: Records<FileRecord>,
    private readonly origin: () => string,
  ) {}

  /** Takes back the unexpired uploads an earlier process recorded, and forgets the rest. */
  async load(): Promise<void> {
    for (const [fileId, saved] of await this.records.readAll()) {
      const blob = await this.blobs.lookup('files', saved.blob.token, saved.blob.name);
      if (blob && saved.file.expires_at > this.clock.now())
        this.entries.set(fileId, { team: saved.team, file: saved.file, blob });
      else await this.records.remove(fileId);
    }
  }

  /** Bytes the team holds in unexpired files. */
  usedBytes(team: string): number {
    let used = 0;
    for (const entry of this.live(team)) used += entry.file.size;
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

  async add(team: string, blob: Blob, type: MediaType, filename: string, createdAt: number): Promise<MediaFile> {
    let fileId = `file_${this.random.hex(12)}`;
    // An earlier process on the same folder, with the same seed, may have used this id.
    while (this.entries.has(fileId) || (await this.records.read(fileId)) !== undefined)
      fileId = `file_${this.random.hex(12)}`;
    const file = {
      file_id: fileId,
      type,
      filename,
      size: blob.size,
      content_type: blob.contentType,
      created_at: createdAt,
      expires_at: blob.expiresAt,
    };
    this.entries.set(file.file_id, { team, file, blob });
    await this.records.write(file.file_id, { team, file, blob: { token: blob.token, name: blob.name } });
    return this.answer({ team, file, blob });
  }

  /** Newest first, unexpired only. */
  list(team: string, limit: number, offset: number) {
    const entries = [...this.live(team)].sort((a, b) => b.file.created_at - a.file.created_at);
    const files = entries.slice(offset, offset + limit).map((entry) => this.answer(entry));
    return { files, total: entries.length, limit, offset };
  }

  async remove(team: string, fileId: string): Promise<void> {
    const entry = this.entries.get(fileId);
    if (!entry || entry.team !== team || entry.file.expires_at <= this.clock.now())
      throw notFound(`file ${fileId} does not exist`);
    this.entries.delete(fileId);
    await this.records.remove(fileId);
    await this.blobs.remove(entry.blob.token);
  }

  private answer(entry: Entry): MediaFile {
    return { ...entry.file, download_url: `${this.origin()}${this.blobs.urlPath(entry.blob)}` };
  }

  private *live(team: string): Generator<Entry> {
    const now = this.clock.now();
    for (const [id, entry] of this.entries) {
      if (entry.file.expires_at <= now) {
        this.entries.delete(id);
        void this.records.remove(id);
        void this.blobs.remove(entry.blob.token);
      } else if (entry.team === team) yield entry;
    }
  }
}
