import { closeSync, fsyncSync, openSync, readFileSync, writeSync } from 'node:fs';

/** One state change of a run. Every event has its time and kind; the rest depends on the kind. */
export type JournalEvent =
  | { type: 'run-started'; t: number; run_id: string; recipe: string; name: string; rows: Array<Record<string, unknown>>; sets: string[]; batch: string | null }
  | { type: 'run-resumed'; t: number }
  | { type: 'step-started'; t: number; row: number; step: string }
  | { type: 'step-skipped'; t: number; row: number; step: string; reason: string }
  | { type: 'request-sent'; t: number; row: number; step: string; index: number; slug: string; request: string }
  | { type: 'submission-refused'; t: number; row: number; step: string; index: number; reason: string }
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
  append(event: NewEvent): void;
  /** Appends and waits until the event is on disk: before any paid request. */
  appendDurable(event: NewEvent): void;
  close(): void;
}

/**
 * An append-only JSONL file. Writes are synchronous and in order, so an event is in the file before
 * the next line of the engine runs; `appendDurable` also fsyncs, so a kill cannot lose it.
 */
export class FileJournal implements Journal {
  private readonly fd: number;

  constructor(
    readonly path: string,
    private readonly now: () => number,
  ) {
    this.fd = openSync(path, 'a');
  }

  append(event: NewEvent): void {
    writeSync(this.fd, `${JSON.stringify({ t: this.now(), ...event })}\n`);
  }

  appendDurable(event: NewEvent): void {
    this.append(event);
    fsyncSync(this.fd);
  }

  close(): void {
    fsyncSync(this.fd);
    closeSync(this.fd);
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
