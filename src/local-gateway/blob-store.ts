import { mkdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { GatewayClock } from './clock.js';
import type { GatewayRandom } from './random.js';

/** One stored file the gateway serves at a public, unguessable path until it expires. */
export interface Blob {
  /** `files` for uploads, `results` for generated outputs: the first segment of the served path. */
  area: 'files' | 'results';
  token: string;
  name: string;
  path: string;
  size: number;
  contentType: string;
  expiresAt: number;
}

/**
 * Files on disk under the data folder, each served at `/{area}/{token}/{name}`. Links carry no key,
 * like the signed CDN links of a hosted gateway, so a model (or anyone holding the link) can read them.
 */
export class BlobStore {
  private readonly blobs = new Map<string, Blob>();

  constructor(
    private readonly dir: string,
    private readonly clock: GatewayClock,
    private readonly random: GatewayRandom,
  ) {}

  /** A fresh token and the file path it maps to, for callers that stream into place themselves. */
  async reserve(area: Blob['area'], name: string): Promise<{ token: string; path: string }> {
    const token = this.random.hex(16);
    const folder = join(this.dir, area, token);
    await mkdir(folder, { recursive: true });
    return { token, path: join(folder, safeName(name)) };
  }

  register(blob: Omit<Blob, 'name'> & { name: string }): Blob {
    const stored = { ...blob, name: safeName(blob.name) };
    this.blobs.set(stored.token, stored);
    return stored;
  }

  async put(area: Blob['area'], name: string, bytes: Buffer, contentType: string, expiresAt: number): Promise<Blob> {
    const { token, path } = await this.reserve(area, name);
    await writeFile(path, bytes);
    return this.register({ area, token, name, path, size: bytes.length, contentType, expiresAt });
  }

  /** The blob behind a served path, or undefined when it is unknown, expired or of another area. */
  lookup(area: Blob['area'], token: string, name: string): Blob | undefined {
    const blob = this.blobs.get(token);
    if (!blob || blob.area !== area || blob.name !== name) return undefined;
    if (blob.expiresAt <= this.clock.now()) {
      void this.remove(token);
      return undefined;
    }
    return blob;
  }

  async remove(token: string): Promise<void> {
    const blob = this.blobs.get(token);
    if (!blob) return;
    this.blobs.delete(token);
    await rm(join(this.dir, blob.area, token), { recursive: true, force: true });
  }

  urlPath(blob: Blob): string {
    return `/${blob.area}/${blob.token}/${encodeURIComponent(blob.name)}`;
  }
}

/** Keeps served names to one harmless path segment. */
export function safeName(name: string): string {
  const cleaned = name.replace(/[^A-Za-z0-9._-]/g, '_').replace(/^\.+/, '');
  return (cleaned || 'file').slice(0, 120);
}
