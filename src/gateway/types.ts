/** What the client hands on, read tolerantly from the gateway's answers: unknown fields are kept, not fatal. */

export interface Submission {
  taskId: string;
  modelId: string;
  /** `pending` or `processing` as the gateway said; any other word is kept. */
  status: string;
}

/** Where a task stands, whatever words the gateway used: unknown states count as running. */
export type TaskState = 'running' | 'succeeded' | 'failed';

export interface Resource {
  url: string;
  /** `image`, `video`, `audio`, `document` or another kind the gateway names. */
  type: string;
  width?: number;
  height?: number;
  format?: string;
  role?: string;
  [extra: string]: unknown;
}

export interface TaskResult {
  taskId: string;
  modelId: string;
  /** The gateway's own word: `pending`, `processing`, `success`, `failed`, `canceled`, or another. */
  status: string;
  state: TaskState;
  /** Processing time in milliseconds, when the gateway reports it. */
  durationMs?: number;
  resources: Resource[];
  metadata: Record<string, unknown>;
  /** Unix milliseconds (a gateway answering seconds is converted). */
  submitTime?: number;
  endTime?: number;
  resultExpiresAt?: number;
  /** For a failed task: the gateway's code and `Category: detail` message. */
  error?: { code?: number; message: string };
}

export interface ModelEntry {
  slug: string;
  type: string;
  docsUrl?: string;
  description?: string;
}

export interface MediaFile {
  fileId: string;
  type: string;
  filename?: string;
  size?: number;
  /** The `download_url`, or `url` as the production gateway names it. */
  url: string;
  createdAt?: number;
  expiresAt?: number;
}

export interface FileList {
  files: MediaFile[];
  total: number;
  limit: number;
  offset: number;
}

export interface Account {
  isValid: boolean;
  team?: string;
  balanceUsd: number;
}

/** Timestamps are Unix milliseconds, but a value below 10^11 (a date before 1973 in ms) can only be seconds. */
export function toMillis(value: unknown): number | undefined {
  if (typeof value !== 'number' || !Number.isFinite(value)) return undefined;
  return value < 1e11 ? value * 1000 : value;
}

const SUCCESS = new Set(['success', 'succeeded', 'completed', 'done']);
const FAILURE = new Set(['failed', 'failure', 'error', 'canceled', 'cancelled', 'expired']);

export function taskState(status: string): TaskState {
  const word = status.toLowerCase();
  if (SUCCESS.has(word)) return 'succeeded';
  if (FAILURE.has(word)) return 'failed';
  return 'running';
}

/** Whether a running task's word says it waits in the gateway's queue, not yet started. */
export const isPending = (status: string): boolean => status.toLowerCase() === 'pending';
