import { statSync } from 'node:fs';

/**
 * The real file system as the analyzer's probe sees it: a regular file's size, or undefined when
 * the path is missing or not a file. The analyzer does no I/O of its own; the command line (and
 * tests that analyze in-process) hand it this.
 */
export function probeFile(path: string): { size: number } | undefined {
  try {
    const info = statSync(path);
    return info.isFile() ? { size: info.size } : undefined;
  } catch {
    return undefined;
  }
}
