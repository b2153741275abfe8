/**
 * What the client asks before each request it sends. The scheduler's budget implements it; the
 * client does not know how the budget decides.
 */
export interface RequestGate {
  /** Waits until one request may be sent. Call the returned function once its answer, or its failure, is in. */
  acquire(signal?: AbortSignal): Promise<() => void>;
}

/** No pacing at all: for a gateway without limits. */
export const openGate: RequestGate = { acquire: async () => () => {} };
