const UNITS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/**
 * A duration as people write it — `90s`, `15m`, `1h30m`, `500ms`, `7d` — or a number of milliseconds,
 * converted to milliseconds once, at the edge. Undefined when the text is not a duration.
 */
export function parseDuration(value: string | number): number | undefined {
  if (typeof value === 'number') return Number.isFinite(value) && value >= 0 ? value : undefined;
  const text = value.trim();
  if (/^\d+(\.\d+)?$/.test(text)) return Number(text);
  const parts = [...text.matchAll(/(\d+(?:\.\d+)?)(ms|s|m|h|d)/g)];
  if (parts.length === 0 || parts.map((p) => p[0]).join('') !== text) return undefined;
  return parts.reduce((total, [, amount, unit]) => total + Number(amount) * UNITS[unit!]!, 0);
}

export function formatDuration(ms: number): string {
  if (ms < 1000) return `${Math.round(ms)}ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)}s`;
  const minutes = Math.floor(ms / 60_000);
  return `${minutes}m${Math.round((ms % 60_000) / 1000)}s`;
}

/**
 * A time limit or a wait as a recipe writes one, in its largest whole unit: `30m`, `90s`, `500ms`,
 * `2h` (a limit of 500 ms is not `1s`, nor a backoff of 100 ms `0s`).
 */
export function formatLimit(ms: number): string {
  const whole = Math.round(ms);
  for (const [unit, size] of [
    ['d', 86_400_000],
    ['h', 3_600_000],
    ['m', 60_000],
    ['s', 1000],
  ] as const)
    if (whole >= size && whole % size === 0) return `${whole / size}${unit}`;
  return `${whole}ms`;
}
