import type { GatewayFailure } from '../gateway/failures.js';
import type { Diagnostic } from '../recipe/diagnostics.js';

/** A mistake in the command line or its settings: printed without a stack, exit code 2. */
export class UsageError extends Error {
  /** What was printed before the message (an invalid recipe's diagnostics), for the GitHub job summary. */
  readonly details: string | undefined;
  constructor(message: string, details?: string) {
    super(message);
    this.details = details;
  }
}

/** The gateway refused or could not be reached: its message is shown, exit code 1. */
export class GatewayRefusal extends Error {
  constructor(
    readonly failure: GatewayFailure,
    context?: string,
  ) {
    super(`${context ? `${context}: ` : ''}${failure.message}`);
  }
}

/** A recipe that does not analyze: its diagnostics name file, line and field. A UsageError (exit code 2) to the CLI. */
export class InvalidRecipe extends UsageError {
  constructor(
    message: string,
    readonly diagnostics: Diagnostic[],
    details?: string,
  ) {
    super(message, details);
  }
}
