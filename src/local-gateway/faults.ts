import { invalid } from './errors.js';

/**
 * Faults on demand, for tests of a client's failure handling. Each fault matches a route key
 * (such as `POST /api/v1/{provider}/{model_id}`; any route when absent) and fires `times` times.
 *
 * - `status`: answers `status` (500 or 503, or any error status) before the handler runs.
 * - `drop-before`: closes the connection before the handler runs; nothing happened upstream.
 * - `drop-after`: runs the handler (a submission is created and charged), then closes the
 *   connection instead of answering: the client cannot know the outcome.
 * - `delay`: holds the answer for `delay_ms` of real time, for client timeout tests.
 * - `malformed-json`: runs the handler, then answers 200 with a cut-off JSON body.
 *
 * A text answer streamed as server-sent events (`stream: true`) takes the last three mid-stream,
 * after half of its events: `drop-after` closes the connection there, `delay` pauses there, and
 * `malformed-json` sends an event of cut-off JSON and ends the stream.
 *
 * With `body_contains`, a fault strikes only a request whose JSON body holds that text (a
 * submission whose prompt names one item, say), checked once the body is read.
 *
 * File links (`GET /files/{token}/{name}`, `GET /results/{token}/{name}`) take the same faults.
 * There `drop-after` sends the headers and half of the bytes before closing the connection, and
 * `malformed-json` sends a page of HTML under the media type the file claims.
 */
export interface Fault {
  kind: 'status' | 'drop-before' | 'drop-after' | 'delay' | 'malformed-json';
  route?: string;
  status?: number;
  delay_ms?: number;
  times?: number;
  body_contains?: string;
}

const KINDS = new Set<Fault['kind']>(['status', 'drop-before', 'drop-after', 'delay', 'malformed-json']);
const ERROR_STATUSES = new Set([400, 401, 402, 404, 413, 429, 500, 503]);

export function parseFault(value: unknown): Fault {
  if (typeof value !== 'object' || value === null) throw invalid('a fault must be an object');
  const fault = value as Record<string, unknown>;
  if (!KINDS.has(fault.kind as Fault['kind']))
    throw invalid(`fault kind must be one of ${[...KINDS].join(', ')} (got ${JSON.stringify(fault.kind)})`);
  if (fault.route !== undefined && typeof fault.route !== 'string')
    throw invalid('fault route must be a string such as "POST /api/v1/{provider}/{model_id}"');
  if (fault.kind === 'status' && !ERROR_STATUSES.has(fault.status as number))
    throw invalid(`fault status must be one of ${[...ERROR_STATUSES].join(', ')}`);
  if (
    fault.kind === 'delay' &&
    !(Number.isInteger(fault.delay_ms) && (fault.delay_ms as number) > 0 && (fault.delay_ms as number) <= 600_000)
  ) {
    throw invalid('fault delay_ms must be an integer from 1 to 600000');
  }
  if (
    fault.body_contains !== undefined &&
    !(typeof fault.body_contains === 'string' && fault.body_contains.length > 0 && fault.body_contains.length <= 1000)
  )
    throw invalid('fault body_contains must be text of 1 to 1000 characters');
  if (fault.times !== undefined && !(Number.isInteger(fault.times) && (fault.times as number) >= 1))
    throw invalid('fault times must be a positive integer');
  return fault as unknown as Fault;
}

export class FaultPlan {
  private faults: Array<Fault & { remaining: number }> = [];

  add(fault: Fault): void {
    this.faults.push({ ...fault, remaining: fault.times ?? 1 });
  }

  clear(): void {
    this.faults = [];
  }

  pending(): Fault[] {
    return this.faults.map(({ remaining, ...fault }) => ({ ...fault, times: remaining }));
  }

  /**
   * Takes the first fault of one of `kinds` that matches `route` (and `body`, for a fault with
   * `body_contains`), using up one of its times. Before the body is read there is no `body`, and
   * `bodyOnly` is for the look once it is, which takes only the faults that wait for it.
   */
  take(route: string, kinds: ReadonlyArray<Fault['kind']>, body?: string, bodyOnly = false): Fault | undefined {
    const matchesBody = (f: Fault) =>
      f.body_contains === undefined ? !bodyOnly : (body?.includes(f.body_contains) ?? false);
    const index = this.faults.findIndex(
      (f) => kinds.includes(f.kind) && (f.route === undefined || f.route === route) && matchesBody(f),
    );
    if (index < 0) return undefined;
    const fault = this.faults[index]!;
    fault.remaining--;
    if (fault.remaining <= 0) this.faults.splice(index, 1);
    return fault;
  }
}
