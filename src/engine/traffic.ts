import type { Clock } from '../clock.js';
import type { SentRequest } from '../gateway/request-core.js';
import type { TrafficKind } from '../store/journal.js';
import type { EngineEvent } from './events.js';

interface Bucket {
  second: number;
  counts: Partial<Record<TrafficKind, number>>;
  rateLimited: number;
}

/** Where the tool and text gateways live: their requests are told apart from the media API's by address. */
export interface TrafficEndpoints {
  toolUrl: string;
  llmUrl: string;
}

const WINDOW_MS = 60_000;

/** What a request was for, as the report and the live view name it. */
export function trafficKind(sent: SentRequest, endpoints: TrafficEndpoints): TrafficKind {
  if (sent.kind === 'submit') return 'submit';
  if (sent.url.startsWith(endpoints.llmUrl)) return 'text';
  if (sent.url.startsWith(endpoints.toolUrl)) return 'tool';
  if (sent.method === 'GET' && /\/tasks\/[^/?]+/.test(sent.url)) return 'poll';
  if (sent.method === 'POST' && /\/files\b/.test(sent.url)) return 'upload';
  return 'other';
}

/**
 * Counts the requests a run sends: the last minute's for the live view, and one journal event per
 * second that saw requests, so that the report can draw how the budget was spent even for a run
 * that was killed (it loses at most the last second).
 */
export class TrafficMeter {
  private bucket: Bucket | undefined;
  private recent: number[] = [];
  private emit: ((event: Extract<EngineEvent, { type: 'requests' }>) => unknown) | undefined;
  /** 429s seen since the meter started. */
  rateLimited = 0;
  /** Requests seen since the meter started. */
  total = 0;

  constructor(
    private readonly endpoints: TrafficEndpoints,
    private readonly clock: Clock,
  ) {}

  /** From now on each finished second goes to the run's event stream (the journal keeps it). */
  attach(emit: (event: Extract<EngineEvent, { type: 'requests' }>) => unknown): void {
    this.emit = emit;
  }

  readonly record = (sent: SentRequest): void => {
    const now = this.clock.now();
    const second = Math.floor(now / 1000) * 1000;
    if (this.bucket && this.bucket.second !== second) this.flush();
    this.bucket ??= { second, counts: {}, rateLimited: 0 };
    const kind = trafficKind(sent, this.endpoints);
    this.bucket.counts[kind] = (this.bucket.counts[kind] ?? 0) + 1;
    this.total++;
    if (sent.status === 429) {
      this.bucket.rateLimited++;
      this.rateLimited++;
    }
    this.recent.push(now);
    // Without a live view nothing asks for the rate: the list is trimmed here too, now and then.
    if (this.recent.length % 1024 === 0) this.forget();
  };

  /** Requests sent in the last minute. */
  perMinute(): number {
    this.forget();
    return this.recent.length;
  }

  /** Drops the requests older than a minute. */
  private forget(): void {
    const since = this.clock.now() - WINDOW_MS;
    let drop = 0;
    while (drop < this.recent.length && this.recent[drop]! <= since) drop++;
    if (drop > 0) this.recent = this.recent.slice(drop);
  }

  /** Tells of the second in progress; call before the journal closes. */
  flush(): void {
    const bucket = this.bucket;
    this.bucket = undefined;
    if (!bucket || !this.emit) return;
    this.emit({ type: 'requests', second: bucket.second, counts: bucket.counts, rateLimited: bucket.rateLimited });
  }
}
