import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** `.pipeline/runs/<run-id>/`: the journal, the recipe as run, its inputs, outputs/, the log and run.json. */
export interface RunPaths {
  id: string;
  dir: string;
  journal: string;
  recipe: string;
  batch: string;
  outputs: string;
  log: string;
  summary: string;
}

export function runPaths(home: string, id: string): RunPaths {
  const dir = join(home, 'runs', id);
  return {
    id,
    dir,
    journal: join(dir, 'journal.jsonl'),
    recipe: join(dir, 'recipe.yaml'),
    batch: join(dir, 'batch'),
    outputs: join(dir, 'outputs'),
    log: join(dir, 'pipeline.log'),
    summary: join(dir, 'run.json'),
  };
}

/** A sortable, readable id: `20261121-104512-launch-kit-3f9a`. */
export function newRunId(name: string, now: number): string {
  const stamp = new Date(now).toISOString().replace(/[-:]/g, '').replace('T', '-').slice(0, 15);
  return `${stamp}-${name}-${randomBytes(2).toString('hex')}`;
}

export function createRun(home: string, id: string): RunPaths {
  const paths = runPaths(home, id);
  mkdirSync(paths.outputs, { recursive: true });
  return paths;
}

export function runExists(home: string, id: string): boolean {
  return /^[A-Za-z0-9._-]+$/.test(id) && existsSync(runPaths(home, id).journal);
}

/** Writes a file whole or not at all, so a reader never sees half a summary. */
export function writeAtomically(path: string, text: string): void {
  writeFileSync(`${path}.tmp`, text);
  renameSync(`${path}.tmp`, path);
}

export function listRunIds(home: string): string[] {
  const dir = join(home, 'runs');
  if (!existsSync(dir)) return [];
  return readdirSync(dir)
    .filter((id) => existsSync(join(dir, id, 'journal.jsonl')))
    .sort()
    .reverse();
}

export function readSummary(paths: RunPaths): Record<string, unknown> | undefined {
  try {
    return JSON.parse(readFileSync(paths.summary, 'utf8')) as Record<string, unknown>;
  } catch {
    return undefined;
  }
}
