/**
 * The gateway's published limits, which both sides of the wire share: the client and the analyzer
 * check them before sending anything (a file past them is refused here, at no cost, rather than by
 * the gateway after the upload), and the local gateway enforces them by default. Written by hand.
 */

/** The largest file the gateway takes as an upload: 16 MB by default (its Limits table). */
export const UPLOAD_LIMIT_BYTES = 16 * 1024 * 1024;

/** The limit as the messages name it: `16 MB`. */
export const UPLOAD_LIMIT_TEXT = `${UPLOAD_LIMIT_BYTES / 1024 / 1024} MB`;
