import { randomBytes } from 'node:crypto';
import { readdirSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';

/**
 * Temporary files of a write-then-rename: `<base>.<pid>.<random>.tmp`. The writer's process id is
 * in the name so that a later process can tell a leftover of a killed writer (its process is gone)
 * from a write still under way in a live one, and remove only the first.
 */
const TEMP_NAME = /\.(\d+)\.[0-9a-f]+\.tmp$/;

/** A day: a process id may be reused, so a temp file this old is a leftover whoever holds its pid now. */
const ABANDONED_AFTER_MS = 24 * 60 * 60 * 1000;

/** A temp name in `dir` no other writer, in this process or another, picks at the same time. */
export const tempName = (dir: string, base: string): string =>
  join(dir, `${base}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`);

/** Whether a process of this id runs on this machine (one of another user's counts). */
export function processIsAlive(pid: number): boolean {
  if (pid === process.pid) return true;
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: the process exists but belongs to someone else.
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Removes the temp files in `dir` that a killed writer left: those whose process is gone, and any
 * older than a day. A temp file of a live writer stays. Answers how many were removed; a folder
 * that cannot be read removes nothing.
 */
export function removeLeftoverTemps(dir: string, now: number = Date.now()): number {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return 0;
  }
  let removed = 0;
  for (const name of names) {
    const match = TEMP_NAME.exec(name);
    if (!match) continue;
    const path = join(dir, name);
    const abandoned = !processIsAlive(Number(match[1])) || now - mtimeOf(path) > ABANDONED_AFTER_MS;
    if (!abandoned) continue;
    rmSync(path, { force: true });
    removed++;
  }
  return removed;
}

function mtimeOf(path: string): number {
  try {
    return statSync(path).mtimeMs;
  } catch {
    return Number.POSITIVE_INFINITY;
  }
}
