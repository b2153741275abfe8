import { closeSync, fsyncSync, openSync, readFileSync, writeSync } from 'node:fs';

/** One state change of a run. Every event has its time and kind; the rest depends on the kind. */
export type JournalEvent =
  | { type: 'run-started'; t: number; run_id: string; recipe: string; name: string; rows: Array<Record<string, unknown>>; sets: string[]; batch: string | null }
  | { type: 'run-resumed'; t: number }
  | { type: 'step-started'; t: number; row: number; step: string }
  | { type: 'step-skipped'; t: number; row: number; step: string; reason: string }
  | { type: 'request-sent'; t: number; row: number; step: string; index: number; slug: string; request: string }
  | { type: 'submission-refused'; t: number; row: number; step: string; index: number; reason: string }
  | { type: 'submission-unknown'; t: number; row: number; step: string; index: number; request: string; message: string }
  | { type: 'task-submitted'; t: number; row: number; step: string; index: number; slug: string; request: string; task_id: string }
  | { type: 'task-finished'; t: number; row: number; step: string; index: number; task_id: string; status: string; duration_ms: number | null; result_expires_at: number | null }
  | { type: 'output-written'; t: number; row: number; step: string; index: number; task_id: string; url: string; path: string; bytes: number }
  | { type: 'upload-done'; t: number; hash: string; path: string; file_id: string; url: string; expires_at: number | null }
  | { type: 'item-finished'; t: number; row: number; step: string; index: number; outputs: unknown }
  | { type: 'step-finished'; t: number; row: number; step: string; outputs: unknown; duration_ms: number }
  | { type: 'step-failed'; t: number; row: number; step: string; reason: string; message: string; outcome_unknown: boolean; task_id?: string }
  | { type: 'run-finished'; t: number; status: 'succeeded' | 'failed'; outputs: unknown }
  | { type: 'run-interrupted'; t: number };

type EventBody<E> = E extends unknown ? Omit<E, 't'> : never;
export type NewEvent = EventBody<JournalEvent>;

/** The record a run keeps of itself. */
export interface Journal {
  /** Records an event; it reaches the file, in order, within a moment. */
  append(event: NewEvent): void;
  /** Records an event and resolves once it, and everything before it, is on disk: before any paid request. */
  appendDurable(event: NewEvent): Promise<void>;
  /** Writes what is pending and syncs it; the journal can take no more. */
  close(): void;
}

/**
 * An append-only JSONL file with group commit. Events are kept in order in memory and written
 * together at the end of the current turn of the event loop; one fsync then covers every durable
 * event of that turn, so a burst of 200 submissions costs one sync, not 200, and still none of
 * them is sent before its line is on disk. An event not yet written when the process is killed
 * is at most one turn old and never a `request-sent`: those are synced before their request leaves.
 */
export class FileJournal implements Journal {
  private readonly fd: number;
  private pending: string[] = [];
  private waiters: Array<() => void> = [];
  private scheduled = false;
  private closed = false;

  constructor(
    readonly path: string,
    private readonly now: () => number,
  ) {
    this.fd = openSync(path, 'a');
  }

  append(event: NewEvent): void {
    if (this.closed) throw new Error(`Internal error: journal ${this.path} appended after close`);
    this.pending.push(`${JSON.stringify({ t: this.now(), ...event })}\n`);
    this.schedule();
  }

  appendDurable(event: NewEvent): Promise<void> {
    this.append(event);
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  close(): void {
    if (this.closed) return;
    this.flush();
    fsyncSync(this.fd);
    this.closed = true;
    closeSync(this.fd);
  }

  private schedule(): void {
    if (this.scheduled) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      if (!this.closed) this.flush();
    });
  }

  private flush(): void {
    if (this.pending.length > 0) {
      writeSync(this.fd, this.pending.join(''));
      this.pending = [];
    }
    const waiters = this.waiters;
    this.waiters = [];
    if (waiters.length > 0) fsyncSync(this.fd);
    for (const resolve of waiters) resolve();
  }
}

/** Every event of a journal; a last line cut short by a crash is ignored. */
export function readJournal(path: string): JournalEvent[] {
  const events: JournalEvent[] = [];
  for (const line of readFileSync(path, 'utf8').split('\n')) {
    if (!line.trim()) continue;
    try {
      events.push(JSON.parse(line) as JournalEvent);
    } catch {
      break;
    }
  }
  return events;
}
