import type { GatewayFailure } from '../gateway/failures.js';

/**
 * Why a step failed. Gateway failures keep their own reason; the engine adds its own: a task that
 * ended failed, an input the model's schema refused at run time, an answer that broke the step's
 * schema, a command's exit code, the step's time limit, and a stop asked for by the user.
 */
export interface StepFailure {
  reason: GatewayFailure['reason'] | 'task-failed' | 'invalid-input' | 'invalid-output' | 'expression' | 'command-failed' | 'step-timeout' | 'interrupted';
  message: string;
  /** A retry of the step is safe: nothing paid is in doubt. */
  retryable: boolean;
  /** A paid submission may or may not have been accepted: never sent again automatically. */
  outcomeUnknown: boolean;
  taskId?: string;
}

export class StepError extends Error {
  constructor(readonly failure: StepFailure) {
    super(failure.message);
  }
}

export function fromGateway(failure: GatewayFailure, context: string): StepFailure {
  const message =
    failure.reason === 'outcome-unknown'
      ? `${context}: ${failure.message}. Check the team's tasks and balance before running it again; \`pipeline resume\` will not send it again unless asked to with --resubmit-unknown`
      : `${context}: ${failure.message}`;
  return { reason: failure.reason, message, retryable: failure.retryable && !failure.outcomeUnknown, outcomeUnknown: failure.outcomeUnknown };
}

export const failWith = (failure: StepFailure): never => {
  throw new StepError(failure);
};
