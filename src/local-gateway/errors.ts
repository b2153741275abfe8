/**
 * Every error the gateway answers has the body `{"code":<status>,"message":"Category: detail"}`
 * as the hosted gateway does. Handlers throw a GatewayError; the server's error handler
 * turns it, and anything else, into that body.
 */
export const ERROR_CATEGORIES = {
  400: 'Invalid parameters',
  401: 'Authentication failed',
  402: 'Insufficient balance',
  404: 'Not found',
  405: 'Method not allowed',
  413: 'Payload too large',
  429: 'Rate limit exceeded',
  500: 'Internal server error',
  503: 'Service unavailable',
} as const;

export type ErrorStatus = keyof typeof ERROR_CATEGORIES;

export class GatewayError extends Error {
  constructor(
    readonly status: ErrorStatus,
    readonly detail: string,
    readonly headers: Record<string, string> = {},
  ) {
    super(`${ERROR_CATEGORIES[status]}: ${detail}`);
  }

  body(): { code: number; message: string } {
    return { code: this.status, message: this.message };
  }
}

export const invalid = (detail: string) => new GatewayError(400, detail);
export const notFound = (detail: string) => new GatewayError(404, detail);
