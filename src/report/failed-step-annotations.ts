import { relative } from 'node:path';
import { type EngineEvent, unhandledEvent } from '../engine/events.js';
import type { Annotation } from './github-commands.js';

/**
 * The GitHub output as a consumer of the run's events: each failed step (continued or not) becomes
 * an error at its id in the recipe, where the event says the step stands; printed at the run's end.
 */
export class FailedStepAnnotations {
  private readonly failed: Array<{ row: number; annotation: Annotation }> = [];

  /**
   * `rows`: the plan's batch rows, which name a step's row when there are several; `cwd`: what the
   * file is named relative to; `redact`: the secret filter every message passes through.
   */
  constructor(
    private readonly rows: number,
    private readonly cwd: string,
    private readonly redact: (text: string) => string,
  ) {}

  readonly consume = (event: EngineEvent): void => {
    switch (event.type) {
      case 'step-failed': {
        const { at, location } = event;
        this.failed.push({
          row: at.row,
          annotation: {
            kind: 'error',
            file: relative(this.cwd, location.file),
            line: location.line,
            col: location.column,
            title: `pipeline: ${this.rows > 1 ? `row ${at.row + 1} ` : ''}step ${at.step} failed`,
            message: this.redact(event.failure.message),
          },
        });
        return;
      }
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
      case 'task-finished':
      case 'output-written':
      case 'clip-passed-through':
      case 'result-url-expired':
      case 'upload-done':
      case 'requests':
        return;
      default:
        unhandledEvent(event);
    }
  };

  /** By row, then in the recipe's order: the order does not depend on which step failed first. */
  annotations(): Annotation[] {
    const byPlace = (a: Annotation) => [a.line ?? 0, a.col ?? 0] as const;
    return [...this.failed]
      .sort((a, b) => {
        const [lineA, colA] = byPlace(a.annotation);
        const [lineB, colB] = byPlace(b.annotation);
        return a.row - b.row || lineA - lineB || colA - colB;
      })
      .map((f) => f.annotation);
  }
}
