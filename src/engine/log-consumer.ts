/** The run's log (pino, `run.log` in the run folder) as a consumer of its events: what helps when reading a run afterwards. */
import type { Logger } from 'pino';
import { itemLabel } from '../item-label.js';
import { type EventConsumer, unhandledEvent } from './events.js';

export function logConsumer(log: Logger): EventConsumer {
  return (event) => {
    switch (event.type) {
      case 'step-failed':
        log.warn(
          { step: event.at.step, row: event.at.row, reason: event.failure.reason, message: event.failure.message },
          'step failed',
        );
        return;
      case 'task-finished':
        log.info(
          { task: event.taskId, step: itemLabel(event.item), status: event.result.status, polls: event.polls },
          'task ended',
        );
        return;
      case 'result-url-expired':
        log.info({ url: event.url, path: event.path }, 'result URL expired: uploading the local copy');
        return;
      case 'upload-done':
        log.info({ path: event.path, file: event.fileId }, 'uploaded');
        return;
      case 'requests':
        return;
      case 'step-started':
      case 'step-resumed':
      case 'step-skipped':
      case 'step-cancelled':
      case 'step-cached':
      case 'step-finished':
      case 'step-retrying':
      case 'item-finished':
      case 'item-skipped':
      case 'item-failed':
      case 'item-cached':
      case 'request-sent':
      case 'submission-refused':
      case 'submission-unknown':
      case 'call-sent':
      case 'call-ended':
      case 'task-submitted':
      case 'output-written':
      case 'clip-passed-through':
        return;
      default:
        unhandledEvent(event);
    }
  };
}
