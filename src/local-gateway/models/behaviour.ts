import type { Blob } from '../blob-store.js';

/** A generated output as the task result lists it (the `resources` of a task's `result`). */
export interface Resource {
  url: string;
  type: 'image' | 'video' | 'audio' | 'document';
  width: number;
  height: number;
  format: string;
  role: 'primary' | 'cover' | 'thumbnail' | 'alternative';
  [extra: string]: unknown;
}

export interface ProducedOutput {
  resources: Resource[];
  metadata: Record<string, unknown>;
  blobs: Blob[];
  /** Units the task really used, when fewer than were charged at submission (the rest is refunded). */
  unitsUsed?: number;
}

/** A model's input problem found while processing: the task ends `failed` with a 400-category error. */
export class TaskInputError extends Error {}

export interface ProduceContext {
  taskId: string;
  input: Record<string, unknown>;
  /** Writes a result file and returns its blob and public URL. */
  saveResult(name: string, bytes: Buffer, contentType: string): Promise<{ blob: Blob; url: string }>;
  /** Reads an input URL (the gateway's own links, data: URLs, or any reachable http(s) URL), at most `maxBytes`. */
  fetchInput(field: string, url: string, maxBytes: number): Promise<Buffer>;
  /** A folder for scratch files that is removed when the task ends. */
  scratchDir: string;
  useFfmpeg: boolean;
}

/** How the local gateway times and runs one model; its price is the schema's `x-price`. */
export interface ModelBehaviour {
  /** Processing time before latency scale and jitter, in milliseconds. */
  baseProcessingMs(input: Record<string, unknown>): number;
  produce(context: ProduceContext): Promise<ProducedOutput>;
}

/** A field's value, or the schema's documented default when the request left it out. */
export function field(input: Record<string, unknown>, name: string, fallback: string): string;
export function field(input: Record<string, unknown>, name: string, fallback: number): number;
export function field(input: Record<string, unknown>, name: string, fallback: boolean): boolean;
export function field(input: Record<string, unknown>, name: string, fallback: string | number | boolean): unknown {
  return input[name] ?? fallback;
}
