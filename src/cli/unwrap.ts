import type { GatewayFailure } from '../gateway/failures.js';
import type { Result } from '../result.js';
import { GatewayRefusal } from './errors.js';

/** The value of a gateway call, or the refusal that ends the command with exit code 1. */
export function unwrap<T>(result: Result<T, GatewayFailure>, context?: string): T {
  if (!result.ok) throw new GatewayRefusal(result.error, context);
  return result.value;
}
