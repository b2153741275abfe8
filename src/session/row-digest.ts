import { createHash } from 'node:crypto';

/**
 * The SHA-256 of a batch's rows as the run reads them (inputs after their types and paths are
 * resolved): what a resume, reading the kept batch file again, checks it gets back row for row.
 * One row at a time: a million rows are never one string.
 */
export function rowsDigest(rows: Iterable<Record<string, unknown>>): string {
  const hash = createHash('sha256');
  for (const row of rows) hash.update(`${JSON.stringify(row)}\n`);
  return hash.digest('hex');
}
