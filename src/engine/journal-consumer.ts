/**
 * The journal as a consumer of the run's events: each event becomes the line the journal has
 * always kept for it (the format is public: README's "The journal", read by resume, `runs show`
 * and the report), or none when the journal has no use for it.
 */
import { journalIndex, type RunItemRef, type StepRef } from '../item-label.js';
import type { Journal, NewEvent } from '../store/journal.js';
import { type EngineEvent, type EventConsumer, unhandledEvent } from './events.js';

// Fields in the order the journal has always written them: its lines stay the same, byte for byte.
/** A step's place as every journal line names it. */
const stepFields = (at: StepRef) => ({ row: at.row, step: at.step });
/** An item's place as every journal line names it. */
const itemFields = (item: RunItemRef) => ({ row: item.row, step: item.step, index: journalIndex(item) });

/** The journal line of an event, or undefined when the journal keeps nothing of it. */
export function journalLineOf(event: EngineEvent): NewEvent | undefined {
  switch (event.type) {
    case 'step-started':
      return {
        type: 'step-started',
        ...stepFields(event.at),
        ...(event.itemsFrom !== undefined ? { items_from: event.itemsFrom } : {}),
      };
    case 'step-skipped':
    case 'step-cancelled':
      return { type: event.type, ...stepFields(event.at), reason: event.reason };
    case 'step-cached':
      return { type: 'step-cached', ...stepFields(event.at), keys: event.keys };
    case 'step-finished':
      return {
        type: 'step-finished',
        ...stepFields(event.at),
        outputs: event.outputs,
        duration_ms: event.durationMs,
        ...(event.skippedItems.length > 0 ? { skipped_items: event.skippedItems } : {}),
      };
    case 'step-failed': {
      const { failure } = event;
      return {
        type: 'step-failed',
        ...stepFields(event.at),
        reason: failure.reason,
        message: failure.message,
        outcome_unknown: failure.outcomeUnknown,
        ...(failure.taskId ? { task_id: failure.taskId } : {}),
        ...(event.continued ? { continued: true } : {}),
      };
    }
    case 'item-finished':
      return { type: 'item-finished', ...itemFields(event.item), outputs: event.outputs };
    case 'item-skipped':
      return { type: 'item-skipped', ...itemFields(event.item), reason: event.reason };
    case 'item-failed':
      return {
        type: 'item-failed',
        ...itemFields(event.item),
        reason: event.failure.reason,
        message: event.failure.message,
      };
    case 'item-cached':
      return {
        type: 'item-cached',
        ...itemFields(event.item),
        key: event.key,
        ...(event.input ? { input: event.input } : {}),
        ...(event.made ? { made_at: event.made.at, ...(event.made.run ? { made_by: event.made.run } : {}) } : {}),
      };
    case 'request-sent':
      return {
        type: 'request-sent',
        ...itemFields(event.item),
        slug: event.slug,
        request: event.request,
        ...(event.costUsd !== undefined ? { cost_usd: event.costUsd } : {}),
      };
    case 'submission-refused':
      return {
        type: 'submission-refused',
        ...itemFields(event.item),
        reason: event.reason,
        ...(event.input ? { input: event.input } : {}),
      };
    case 'call-sent':
      return {
        type: 'call-sent',
        ...itemFields(event.item),
        model: event.model,
        request: event.request,
        ...(event.input ? { input: event.input } : {}),
      };
    case 'call-ended':
      return {
        type: 'call-ended',
        ...itemFields(event.item),
        request: event.request,
        outcome: event.outcome,
        ...(event.message !== undefined ? { message: event.message } : {}),
      };
    case 'submission-unknown':
      return {
        type: 'submission-unknown',
        ...itemFields(event.item),
        request: event.request,
        message: event.message,
        ...(event.input ? { input: event.input } : {}),
      };
    case 'task-submitted':
      return {
        type: 'task-submitted',
        ...itemFields(event.item),
        slug: event.slug,
        request: event.request,
        task_id: event.taskId,
        input: event.input,
      };
    case 'task-finished': {
      const { result } = event;
      return {
        type: 'task-finished',
        ...itemFields(event.item),
        task_id: event.taskId,
        status: result.status,
        duration_ms: result.durationMs ?? null,
        result_expires_at: result.resultExpiresAt ?? null,
        polls: event.polls,
        ...(result.error ? { error: result.error.message } : {}),
      };
    }
    case 'requests':
      return { type: 'requests', second: event.second, counts: event.counts, rate_limited: event.rateLimited };
    case 'upload-done':
      return {
        type: 'upload-done',
        hash: event.hash,
        path: event.path,
        file_id: event.fileId,
        url: event.url,
        expires_at: event.expiresAt,
      };
    case 'output-written':
      return {
        type: 'output-written',
        ...itemFields(event.item),
        task_id: event.taskId,
        url: event.url,
        path: event.path,
        bytes: event.bytes,
      };
    case 'step-resumed':
    case 'step-retrying':
    case 'clip-passed-through':
    case 'result-url-expired':
      return undefined;
    default:
      unhandledEvent(event);
      return undefined;
  }
}

/**
 * Appends each event's line. `request-sent` and `call-sent` are appended durably: the answer resolves
 * once the line (and every line before it) is on disk, before the paid request it records may leave.
 */
export function journalConsumer(journal: Journal): EventConsumer {
  return (event) => {
    const line = journalLineOf(event);
    if (!line) return;
    if (line.type === 'request-sent' || line.type === 'call-sent') return journal.appendDurable(line);
    journal.append(line);
  };
}
