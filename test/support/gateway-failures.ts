import {
  abortedFailure,
  downloadFailure,
  forSubmission,
  httpFailure,
  localFileFailure,
  malformedResponse,
  networkFailure,
  timeoutFailure,
  type GatewayFailure,
} from '../../src/gateway/failures.js';
import type { RequestClass } from '../../src/gateway/retry.js';
import { classifyError } from '../../src/gateway/transport.js';

const TIMEOUTS = { connectMs: 1000, headersMs: 1000, bodyMs: 1000 };

/** One failure of every gateway reason, and whether each request class may send it again (a paid call as a call). */
export const REQUEST_CASES: Array<[string, GatewayFailure, Record<Exclude<RequestClass, 'paid-call'>, boolean>]> = [
  ['400', httpFailure(400, 'Invalid parameters: n', undefined), { read: false, submit: false, call: false }],
  ['401', httpFailure(401, 'Authentication failed', undefined), { read: false, submit: false, call: false }],
  ['402', httpFailure(402, 'Insufficient balance', undefined), { read: false, submit: false, call: false }],
  ['404', httpFailure(404, 'Not found', undefined), { read: false, submit: false, call: false }],
  ['413', httpFailure(413, 'Payload too large', undefined), { read: false, submit: false, call: false }],
  ['429', httpFailure(429, 'Rate limited', 2000), { read: true, submit: true, call: true }],
  ['500', httpFailure(500, 'Internal server error', undefined), { read: true, submit: false, call: false }],
  ['503', httpFailure(503, 'Service unavailable', undefined), { read: true, submit: false, call: true }],
  ['408 (http-error)', httpFailure(408, 'Request timeout', undefined), { read: true, submit: false, call: false }],
  ['501 (http-error)', httpFailure(501, 'Not implemented', undefined), { read: false, submit: false, call: false }],
  [
    'connection never opened',
    networkFailure('connection-failed', 'ECONNREFUSED'),
    { read: true, submit: true, call: true },
  ],
  [
    'TLS certificate refused',
    classifyError(
      Object.assign(new Error('self-signed certificate'), { code: 'DEPTH_ZERO_SELF_SIGNED_CERT' }),
      TIMEOUTS,
      undefined,
    ),
    { read: false, submit: false, call: false },
  ],
  [
    'connection dropped',
    networkFailure('connection-dropped', 'socket closed'),
    { read: true, submit: false, call: false },
  ],
  ['connect timeout', timeoutFailure('connect', 100), { read: true, submit: true, call: true }],
  ['headers timeout', timeoutFailure('headers', 100), { read: true, submit: false, call: false }],
  ['body timeout', timeoutFailure('body', 100), { read: true, submit: false, call: false }],
  ['malformed response', malformedResponse(200, 'junk'), { read: true, submit: false, call: false }],
  ['outcome unknown', forSubmission(httpFailure(500, 'boom', undefined)), { read: false, submit: false, call: false }],
  ['aborted', abortedFailure(false), { read: false, submit: false, call: false }],
  ['local file', localFileFailure('/x.png', 'missing'), { read: false, submit: false, call: false }],
  ['download failed', downloadFailure('http://x/y', 'wrong type'), { read: false, submit: false, call: false }],
];
