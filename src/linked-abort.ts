import { setMaxListeners } from 'node:events';

/**
 * A signal that aborts with its parent, or alone (a time limit, a sleep that lost a race), and lets
 * go of its parent when released. `AbortSignal.any` would do the first, but on Node 20 each one it
 * makes stays registered with its sources until collected: the run's signal gathered two weak
 * references per batch row, and creating them was a visible part of a task's CPU.
 */
export class LinkedAbort {
  private readonly controller = new AbortController();
  private abortedAlone = false;
  private readonly onParentAbort = () => this.controller.abort(this.parent!.reason);

  constructor(private readonly parent?: AbortSignal) {
    // Every wait of an item listens to it: many listeners are expected.
    setMaxListeners(0, this.controller.signal);
    if (!parent) return;
    // A run's signal has one such listener per row and per item in progress.
    setMaxListeners(0, parent);
    if (parent.aborted) this.controller.abort(parent.reason);
    else parent.addEventListener('abort', this.onParentAbort, { once: true });
  }

  get signal(): AbortSignal {
    return this.controller.signal;
  }

  /** Aborted by `abort`, not by its parent: the time limit passed, say. */
  get abortedHere(): boolean {
    return this.abortedAlone;
  }

  /** Aborts this signal, not its parent. */
  abort(reason?: unknown): void {
    if (this.controller.signal.aborted) return;
    this.abortedAlone = true;
    this.controller.abort(reason);
  }

  /** The work under it ended: the parent no longer tells it. */
  release(): void {
    this.parent?.removeEventListener('abort', this.onParentAbort);
  }
}
