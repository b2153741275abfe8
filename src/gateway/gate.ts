/**
 * What the client asks before each request it sends. The scheduler's budget implements it; the
 * client does not know how the budget decides.
 */
export interface RequestGate {
  /**
   * Waits until one request may be sent. Call the returned function once its answer, or its failure,
   * is in. Requests wait in the order of their purpose: reads of tasks in flight, then submissions,
   * then the rest.
   */
  acquire(signal?: AbortSignal, purpose?: RequestPurpose): Promise<() => void>;
}

/**
 * What a request is for, as far as its turn goes: reading a task in flight may free its slot, and a
 * submission puts a slot to work; other requests (web tools, text calls, uploads) hold no slot.
 */
export type RequestPurpose = 'task-read' | 'submit' | 'other';

/** No pacing at all: for a gateway without limits. */
export const openGate: RequestGate = { acquire: async () => () => {} };
