/**
 * Counters that tests and benchmarks read from `GET /__emulator/stats`.
 * The shape is fixed by the foundation issue; extra keys are additions, never renames.
 */
export class GatewayStats {
  private total = 0;
  private readonly byRoute = new Map<string, number>();
  private readonly byStatus = new Map<string, number>();
  private readonly byTeam = new Map<string, number>();
  private rateLimited = 0;
  private readonly rateLimitedByTeam = new Map<string, number>();
  private readonly submitted = new Map<string, number>();
  private readonly finished = { success: 0, failed: 0 };
  private readonly running = new Map<string, number>();
  private readonly maxRunning = new Map<string, number>();
  private readonly webhooks = { delivered: 0, failed: 0, attempts: 0 };
  private readonly faultsInjected = new Map<string, number>();

  recordRequest(route: string, status: number, team: string | undefined): void {
    this.total++;
    bump(this.byRoute, route);
    bump(this.byStatus, String(status));
    if (team !== undefined) bump(this.byTeam, team);
    if (status === 429) {
      this.rateLimited++;
      if (team !== undefined) bump(this.rateLimitedByTeam, team);
    }
  }

  taskSubmitted(slug: string): void {
    bump(this.submitted, slug);
  }

  taskStarted(team: string): void {
    const now = bump(this.running, team);
    if (now > (this.maxRunning.get(team) ?? 0)) this.maxRunning.set(team, now);
  }

  taskEnded(team: string, outcome: 'success' | 'failed', wasRunning: boolean): void {
    if (wasRunning) this.running.set(team, (this.running.get(team) ?? 1) - 1);
    this.finished[outcome]++;
  }

  webhookAttempt(): void {
    this.webhooks.attempts++;
  }

  webhookSettled(delivered: boolean): void {
    if (delivered) this.webhooks.delivered++;
    else this.webhooks.failed++;
  }

  faultInjected(kind: string): void {
    bump(this.faultsInjected, kind);
  }

  snapshot(balances: Record<string, number>) {
    return {
      requests: {
        total: this.total,
        by_route: Object.fromEntries(this.byRoute),
        by_status: Object.fromEntries(this.byStatus),
        by_team: Object.fromEntries(this.byTeam),
      },
      rate_limited: this.rateLimited,
      rate_limited_by_team: Object.fromEntries(this.rateLimitedByTeam),
      tasks: {
        submitted: Object.fromEntries(this.submitted),
        finished: { ...this.finished },
        running: Object.fromEntries(this.running),
        max_running: Object.fromEntries(this.maxRunning),
      },
      webhooks: { ...this.webhooks },
      faults_injected: Object.fromEntries(this.faultsInjected),
      balances,
    };
  }
}

export type GatewayStatsSnapshot = ReturnType<GatewayStats['snapshot']>;

function bump(map: Map<string, number>, key: string): number {
  const next = (map.get(key) ?? 0) + 1;
  map.set(key, next);
  return next;
}
