/**
 * A paid call answered in one exchange (a text generation, billed by the token): recorded on disk
 * before it leaves and when it ends, so that neither a lost answer nor a kill mid-call lets a resume
 * send it a second time without being asked to.
 */
import { randomUUID } from 'node:crypto';
import { journalIndex, type RunItemRef } from '../item-label.js';
import { err, ok, type Result } from '../result.js';
import { itemKey } from '../store/replay.js';
import type { EngineContext } from './context.js';
import { emit } from './emit.js';
import type { CallOutcome } from './events.js';
import { interrupted, stepFailure, type StepFailure, toCheckBeforeResending, underlyingMessage } from './failure.js';

/** The item as its records and messages name it. */
export interface PaidCallItem {
  ref: RunItemRef;
  /** `brief` or `brief[3]`. */
  label: string;
  /** The model called. */
  model: string;
  /** What is asked, as the journal keeps it (long strings cut). */
  input?: Record<string, unknown>;
}

const resubmitAdvice = (made: 'task' | 'call') =>
  `Check the team's ${toCheckBeforeResending(made)}, then resume with --resubmit-unknown to send it again`;

/**
 * What an earlier run left of this item's paid request: nothing (go on), or a request whose outcome
 * is unknown, which is not sent again unless the user asked for it. The message says which of the
 * two it was: in flight when the run stopped, or an answer lost while the run went on.
 * `what` names the request: `the submission of image[3] to acme/flux`.
 */
export function earlierOutcomeUnknown(
  ctx: Pick<EngineContext, 'resume' | 'resubmitUnknown'>,
  key: string,
  what: string,
  may: string,
  made: 'task' | 'call' = 'task',
): Result<void, StepFailure> {
  if (ctx.resubmitUnknown || !ctx.resume) return ok(undefined);
  const lost = ctx.resume.unknownSubmissions.get(key);
  if (lost) {
    const message = `${what} got no certain answer in the earlier run (${lost.message}); ${may}. ${resubmitAdvice(made)}`;
    return err({ ...stepFailure('outcome-unknown', message), outcomeUnknown: true });
  }
  if (ctx.resume.unansweredSubmissions.has(key)) {
    const message = `${what} was in flight when the run stopped; ${may}. ${resubmitAdvice(made)}`;
    return err({ ...stepFailure('outcome-unknown', message), outcomeUnknown: true });
  }
  return ok(undefined);
}

/** How a call's result says it ended: a wrong answer was still an answer, and billed. */
function outcomeOf(result: Result<unknown, StepFailure>): CallOutcome {
  if (result.ok || result.error.reason === 'invalid-output') return 'answered';
  return result.error.outcomeUnknown ? 'unknown' : 'failed';
}

/** Why the answer was lost, for the journal: the gateway's failure if there was one (a worker lost has none). */
const lostAnswer = (failure: StepFailure): string =>
  failure.cause ? underlyingMessage(failure.cause) : failure.message;

/**
 * Makes `call` for `item` unless an earlier run left its outcome unknown: `call-sent` on disk
 * first, `call-ended` after, whoever makes the call (this process or a worker).
 */
export async function sendPaidCall<T>(
  ctx: EngineContext,
  item: PaidCallItem,
  signal: AbortSignal,
  call: () => Promise<Result<T, StepFailure>>,
): Promise<Result<T, StepFailure>> {
  const { ref, label, model, input } = item;
  const what = `the call of ${label} to ${model}`;
  const key = itemKey(ref.row, ref.step, journalIndex(ref));
  const earlier = earlierOutcomeUnknown(ctx, key, what, 'it may have been answered, and billed', 'call');
  if (!earlier.ok) return earlier;
  if (signal.aborted) return err(interrupted('the run was stopped before this call was sent'));
  const request = randomUUID();
  // The journal answers once the line is on disk.
  await emit(ctx, { type: 'call-sent', item: ref, model, request, ...(input ? { input } : {}) });
  const result = await call();
  const outcome = outcomeOf(result);
  const message = !result.ok && outcome === 'unknown' ? { message: lostAnswer(result.error) } : {};
  emit(ctx, { type: 'call-ended', item: ref, request, outcome, ...message });
  return result;
}
