import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { isLearnedDuration, type DurationStore, type LearnedDuration } from '../expected-durations.js';
import { writeAtomically } from './run-store.js';

/**
 * Learned durations kept between runs in `$PIPELINE_HOME/durations/<gateway hash>.json`, one file
 * per gateway, one entry per model. Read once at the start, written once at the end: a later
 * run's figures replace an earlier run's for the models it ran.
 */
export class DurationFile implements DurationStore {
  readonly path: string;
  private readonly learned = new Map<string, LearnedDuration>();

  constructor(
    home: string,
    private readonly gateway: string,
  ) {
    const name = createHash('sha256').update(gateway).digest('hex').slice(0, 16);
    this.path = join(home, 'durations', `${name}.json`);
  }

  async load(): Promise<Record<string, LearnedDuration>> {
    let parsed: unknown;
    try {
      parsed = JSON.parse(readFileSync(this.path, 'utf8'));
    } catch {
      // No file yet, or one cut short: the first guesses serve, as they did before any run.
      return {};
    }
    const models = (parsed as { models?: Record<string, unknown> } | null)?.models ?? {};
    return Object.fromEntries(
      Object.entries(models).filter((entry): entry is [string, LearnedDuration] => isLearnedDuration(entry[1])),
    );
  }

  record(slug: string, learned: LearnedDuration): void {
    this.learned.set(slug, learned);
  }

  async flush(): Promise<void> {
    if (this.learned.size === 0) return;
    const models = { ...(await this.load()), ...Object.fromEntries(this.learned) };
    mkdirSync(join(this.path, '..'), { recursive: true });
    writeAtomically(this.path, `${JSON.stringify({ gateway: this.gateway, models }, null, 2)}\n`);
  }
}
