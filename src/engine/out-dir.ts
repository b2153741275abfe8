import { copyFile, mkdir, writeFile } from 'node:fs/promises';
import { extname, join } from 'node:path';

const isFileValue = (value: unknown): value is { path: string } =>
  typeof value === 'object' && value !== null && typeof (value as { path?: unknown }).path === 'string';

/**
 * Copies a run's recipe outputs into `dir` under stable names: a resource as `NAME.ext`, a list of
 * them as `NAME-1.ext`, `NAME-2.ext`… (by place: an item that gave none, null, has no file),
 * anything else as `NAME.json`. In a batch (even of one row),
 * each row gets `row-N/`. Answers the files written.
 */
export async function copyOutputs(
  dir: string,
  rows: Array<Record<string, unknown>>,
  batch = rows.length > 1,
): Promise<string[]> {
  const written: string[] = [];
  for (const [index, outputs] of rows.entries()) {
    if (Object.keys(outputs).length === 0) continue;
    const target = batch ? join(dir, `row-${index + 1}`) : dir;
    await mkdir(target, { recursive: true });
    for (const [name, value] of Object.entries(outputs)) {
      const list = Array.isArray(value) ? value : [value];
      // A list's null is an item that was skipped or failed (a per-item if, continue_on_error): the
      // others are still files, named by their place, so NAME-2 is missing where item 2 gave none.
      if (list.some(isFileValue) && list.every((v) => isFileValue(v) || (Array.isArray(value) && v === null))) {
        for (const [n, file] of list.entries()) {
          if (!isFileValue(file)) continue;
          const path = join(target, `${name}${Array.isArray(value) ? `-${n + 1}` : ''}${extname(file.path)}`);
          await copyFile(file.path, path);
          written.push(path);
        }
      } else {
        const path = join(target, `${name}.json`);
        await writeFile(path, `${JSON.stringify(value ?? null, null, 2)}\n`);
        written.push(path);
      }
    }
  }
  return written;
}
