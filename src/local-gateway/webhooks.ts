import type { GatewayClock } from './clock.js';
import type { GatewayStats } from './stats.js';

/** Delays before the 3 retries of a webhook that was not answered 2xx, as the hosted gateway spaces them. */
const RETRY_DELAYS_MS = [1000, 4000, 16000];
const ATTEMPT_TIMEOUT_MS = 10_000;

/** Delivers a finished task's result body to the `X-Webhook-URL` it was submitted with. */
export class WebhookSender {
  private readonly inFlight = new Set<Promise<void>>();

  constructor(
    private readonly clock: GatewayClock,
    private readonly stats: GatewayStats,
  ) {}

  send(url: string, taskId: string, body: unknown): void {
    this.attempt(url, taskId, JSON.stringify(body), 0);
  }

  private attempt(url: string, taskId: string, payload: string, retry: number): void {
    this.stats.webhookAttempt();
    const delivery = fetch(url, {
      method: 'POST',
      headers: {
        'Content-Type': 'application/json',
        'X-Webhook-Task-Id': taskId,
        'User-Agent': 'media-pipeline-local-gateway',
      },
      body: payload,
      redirect: 'manual',
      signal: AbortSignal.timeout(ATTEMPT_TIMEOUT_MS),
    })
      .then(async (response) => {
        await response.body?.cancel();
        return response.ok;
      })
      .catch(() => false)
      .then((ok) => {
        if (ok) return this.stats.webhookSettled(true);
        const delay = RETRY_DELAYS_MS[retry];
        if (delay === undefined) return this.stats.webhookSettled(false);
        this.clock.setTimer(delay, () => this.attempt(url, taskId, payload, retry + 1));
      })
      .finally(() => this.inFlight.delete(delivery));
    this.inFlight.add(delivery);
  }

  /** Waits for the deliveries under way (not for retries still waiting on the clock). */
  async drain(): Promise<void> {
    await Promise.all([...this.inFlight]);
  }
}
