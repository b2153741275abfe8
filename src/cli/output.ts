import { relative, resolve } from 'node:path';
import { cliIo, secretsOfInvocation } from './io.js';
/** Tables for people, JSON for scripts; every line passes the secret filter on its way out. */

/** Registers values (the API key) that must never be printed. */
export function registerSecret(value: string | undefined): void {
  if (value && value.length >= 4) secretsOfInvocation().add(value);
}

export function redact(text: string): string {
  let out = text;
  for (const secret of secretsOfInvocation()) out = out.split(secret).join('***');
  return out;
}

export function printLine(text = ''): void {
  cliIo().stdout.write(`${redact(text)}\n`);
}

export function printError(text: string): void {
  cliIo().stderr.write(`${redact(text)}\n`);
}

export function printJson(value: unknown): void {
  printLine(JSON.stringify(value, null, 2));
}

/** Left-aligned columns; a long last column is not padded. */
export function printTable(headers: string[], rows: Array<Array<string | number | undefined>>): void {
  const cells = rows.map((row) => row.map((cell) => (cell === undefined ? '' : String(cell))));
  // A loop, not Math.max(...column): a column is spread as arguments, and `plan` of 190,000 steps,
  // one row each, overflowed the stack.
  const widths = headers.map((header, i) =>
    cells.reduce((widest, row) => Math.max(widest, row[i]!.length), header.length),
  );
  const format = (row: string[]) =>
    row
      .map((cell, i) => (i === row.length - 1 ? cell : cell.padEnd(widths[i]!)))
      .join('  ')
      .trimEnd();
  printLine(format(headers));
  for (const row of cells) printLine(format(row));
}

/** A path as the user would type it: relative to the working folder when inside it, else absolute. */
export const shown = (path: string) => {
  const { cwd } = cliIo();
  const rel = relative(cwd, resolve(cwd, path));
  return rel.startsWith('..') ? resolve(cwd, path) : rel;
};
