import { statSync } from 'node:fs';

/**
 * The real file system as the analyzer's probe sees it: a regular file's size, a folder as one, or
 * undefined when nothing (or something else) is there. The analyzer does no I/O of its own; the
 * command line (and tests that analyze in-process) hand it this.
 */
export function probeFile(path: string): { size: number; folder?: boolean } | undefined {
  try {
    const info = statSync(path);
    if (info.isDirectory()) return { size: 0, folder: true };
    return info.isFile() ? { size: info.size } : undefined;
  } catch {
    return undefined;
  }
}
