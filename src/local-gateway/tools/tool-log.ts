import type { GatewayClock } from '../clock.js';
import type { GatewayRandom } from '../random.js';

export interface ToolLogEntry {
  id: string;
  tool: 'web-search' | 'web-fetch';
  created_at: number;
  status: 'success' | 'partial' | 'failed';
  http_status: number;
  request: unknown;
  result_count: number;
  failed_count: number;
  duration_ms: number;
}

/** Each team's history of web-search and web-fetch calls, newest first. */
export class ToolLog {
  private readonly entries = new Map<string, ToolLogEntry[]>();

  constructor(
    private readonly clock: GatewayClock,
    private readonly random: GatewayRandom,
  ) {}

  record(team: string, entry: Omit<ToolLogEntry, 'id' | 'created_at'> & { startedAt: number }): void {
    const { startedAt, ...rest } = entry;
    const list = this.entries.get(team) ?? [];
    list.push({ id: `log_${this.random.hex(8)}`, created_at: startedAt, ...rest });
    this.entries.set(team, list);
  }

  list(team: string, limit: number, offset: number) {
    const all = [...(this.entries.get(team) ?? [])].reverse();
    return { logs: all.slice(offset, offset + limit), total: all.length, limit, offset };
  }

  now(): number {
    return this.clock.now();
  }
}
