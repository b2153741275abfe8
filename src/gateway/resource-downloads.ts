import { mkdir } from 'node:fs/promises';
import { extname, join } from 'node:path';
import { err, ok, type Result } from '../result.js';
import type { GatewayClient } from './client.js';
import type { GatewayFailure } from './failures.js';
import type { Resource, TaskResult } from './types.js';

export interface SavedResource extends Resource {
  path: string;
  bytes: number;
}

export interface ResourceDownloadFailure {
  url: string;
  failure: GatewayFailure;
}

const EXTENSIONS: Record<string, string> = { jpeg: 'jpg', 'image/jpeg': 'jpg', 'image/png': 'png', 'video/mp4': 'mp4' };

/** A file extension for a resource: its declared format, else its URL's, made safe for a file name. */
export function resourceExtension(resource: Resource): string {
  const guessed = resource.format ?? safeUrlExtension(resource.url);
  return (EXTENSIONS[guessed] ?? guessed.replace(/[^a-z0-9]/gi, '').slice(0, 5)) || 'bin';
}

function safeUrlExtension(url: string): string {
  try {
    return extname(new URL(url).pathname).slice(1);
  } catch {
    return '';
  }
}

export interface ResourceDownloadOptions {
  dir: string;
  /** The file name (without folder) of resource `index` of `count`, given its extension. */
  name: (index: number, count: number, extension: string) => string;
  /** Told of each file as soon as it is complete, before the others are. */
  onSaved?: (saved: SavedResource) => void;
  signal?: AbortSignal;
}

/** Folders this process has made (or found): a run of 10,000 tasks asks the file system once, not 10,000 times. */
const madeFolders = new Set<string>();

async function ensureFolder(dir: string): Promise<void> {
  if (madeFolders.has(dir)) return;
  await mkdir(dir, { recursive: true });
  madeFolders.add(dir);
}

/**
 * Downloads every resource of a finished task into `dir` at once (results expire, so nothing
 * waits), each checked to be the media type the gateway declared. The first failure, if any.
 */
export async function downloadResources(
  client: GatewayClient,
  task: TaskResult,
  options: ResourceDownloadOptions,
): Promise<Result<SavedResource[], ResourceDownloadFailure>> {
  await ensureFolder(options.dir);
  const count = task.resources.length;
  const outcomes = await Promise.all(
    task.resources.map(async (resource, index): Promise<Result<SavedResource, ResourceDownloadFailure>> => {
      const path = join(options.dir, options.name(index, count, resourceExtension(resource)));
      const expect = ['image', 'video', 'audio'].includes(resource.type) ? resource.type : undefined;
      const downloaded = await client.download(resource.url, path, expect ? { expect } : {}, options.signal);
      if (!downloaded.ok) return err({ url: resource.url, failure: downloaded.error });
      const saved = { ...resource, path, bytes: downloaded.value.bytes };
      options.onSaved?.(saved);
      return ok(saved);
    }),
  );
  const failure = outcomes.find((outcome) => !outcome.ok);
  if (failure && !failure.ok) return failure;
  return ok(outcomes.map((outcome) => (outcome as { ok: true; value: SavedResource }).value));
}
