import { Readable } from 'node:stream';

/** One server-sent event: `event: <name>` when it has a name, then its data, JSON or a literal such as `[DONE]`. */
export interface ServerSentEvent {
  event?: string;
  data: Record<string, unknown> | string;
}

export function encodeEvent({ event, data }: ServerSentEvent): string {
  return `${event ? `event: ${event}\n` : ''}data: ${typeof data === 'string' ? data : JSON.stringify(data)}\n\n`;
}

/**
 * An answer of server-sent events (`text/event-stream`), one chunk per event. The events are kept
 * as a list so that a fault can strike between two of them, mid-stream (see fault-hooks.ts).
 */
export class EventStreamBody extends Readable {
  readonly chunks: readonly string[];
  private next = 0;

  constructor(events: readonly ServerSentEvent[]) {
    super();
    this.chunks = events.map(encodeEvent);
  }

  override _read(): void {
    this.push(this.next < this.chunks.length ? this.chunks[this.next++] : null);
  }
}

export const EVENT_STREAM_TYPE = 'text/event-stream; charset=utf-8';
