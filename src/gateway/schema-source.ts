import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { readBundledSchema, type JsonSchema } from '../model-schemas/bundled.js';
import { schemaCacheFile } from '../model-schemas/cache-file.js';
import type { Clock } from '../clock.js';
import type { GatewayClient } from './client.js';

/** Where a model schema came from: the gateway now, the disk cache, or the package's bundled copy. */
export type SchemaOrigin = 'live' | 'cache' | 'bundled';

export interface ModelSchemaSource {
  /** The model's request schema, or undefined when the model is unknown everywhere. */
  get(slug: string, signal?: AbortSignal): Promise<{ schema: JsonSchema; origin: SchemaOrigin } | undefined>;
}

/** Schemas bundled with the package only: for offline analysis. */
export const bundledSchemas: ModelSchemaSource = {
  async get(slug) {
    const schema = readBundledSchema(slug);
    return schema ? { schema, origin: 'bundled' } : undefined;
  },
};

/**
 * The live schema from the gateway's public endpoint, cached on disk for `ttlMs`; on failure a
 * stale cached copy, then the bundled one. A real gateway may have changed a model since this
 * package was built, so its own word comes first.
 */
export class CachedSchemaSource implements ModelSchemaSource {
  private readonly memory = new Map<string, { schema: JsonSchema; origin: SchemaOrigin }>();

  constructor(
    private readonly client: Pick<GatewayClient, 'modelSchema'>,
    private readonly cacheDir: string,
    private readonly clock: Clock,
    private readonly ttlMs = 24 * 3600_000,
  ) {}

  async get(slug: string, signal?: AbortSignal) {
    const known = this.memory.get(slug);
    if (known) return known;
    const file = schemaCacheFile(this.cacheDir, slug);
    const cached = await readCache(file);
    let found: { schema: JsonSchema; origin: SchemaOrigin } | undefined;
    if (cached && this.clock.now() - cached.fetchedAt < this.ttlMs) found = { schema: cached.schema, origin: 'cache' };
    else {
      const live = await this.client.modelSchema(slug, signal);
      if (live.ok) {
        found = { schema: live.value, origin: 'live' };
        await writeCache(file, { fetchedAt: this.clock.now(), schema: live.value });
      } else if (cached) found = { schema: cached.schema, origin: 'cache' };
      else {
        const bundled = readBundledSchema(slug);
        if (bundled) found = { schema: bundled, origin: 'bundled' };
      }
    }
    if (found) this.memory.set(slug, found);
    return found;
  }
}

async function readCache(file: string): Promise<{ fetchedAt: number; schema: JsonSchema } | undefined> {
  try {
    const parsed = JSON.parse(await readFile(file, 'utf8')) as { fetchedAt?: unknown; schema?: unknown };
    if (typeof parsed.fetchedAt === 'number' && typeof parsed.schema === 'object' && parsed.schema !== null)
      return parsed as { fetchedAt: number; schema: JsonSchema };
  } catch {
    // No cache, or a broken one: fetch again.
  }
  return undefined;
}

async function writeCache(file: string, entry: { fetchedAt: number; schema: JsonSchema }): Promise<void> {
  try {
    await mkdir(join(file, '..'), { recursive: true });
    await writeFile(`${file}.tmp`, JSON.stringify(entry));
    await rename(`${file}.tmp`, file);
  } catch {
    // A cache that cannot be written only costs a fetch next time.
  }
}
