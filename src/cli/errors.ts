import type { GatewayFailure } from '../gateway/failures.js';

/** A mistake in the command line or its settings: printed without a stack, exit code 2. */
export class UsageError extends Error {}

/** The gateway refused or could not be reached: its message is shown, exit code 1. */
export class GatewayRefusal extends Error {
  constructor(
    readonly failure: GatewayFailure,
    context?: string,
  ) {
    super(`${context ? `${context}: ` : ''}${failure.message}`);
  }
}
